"""PLS017: a tcgen05 op whose collective-ness disagrees with the kernel's TMEM."""

from __future__ import annotations

from typing import Any


from ..context import Context
from ..findings import Severity
from ..trace import Site
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import (MOSAIC_KERNEL, PALLAS_KERNEL, describe_refs, fails_allocating, fails_tracing_first,
                      lowering_semantics, run_of, scratch_value, tmem_allocations, lowered, unknown_op_axis)
from .site_rule import SiteRule, api_function


class InconsistentCollectiveOp(SiteRule):
    """## What it does
    Flags a `plgpu.tcgen05_mma`, `plgpu.tcgen05_commit_arrive` or `plgpu.async_copy_*_to_tmem`
    whose `collective_axis` disagrees with the TMEM its `plgpu.kernel` (or `pl.kernel` on a
    `plgpu.Mesh` without scratch operands, which jax 0.12 does not lower) allocates: an op
    without `collective_axis` in a kernel whose TMEM is collective, or a commit or copy with
    `collective_axis` in a kernel whose TMEM is not. An MMA with `collective_axis` on
    non-collective TMEM is PLS001, and so is a kernel where such an MMA makes JAX stop when
    tracing. The kernel's TMEM is its scratch and every `pl.run_scoped` of its body; each run
    of a kernel is judged on its own. A kernel whose `compiler_params` choose
    `plgpu.LoweringSemantics.Lane` is not reported, nor one whose `compiler_params` cannot be
    read, nor one whose collective TMEM has no even number of blocks per cluster (PLS013: JAX
    checks the allocations first and stops there). Nor is an op in a
    `pl.core_map(plgpu.WarpMesh(...))` body or a `@plgpu.warp_map` function, issued by one warp
    as real kernels do: JAX lowers it without comparing it with the kernel's TMEM.

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
    A kernel runs its tensor-core work either for pairs of blocks or for single blocks.
    With Warpgroup lowering semantics, the default from jax 0.11, lowering fails; jax
    0.10.2's default Lane semantics lower it, with the op and the allocation disagreeing on
    which blocks take part. Hence a warning.

    ## Example
    ```python
    acc_tmem=plgpu.TMEM((128, 256), jnp.float32, collective=True)
    ...
    plgpu.tcgen05_mma(acc_tmem.at[:, :128], a_smem, b_smem, barrier)
    ```

    Use instead:
    ```python
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x")
    ```

    ## Fix safety
    There is no fix: whether the op or the allocation is wrong is a design decision.

    ## JAX message
    `Collective attributes are inconsistent across operations in the kernel.` (when
    lowering, jax >= 0.11 or `plgpu.LoweringSemantics.Warpgroup`).
    """

    code = "PLS017"
    name = "inconsistent-collective-op"
    summary = "tcgen05 op whose collective_axis disagrees with the kernel's TMEM"
    jax_message = "Collective attributes are inconsistent across operations in the kernel."
    severity = Severity.WARNING
    triggers = (b"tcgen05", b"_to_tmem")
    identifiers = frozenset({"tcgen05_mma", "tcgen05_commit_arrive", "async_copy_smem_to_tmem",
                             "async_copy_scales_to_tmem", "async_copy_sparse_metadata_to_tmem"})
    lowering = True
    kinds = ("mma", "commit", "copy")
    VALID = (examples.PLS017_VALID,)
    INVALID = (Invalid(examples.PLS017_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        collective_op = pick.given(site.arguments.get("collective_axis"))
        run = run_of(ctx, site)
        if collective_op is UNKNOWN or run is None or run.api not in (MOSAIC_KERNEL, PALLAS_KERNEL):
            return UNKNOWN
        if run.api == PALLAS_KERNEL and scratch_value(run) is not None:
            return UNKNOWN  # (jax 0.12 lowers no `pl.kernel` with scratch operands, whatever they are)
        lowers = lowered(ctx, pick, run)
        if lowers is not True:  # (never lowered: nothing here is checked)
            return UNKNOWN if lowers is UNKNOWN else None
        if collective_op and site.kind == "mma":
            return None  # PLS001's case, which JAX reports when tracing
        if site.meshes:
            return None  # in a `pl.core_map(plgpu.WarpMesh(...))` body (`warp_map`) the ops lower unchecked
        if unknown_op_axis(pick, run):
            return None  # PLS012: lowering looks each op's axis up before it compares the kernel's ops
        semantics = lowering_semantics(pick, run)
        if semantics is UNKNOWN or semantics == "Lane":
            return semantics if semantics is UNKNOWN else None
        allocations = tmem_allocations(pick, run)
        if allocations is UNKNOWN or not allocations:
            return UNKNOWN
        flags = {allocation.collective for allocation in allocations}
        if len(flags) > 1:
            return UNKNOWN  # PLS014
        collective_tmem = flags.pop()
        if not collective_tmem and fails_tracing_first(pick, run, allocations):
            return None  # PLS001: JAX stops when tracing; the allocation is what to change
        stops = fails_allocating(pick, run)
        if stops is not False:
            return None if stops is True else UNKNOWN  # PLS013: JAX stops at the allocations
        if collective_tmem != collective_op:
            return (collective_op, tuple(allocations), semantics)
        return None

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        collective_op, allocations, semantics = detail
        op = api_function(site)
        refs = describe_refs(ctx, list(allocations))
        if collective_op:
            what = f"{op} has collective_axis set, but the kernel's TMEM ({refs}) is not collective"
        else:
            what = f"{op} has no collective_axis, but the kernel's TMEM ({refs}) is collective"
        when = ("lowering fails under the Warpgroup semantics its compiler_params ask for" if semantics
                else "lowering fails from jax 0.11, whose default Warpgroup semantics check this")
        return f"Collective attributes are inconsistent across operations in the kernel: {what} ({when})"

