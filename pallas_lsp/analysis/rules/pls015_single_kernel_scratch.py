"""PLS015: a single allocation given as `plgpu.kernel(scratch_types=...)`, which JAX ignores."""

from __future__ import annotations

import dataclasses

from typing import Any

from astroid import nodes

from .. import api, fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace import objects as o
from ..trace.pick import Picker
from ..trace.stubs import ignored_scratch
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import KernelRule, KernelRun, scratch_value
from .site_rule import written


class SingleKernelScratch(KernelRule):
    """## What it does
    Flags `plgpu.kernel(body, ..., scratch_types=plgpu.TMEM(...))(*operands)`: a single
    allocation (TMEM, SMEM, a RefUnion, a barrier), a dict's `keys()`, `values()` or
    `items()`, an iterator (`map(...)`, a generator expression, `reversed(...)`,
    `itertools.chain(...)`, `filter(...)`), or an instance of a class that is neither (a
    dataclass, registered as a pytree or not), where a
    sequence or a mapping is expected, when the body has a parameter left
    for it (more required parameters than operands and
    outputs). The operands are counted where the kernel is applied, directly or later (a
    decorated body, a kernel bound to a name, `jax.jit(kernel)(x)`); a kernel never applied
    in the analysed code is not reported. The finding goes on the first application, where
    JAX traces the body and raises (or, for a body that passes its refs on, `def
    wrapper(*refs, **kwargs): return fn(*refs, **kwargs)`, on that call, where `fn` raises;
    a bound method's parameters are counted after its `self`); the fix edits `scratch_types=`.

    ## Why is this bad?
    `plgpu.kernel` passes scratch refs to the body only from a sequence (positionally) or a
    mapping (by name); anything else is silently ignored. The body then misses the ref, and
    JAX's error names the body's parameter, not the `scratch_types=` that dropped it.

    ## Example
    ```python
    plgpu.kernel(kernel, out_type=..., scratch_types=plgpu.TMEM((128, 128), jnp.float32))
    ```

    Use instead:
    ```python
    plgpu.kernel(kernel, out_type=..., scratch_types=[plgpu.TMEM((128, 128), jnp.float32)])
    ```

    ## Fix safety
    Putting the allocation in a list is safe when the body misses exactly one parameter: that
    parameter then receives it. A dict's view gets no fix: the dict itself binds its refs by
    name, a list of its values by position, and which one the body wants is not told; nor does
    an iterator (a list of what it yields is a different program: its items may be any count),
    nor an object (a list holding it gives the body the object, flattened as JAX flattens it).

    ## JAX message
    `kernel() missing 1 required positional argument: 'acc_tmem'` (TypeError when the kernel
    is traced, in every supported version).
    """

    code = "PLS015"
    name = "single-kernel-scratch"
    summary = "A single allocation as plgpu.kernel's scratch_types, which JAX ignores"
    jax_message = "missing 1 required positional argument"
    jax_exception = "TypeError"
    triggers = (b"scratch_",)
    identifiers = frozenset({"scratch_types", "scratch_shapes"})
    VALID = (examples.PLS015_VALID,)
    INVALID = (Invalid(examples.PLS015_INVALID, fixed=examples.PLS015_VALID),)

    def problem(self, ctx: Context, run: KernelRun, pick: Picker) -> Any:
        value = pick.pick(scratch_value(run))
        if not ignored_scratch(value):
            return None if value is not UNKNOWN else UNKNOWN
        found = _missing_parameters(ctx, pick, run)
        if found is UNKNOWN:
            return UNKNOWN
        missing, forwarding = found
        if not missing:
            return None
        what = value.what if isinstance(value, (o.NotSequence, o.Generator)) else (
            f"an instance of {value.cls.node.name}" if isinstance(value, o.Instance) else None)
        application = _applications(ctx, run)[0]
        if forwarding is not None and forwarding.root() is application.node.root():
            application = dataclasses.replace(application, node=forwarding)
        return (what, tuple(missing), application)

    def reported(self, run: KernelRun, detail: Any) -> Site:
        # where JAX raises: the application, where it traces the body, or the call in a wrapper
        # body that passes the refs on to the function missing one
        application: Site = detail[2]
        return application

    def message(self, ctx: Context, run: KernelRun, detail: Any) -> str:
        name = "scratch_types" if run.site.arguments.get("scratch_types") is not None else "scratch_shapes"
        view, missing, _ = detail
        what = view or "a single allocation"
        return (f"{name} is {what}, not a sequence or a mapping: plgpu.kernel "
                f"ignores it, and the body misses {', '.join(repr(name) for name in missing)}")

    def fixes(self, ctx: Context, run: KernelRun, detail: Any) -> tuple[Fix, ...]:
        name = "scratch_types" if run.site.arguments.get("scratch_types") is not None else "scratch_shapes"
        scratch = written(run.site, name)
        view, missing, _ = detail
        if scratch is None or view:  # (the dict binds by name, its values by position: which one is meant?)
            return ()
        edits = fixes.wrap(ctx, scratch, "[", "]")
        safe = Applicability.SAFE if len(missing) == 1 else Applicability.UNSAFE
        return (Fix("Put the allocation in a list", safe, edits, preferred=len(missing) == 1),) if edits else ()


def _missing_parameters(ctx: Context, pick: Picker, run: KernelRun) -> tuple[list[str], nodes.Call | None] | Any:
    """The body's required parameters left after `plgpu.kernel(body, ...)(*operands)` binds
    operands and outputs, and the call passing them on when the body is a `*refs` wrapper;
    UNKNOWN when any of that cannot be counted.  The operands are those of every application
    of the kernel object the trace saw (`plgpu.kernel(...)(x)`, or the kernel bound to a name,
    a decorator's result, `jax.jit(kernel)(x)`): all must agree."""
    operands = _operand_count(ctx, run)
    body = pick.pick(run.site.arguments.get("body"))
    outputs = _outputs(pick, run)
    if operands is UNKNOWN or outputs is UNKNOWN:
        return UNKNOWN
    skip = 0
    if isinstance(body, o.Instance):  # a callable object: its __call__, after `self`
        method = _class_call(body.cls)
        if method is None:
            return UNKNOWN
        body, skip = method, 1
    elif isinstance(body, o.Bound) and isinstance(body.func, o.Closure):  # a bound method: after `self`
        body, skip = body.func, 1
    forwarding: nodes.Call | None = None
    named: frozenset[str] = frozenset()
    for _ in range(3 if isinstance(body, o.Closure) and not skip else 0):
        forwarded = o.forwarded_to(body)  # (a decorator's `*refs` wrapper: what it calls binds them)
        if forwarded is None:
            break
        body, forwarding, more = forwarded
        named |= more
    if not isinstance(body, o.Closure) or not isinstance(body.node, nodes.FunctionDef):
        return UNKNOWN
    arguments = body.node.args
    if arguments.vararg or arguments.args is None:
        return UNKNOWN
    params = ((arguments.posonlyargs or []) + arguments.args)[skip:]
    required = [arg.name for arg in params[: len(params) - len(arguments.defaults or [])]]
    return [name for name in required[operands + outputs:] if name not in named], forwarding


def _class_call(cls: Any) -> o.Closure | None:
    """The class's `__call__` (the first along its bases that defines one)."""
    for klass in cls.mro() if isinstance(cls, o.ClassObj) else ():
        if "__call__" in klass.env.vars:
            method = klass.env.vars["__call__"]
            return method if isinstance(method, o.Closure) else None
    return None


def _applications(ctx: Context, run: KernelRun) -> list[Site]:
    """The sites applying the kernel object `run` makes, in the order the trace met them: the
    kernel's own site for `plgpu.kernel(...)(x)`, else the "kernel_apply" sites naming it."""
    kernel = run.node
    parent = kernel.parent
    if isinstance(parent, nodes.Call) and parent.func is kernel:
        return [run.site]
    return [site for site in ctx.trace.sites("kernel_apply") if site.arguments.get("kernel") is kernel]


def _operand_count(ctx: Context, run: KernelRun) -> int | Any:
    calls = [site.node if site is not run.site else run.node.parent for site in _applications(ctx, run)]
    if not calls:
        return UNKNOWN
    counts = set()
    for call in calls:
        if not isinstance(call, nodes.Call) or call.keywords or any(
                isinstance(arg, nodes.Starred) for arg in call.args):
            return UNKNOWN
        counts.add(len(call.args))
    return counts.pop() if len(counts) == 1 else UNKNOWN


def _outputs(pick: Picker, run: KernelRun) -> int | Any:
    """How many output refs the body gets: one per item of a tuple or list `out_type`, one
    for a `jax.ShapeDtypeStruct(...)`, none without `out_type`."""
    arguments = run.site.arguments
    value = arguments.get("out_type")
    if value is None:
        value = arguments.get("out_shape")
    count = api.output_refs(pick.pick(value))
    return UNKNOWN if count is None else count
