"""PLS016: `pl.run_scoped` allocating in a multithreaded kernel without `collective_axes=`."""

from __future__ import annotations

from typing import Any, Iterator

from astroid import nodes

from .. import fixes, values as v
from ..api import Kind
from ..context import Context
from ..findings import Applicability, Finding, Fix
from ..solve import Concretizer
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .call_rule import Arguments, CallRule
from .kernels import mosaic_kernels_running


class RunScopedThreadCollective(CallRule):
    """## What it does
    Flags `pl.run_scoped(f, *types, **types)` (also as `functools.partial(pl.run_scoped,
    ...)` decorator) that allocates SMEM, TMEM or barriers inside a `plgpu.kernel` launched
    with `num_threads=` (two or more) and `thread_name=`, without
    `collective_axes=<thread_name>`.

    ## Why is this bad?
    In a multithreaded kernel every warpgroup runs the body; Mosaic GPU only supports
    allocations that all threads share, which `collective_axes` says. JAX checks this only
    when the kernel is lowered for the GPU.

    ## Example
    ```python
    pl.run_scoped(body, plgpu.TMEM((128, 128), jnp.float32))
    ```

    Use instead:
    ```python
    pl.run_scoped(body, plgpu.TMEM((128, 128), jnp.float32), collective_axes="wg")
    ```

    ## Fix safety
    Adding `collective_axes=<thread_name>` is unsafe: all threads then share one allocation,
    which the body may not expect.

    ## JAX message
    `Only thread-collective allocations are supported in multithreaded kernels. Hint: add
    collective_axes=wg to your run_scoped ...` (NotImplementedError when lowering, in every
    supported version).
    """

    code = "PLS016"
    name = "run-scoped-thread-collective"
    summary = "pl.run_scoped allocating in a multithreaded kernel without collective_axes="
    jax_message = "Only thread-collective allocations are supported in multithreaded kernels."
    triggers = (b"run_scoped",)
    identifiers = frozenset({"run_scoped"})
    lowering = True
    kinds = (Kind.RUN_SCOPED, Kind.PARTIAL)
    VALID = (examples.PLS016_VALID,)
    INVALID = (Invalid(examples.PLS016_INVALID),)

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call in ctx.flow.sites(*self.kinds):
            args = _run_scoped_arguments(ctx, call)
            if args is not None:
                yield from self._call(ctx, args)

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        kernels = mosaic_kernels_running(ctx, args.call)
        if kernels is None:
            return UNKNOWN
        types = [name for name in args.written if name != "collective_axes"]
        if not any(_allocates(args.value(conc, name)) for name in types):
            return None
        axes = args.value(conc, "collective_axes")
        axes = (axes,) if isinstance(axes, str) else axes
        if not isinstance(axes, (tuple, list)):
            return UNKNOWN
        for kernel in kernels:
            threads = _threads(ctx, conc, kernel)
            if threads is UNKNOWN:
                return UNKNOWN
            if threads is not None and not axes:
                return (kernel, threads)
        return None

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        kernel, (count, name) = detail
        return ("Only thread-collective allocations are supported in multithreaded kernels: the "
                f"plgpu.kernel at {ctx.where(kernel)} has num_threads={count}, thread_name={name!r}; "
                f"add collective_axes={name!r}")

    def fixes(self, ctx: Context, args: Arguments, detail: Any) -> tuple[Fix, ...]:
        name = detail[1][1]
        edits = fixes.set_keyword(ctx, args.call, "collective_axes", repr(name))
        return (Fix(f"Add collective_axes={name!r}", Applicability.UNSAFE, edits),) if edits else ()


def _run_scoped_arguments(ctx: Context, call: nodes.Call) -> Arguments | None:
    """`run_scoped(f, *types, collective_axes=(), **types)` or `partial(run_scoped, ...)`:
    the allocations by a name of ours (`#1`, or the keyword) and `collective_axes`."""
    flow = ctx.flow
    positional = call.args[1:]
    if flow.api_kind(call) is Kind.PARTIAL:
        if not call.args or flow.callee_kind(call.args[0]) is not Kind.RUN_SCOPED:
            return None
        positional = call.args[2:] if len(call.args) > 1 else []
    keywords = {kw.arg: kw.value for kw in call.keywords or ()}
    if None in keywords or any(isinstance(arg, nodes.Starred) for arg in call.args):
        return None
    written = {f"#{index}": node for index, node in enumerate(positional)}
    written.update(keywords)
    return Arguments(ctx, call, written, {"collective_axes": ()})


def _allocates(value: Any) -> bool:
    """An SMEM / TMEM allocation or a barrier, also inside a pytree (not semaphores, WGMMA
    accumulators or anything we do not model)."""
    if isinstance(value, (tuple, list)):
        return any(_allocates(item) for item in value)
    if isinstance(value, dict):
        return any(_allocates(item) for item in value.values())
    if isinstance(value, v.Ref):
        return value.alloc.space in ("SMEM", "TMEM")
    return isinstance(value, (v.UnionRef, v.Barrier))


def _threads(ctx: Context, conc: Concretizer, kernel: nodes.Call) -> tuple[int, str] | None | Any:
    """(num_threads, thread_name) of a kernel launched with two or more threads; None for a
    single thread."""
    keywords = {kw.arg: kw.value for kw in kernel.keywords or ()}
    if None in keywords:
        return UNKNOWN
    if "num_threads" not in keywords:
        return None
    count = conc.value(ctx.flow.evaluate(keywords["num_threads"]))
    name = conc.value(ctx.flow.evaluate(keywords.get("thread_name")))
    if count is None:
        return None
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(name, str):
        return UNKNOWN
    return (count, name) if count >= 2 else UNKNOWN
