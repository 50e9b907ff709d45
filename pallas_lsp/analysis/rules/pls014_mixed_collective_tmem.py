"""PLS014: collective and non-collective TMEM allocated by one kernel."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..solve import Concretizer
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .call_rule import Arguments
from .kernels import KernelRule, describe_refs, fails_tracing_first


class MixedCollectiveTmem(KernelRule):
    """## What it does
    Flags a `plgpu.kernel(...)` whose scratch allocates both collective and non-collective
    TMEM (RefUnions count as one allocation). Allocations made with `pl.run_scoped` inside
    the body are not looked at yet. A kernel whose collective MMA uses one of the
    non-collective allocations is left to PLS001: JAX stops there when tracing, and making
    that allocation collective resolves both.

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
    VALID = (examples.PLS014_VALID,)
    INVALID = (Invalid(examples.PLS014_INVALID),)

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        sides = self.tmem_sides(ctx, args, conc)
        if sides is UNKNOWN:
            return UNKNOWN
        collective, plain = sides
        if not collective or not plain or fails_tracing_first(ctx, conc, args.call, plain):
            return None
        return (collective, plain)

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        collective, plain = detail
        return ("Can't mix collective and non-collective TMEM allocations within the same kernel: "
                f"collective: {describe_refs(ctx, collective)}; not collective: {describe_refs(ctx, plain)}")
