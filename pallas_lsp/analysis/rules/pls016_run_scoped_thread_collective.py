"""PLS016: `pl.run_scoped` allocating in a multithreaded kernel without `collective_axes=`."""

from __future__ import annotations

from typing import Any

from astroid import nodes

from .. import fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace import objects as o
from ..trace.pick import Picker
from ..trace.stubs import tree_children
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import fails_allocating, run_of, threads_of, trace_raises
from .site_rule import SiteRule


class RunScopedThreadCollective(SiteRule):
    """## What it does
    Flags `pl.run_scoped(f, *types, **types)` (also as `functools.partial(pl.run_scoped,
    ...)` decorator, and `@pl.with_scoped(*types, **types)`, which runs its function in one)
    that allocates SMEM, TMEM or barriers inside a `plgpu.kernel` launched with `num_threads=`
    and `thread_name=` (a thread name makes the kernel multithreaded to JAX, even with
    `num_threads=1`), without `collective_axes=<thread_name>` (`collective_axes=None` is
    none: JAX takes it as `(None,)`). Also flags `collective_axes=` naming anything but the
    kernel's thread axis alone (a cluster or grid axis, the thread axis with another, any axis
    in a kernel without threads), which Mosaic GPU refuses whatever the scope allocates.
    JAX gives no source line: the
    finding goes on the `pl.run_scoped` call, the one to fix (in a helper module, on that
    module's line), or on the call of the function `pl.with_scoped` decorated, whose fix goes
    on the decorator. A kernel whose TMEM allocations JAX refuses first (PLS013, PLS014) is
    not flagged here.

    A kernel JAX only traces is never lowered, and is not reported here: one that a function
    given to `jax.make_jaxpr` or `jax.eval_shape` builds and applies. Nor is a kernel JAX
    surely fails to build or trace:
    one of its MMAs raises (its shapes, scales, operand spaces or barrier: PLS018, PLS011,
    PLS009, PLS010), a `tcgen05_commit_arrive`'s barrier does (PLS010), or the constructor of
    an allocation it is given or makes (a TMEM's checks, PLS006, PLS005, PLS004, PLS019; an
    SMEM given a TMEM-only argument, PLS003; a RefUnion of spaces JAX does not alias,
    PLS007). A kernel run by JAX's interpreter (`interpret=plgpu.InterpretParams(...)`) is
    checked too: the interpreter refuses such allocations as Mosaic GPU does.

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
    Adding `collective_axes=<thread_name>` (or putting it in place of other axes) is unsafe:
    all threads then share one allocation, which the body may not expect; so is removing
    axes from a kernel without threads (the scope is then its block's own).

    ## JAX message
    `Only thread-collective allocations are supported in multithreaded kernels. Hint: add
    collective_axes=wg to your run_scoped ...` (NotImplementedError when lowering, in every
    supported version); with `collective_axes=None` or other axes: `Only thread-collective
    allocations are supported in run_scoped.` (ValueError); in an interpreted kernel: `Scoped allocation must
    have the thread axis in its collective axes.` (ValueError).
    """

    code = "PLS016"
    name = "run-scoped-thread-collective"
    summary = "pl.run_scoped allocating in a multithreaded kernel without collective_axes=, or naming other axes"
    jax_message = "Only thread-collective allocations are supported in multithreaded kernels."
    triggers = (b"run_scoped", b"with_scoped")
    identifiers = frozenset({"run_scoped", "with_scoped"})
    lowering = True
    kinds = ("run_scoped",)
    VALID = (examples.PLS016_VALID,)
    INVALID = (Invalid(examples.PLS016_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        run = run_of(ctx, site)
        if run is None:
            return UNKNOWN
        if run.site.traced_only or trace_raises(ctx, pick, run):
            return None  # (JAX only traces it, or stops when tracing: the kernel is never lowered, nor interpreted)
        axes = _axes(pick.pick(site.arguments.get("collective_axes")))
        threads = threads_of(pick, run)
        if axes is UNKNOWN or threads is UNKNOWN:
            return UNKNOWN
        thread_axis = threads[1] if threads else None
        # Other axes than the thread axis alone: Mosaic GPU refuses the scope before it looks at
        # what it allocates (JAX's interpreter is not known to refuse more than a missing one)
        other = bool(axes) and axes != (thread_axis,)
        if other:
            interpreted = pick.truth(run.site.arguments.get("interpret"), free=True)
            if interpreted is UNKNOWN:
                return UNKNOWN
            other = not interpreted
        if not other:
            if threads is None or thread_axis in axes:
                return None
            allocates = _allocates(pick, (site.arguments.get("types"), site.arguments.get("kw_types")))
            if allocates is not True:
                return allocates
        stops = fails_allocating(pick, run)
        if stops is not False:
            return None if stops is True else UNKNOWN  # the kernel's TMEM stops JAX first
        return (run.node, threads, run.api, axes if other else None)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        kernel, threads, api_name, axes = detail
        where = f"the {api_name} at {ctx.where(kernel)}"
        if axes is None:
            count, name = threads
            return ("Only thread-collective allocations are supported in multithreaded kernels: "
                    f"{where} has num_threads={count}, thread_name={name!r}; add collective_axes={name!r}")
        given = axes[0] if len(axes) == 1 else axes
        if threads is None:
            return (f"Only thread-collective allocations are supported in run_scoped: {where} has no "
                    f"threads, and collective_axes={given!r} names an axis; remove it")
        name = threads[1]
        return (f"Only thread-collective allocations are supported in run_scoped: collective_axes={given!r} "
                f"is not the thread axis of {where} (thread_name={name!r}); use collective_axes={name!r}")

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        threads = detail[1]
        decorator = site.arguments.get("decorator")  # (`@pl.with_scoped(...)`: called elsewhere)
        call = decorator if isinstance(decorator, nodes.Call) else site.node
        if threads is None:
            edits = fixes.remove_keyword(ctx, call, "collective_axes")
            return (Fix("Remove collective_axes", Applicability.UNSAFE, edits),) if edits else ()
        name = threads[1]
        edits = fixes.set_keyword(ctx, call, "collective_axes", repr(name))
        verb = "Add" if detail[3] is None else "Use"
        return (Fix(f"{verb} collective_axes={name!r}", Applicability.UNSAFE, edits),) if edits else ()


def _axes(value: Any) -> Any:
    """`collective_axes` as `pl.run_scoped` makes it a tuple (one name: a tuple of it, None
    too); UNKNOWN unless each is a name or None."""
    axes = value if isinstance(value, tuple) else (value,)
    return axes if all(axis is None or isinstance(axis, str) for axis in axes) else UNKNOWN


def _allocates(pick: Picker, value: Any) -> Any:
    """An SMEM / TMEM allocation or a barrier, also inside a pytree (not semaphores, WGMMA
    accumulators or anything we do not model): True, False or UNKNOWN."""
    item = pick.pick(value)
    children = tree_children(item)
    if children is not None:
        results = [_allocates(pick, element) for element in children]
        if True in results:
            return True
        return UNKNOWN if UNKNOWN in results else False
    ref = o.base_ref(item)
    if isinstance(ref, o.Member):
        ref = ref.ref
    if isinstance(ref, o.Alloc):
        return ref.space in ("SMEM", "TMEM")
    if isinstance(ref, (o.Union, o.Barrier)):
        return True
    return False
