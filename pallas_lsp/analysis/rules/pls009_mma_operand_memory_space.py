"""PLS009: a tcgen05_mma operand in the wrong memory space."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..trace import Site
from ..trace import objects as o
from ..trace.pick import Picker
from ..trace.refusals import (
    SCALE_OPERANDS, barrier_error, collective_error, fails_first, scales_error, shape_error, space_error,
)
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule
from .site_rule import shown


class MmaOperandMemorySpace(TracedSiteRule):
    """## What it does
    Flags a `plgpu.tcgen05_mma(acc, a, b, ...)` whose accumulator is not a TMEM allocation,
    whose LHS is neither TMEM nor SMEM, whose RHS is not SMEM, or whose `a_scale=` /
    `b_scale=` is not TMEM, following each operand back
    to its allocation (as PLS001 does), or to the kernel's own inputs and outputs, which are
    GMEM refs (a `pl.pallas_call`'s are where its `in_specs` and `out_specs` put them:
    `plgpu.BlockSpec(memory_space=plgpu.SMEM)`; in no memory space, when traced, where no spec
    names one, which JAX's MMA refuses as any operand), and the blocks a
    `plgpu.emit_pipeline` body gets (SMEM, unless their spec says otherwise). Operands that
    cannot be followed are not reported, nor an MMA whose shapes (PLS018) or scales (PLS011)
    JAX refuses first; a scale is checked after the operands' collective TMEM (PLS001) and the
    barrier (PLS010), as JAX does. Nor is an MMA whose kernel JAX never traces: making its
    scratch surely raises first (PLS003, PLS007, a TMEM constructor's checks).

    ## Why is this bad?
    The tensor core reads its operands from shared memory (and the LHS optionally from Tensor
    Memory) and accumulates into Tensor Memory only. JAX raises when the kernel is traced,
    naming the operand but not the allocation to change.

    ## Example
    ```python
    scratch_types=dict(acc=plgpu.SMEM((128, 128), jnp.float32), ...)
    ...
    plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier)
    ```

    Use instead:
    ```python
    scratch_types=dict(acc=plgpu.TMEM((128, 128), jnp.float32), ...)
    ```

    ## Fix safety
    There is no fix: moving an allocation to another memory space changes every use of it.

    ## JAX message
    `Accumulator must be a TMEM Ref.` / `LHS must be a TMEM/SMEM Ref.` / `RHS must be an SMEM
    Ref.` / `a_scale must be a TMEM Ref` / `b_scale must be a TMEM Ref` (trace time,
    `jax.make_jaxpr`, in every supported version; JAX reports the first of them).
    """

    code = "PLS009"
    name = "mma-operand-memory-space"
    summary = "tcgen05_mma operand in the wrong memory space"
    jax_message = "Accumulator must be a TMEM Ref."
    jax_exception = "ValueError"
    triggers = (b"tcgen05",)
    identifiers = frozenset({"tcgen05_mma"})
    kinds = ("mma",)
    VALID = (examples.PLS009_VALID,)
    INVALID = (Invalid(examples.PLS009_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        if fails_first(pick, site, shape_error, scales_error):  # (`mma`: JAX's order)
            return None
        found = space_error(pick, site)
        if found is not None or fails_first(pick, site, collective_error, barrier_error):
            return found
        return space_error(pick, site, SCALE_OPERANDS)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        name, role, where, message, ref = detail
        if isinstance(ref, o.Operand):
            advice = "; copy it to SMEM first" if ref.space == "GMEM" and role != "Accumulator" else ""
            return f"{message.rstrip('.')}: {role} '{shown(site, name)}' is {_operand(ctx, ref)}{advice}"
        return (f"{message.rstrip('.')}: {role} '{shown(site, name)}' is {where}, allocated at "
                f"{ctx.where(ref.node)}")


def _operand(ctx: Context, ref: o.Operand) -> str:
    """What a kernel's operand (or a pipeline's block of one) is, and where it comes from."""
    if ref.block:
        return f"the pipeline's {ref.space} block of {ref.name} (the pipeline at {ctx.where(ref.kernel)})"
    if ref.space == o.DEFAULT_SPACE:
        return (f"the kernel's operand '{ref.name}', whose spec names no memory space (the kernel at "
                f"{ctx.where(ref.kernel)}: give it `plgpu.BlockSpec(memory_space=plgpu.SMEM)`)")
    return f"the kernel's {ref.space} operand '{ref.name}' (the kernel at {ctx.where(ref.kernel)})"
