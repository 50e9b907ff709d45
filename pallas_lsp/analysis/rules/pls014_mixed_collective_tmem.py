"""PLS014: collective and non-collective TMEM allocated by one kernel."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..findings import Severity
from ..trace import Site
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import (MOSAIC_KERNEL, PALLAS_CALL, PALLAS_CALL_CONFIRMED, PALLAS_KERNEL, Allocation, KernelRule, KernelRun, allocation_site,
                      describe_refs, fails_tracing_first, tmem_allocations, unknown_barrier_axis, lowered)


class MixedCollectiveTmem(KernelRule):
    """## What it does
    Flags a `plgpu.kernel(...)` (or a `pl.kernel(..., mesh=plgpu.Mesh(...))`) that allocates
    both collective and non-collective TMEM, in its scratch or with `pl.run_scoped` in its
    body (also `functools.partial(pl.run_scoped, ...)` and helper functions or modules that
    call it); RefUnions count as one allocation.
    Each run of a kernel is judged on its own: a factory that builds a collective and a
    non-collective instance is not mixing anything. A kernel whose collective MMA uses one
    of the non-collective allocations is left to PLS001: JAX stops there when tracing, and
    making that allocation collective resolves both.

    Also in a `pl.pallas_call`'s `scratch_shapes` (a warning there, as PLS013's: jax 0.12
    cannot lower `pallas_call` without a GPU, so only jax 0.10.2 confirms it).

    JAX gives no source line for this error. The finding goes on the minority side (on a
    tie, the side that disagrees with the first allocation): its first TMEM allocation in
    the scratch (the `plgpu.TMEM(...)` call, or, when a helper makes it, the call in the code
    building the kernel that leads there), else the `pl.run_scoped` call that allocates it
    (or the call of the kernel's own file that leads to a helper making it).

    A kernel JAX only traces is never lowered, and is not reported here: one that a function
    given to `jax.make_jaxpr` or `jax.eval_shape` builds and applies. Nor is a kernel JAX
    surely fails to build or trace:
    one of its MMAs raises (its shapes, scales, operand spaces or barrier: PLS018, PLS011,
    PLS009, PLS010), a `tcgen05_commit_arrive`'s barrier does (PLS010), or the constructor of
    an allocation it is given or makes (a TMEM's checks, PLS006, PLS005, PLS004, PLS019; an
    SMEM given a TMEM-only argument, PLS003; a RefUnion of spaces JAX does not alias,
    PLS007). Nor is a kernel
    run by an interpreter (`interpret=True`, `interpret=plgpu.InterpretParams(...)`), which
    Mosaic GPU never lowers.

    ## Why is this bad?
    A kernel's Tensor Memory is allocated either for the pair of blocks of a cluster or for
    each block alone, never both. JAX checks this only when the kernel is lowered for the
    GPU, even for allocations the kernel never uses.

    ## Example
    ```python
    scratch_types=[
        plgpu.TMEM((128, 128), jnp.float32, collective=True),
        plgpu.TMEM((128, 128), jnp.float32),
    ]
    ```

    Use instead:
    ```python
    scratch_types=[
        plgpu.TMEM((128, 128), jnp.float32, collective=True),
        plgpu.TMEM((128, 128), jnp.float32, collective=True),
    ]
    ```

    ## Fix safety
    There is no fix: which side is right depends on the MMAs that use the allocations.

    ## JAX message
    `Can't mix collective and non-collective TMEM allocations within the same kernel.` (when
    lowering, in every supported version).
    """

    code = "PLS014"
    name = "mixed-collective-tmem"
    summary = "Collective and non-collective TMEM allocated by one kernel"
    jax_message = "Can't mix collective and non-collective TMEM allocations within the same kernel."
    triggers = (b"collective",)
    identifiers = frozenset({"TMEM"})
    lowering = True
    in_own_file = True
    apis = (MOSAIC_KERNEL, PALLAS_KERNEL, PALLAS_CALL)  # (Mosaic GPU's lowering checks them alike)
    VALID = (examples.PLS014_VALID,)
    INVALID = (Invalid(examples.PLS014_INVALID),)

    def problem(self, ctx: Context, run: KernelRun, pick: Picker) -> Any:
        lowers = lowered(ctx, pick, run)
        if lowers is not True:  # (never lowered: nothing here is checked)
            return UNKNOWN if lowers is UNKNOWN else None
        allocations = tmem_allocations(pick, run)
        if allocations is UNKNOWN:
            return UNKNOWN
        barrier = unknown_barrier_axis(pick, run)
        if barrier is not None:  # JAX stops earlier, at the cluster barrier (PLS012)
            return None if barrier is not UNKNOWN else UNKNOWN
        collective = [allocation for allocation in allocations if allocation.collective]
        plain = [allocation for allocation in allocations if not allocation.collective]
        if not collective or not plain or fails_tracing_first(pick, run, plain):
            return None
        return (tuple(collective), tuple(plain), allocations[0].collective)

    def reported(self, run: KernelRun, detail: Any) -> Site:
        """The minority side (on a tie, the side that disagrees with the first allocation):
        its first allocation in the scratch (`allocation_site`), else its `pl.run_scoped`."""
        collective: tuple[Allocation, ...]
        plain: tuple[Allocation, ...]
        collective, plain, first = detail
        minority = collective if len(collective) < len(plain) or (
            len(collective) == len(plain) and not first) else plain
        in_scratch = [allocation for allocation in minority if allocation.by is None]
        if in_scratch:
            return allocation_site(run, in_scratch[0])
        return minority[0].by or run.site

    def same_problem(self, ctx: Context, run: KernelRun, detail: Any) -> Any:
        return True  # one finding per kernel (and place), whatever each setting allocates

    def message(self, ctx: Context, run: KernelRun, detail: Any) -> str:
        collective, plain, _ = detail
        where = "" if self.reported(run, detail).node is run.node else f" (the {run.api} at {ctx.where(run.node)})"
        confirmed = f" ({PALLAS_CALL_CONFIRMED})" if run.api == PALLAS_CALL else ""
        return ("Can't mix collective and non-collective TMEM allocations within the same kernel"
                f"{where}: collective: {describe_refs(ctx, list(collective))}; "
                f"not collective: {describe_refs(ctx, list(plain))}{confirmed}")

    def severity_of(self, run: KernelRun, detail: Any) -> Severity:
        return Severity.WARNING if run.api == PALLAS_CALL else self.severity  # (as PLS013 there)
