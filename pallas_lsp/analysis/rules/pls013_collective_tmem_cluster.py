"""PLS013: collective TMEM in a kernel without an even number of blocks per cluster."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..solve import Concretizer
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .call_rule import Arguments
from .kernels import KernelRule, cluster_of, describe_refs


class CollectiveTmemCluster(KernelRule):
    """## What it does
    Flags a `plgpu.kernel(...)` whose scratch allocates collective TMEM
    (`plgpu.TMEM(..., collective=True)`, also inside a RefUnion) while its `cluster=` has an
    odd number of blocks, or is not given at all. Flags that choose both (`collective=flag`
    with `cluster=(2,) if flag else ()`) are reasoned about together.

    ## Why is this bad?
    A collective TMEM allocation spans the Tensor Memory of two blocks of a cluster, so the
    blocks must come in pairs. JAX checks this only when the kernel is lowered for the GPU.

    ## Example
    ```python
    plgpu.kernel(kernel, out_type=..., scratch_types=[plgpu.TMEM((128, 128), jnp.float32, collective=True)])
    ```

    Use instead:
    ```python
    plgpu.kernel(kernel, out_type=..., cluster=(2,), cluster_names=("x",),
                 scratch_types=[plgpu.TMEM((128, 128), jnp.float32, collective=True)])
    ```

    ## Fix safety
    There is no fix: a cluster changes the kernel's grid, and a non-collective allocation
    changes its MMAs.

    ## JAX message
    `Collective TMEM allocations are only supported for clusters with an even number of blocks
    in them. Got cluster: (1, 1, 1)` (when lowering, in every supported version).
    """

    code = "PLS013"
    name = "collective-tmem-cluster"
    summary = "Collective TMEM in a kernel without an even number of blocks per cluster"
    jax_message = "Collective TMEM allocations are only supported for clusters with an even number of blocks in them."
    triggers = (b"collective",)
    identifiers = frozenset({"TMEM"})
    lowering = True
    VALID = (examples.PLS013_VALID,)
    INVALID = (Invalid(examples.PLS013_INVALID),)

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        sides = self.tmem_sides(ctx, args, conc)
        if sides is UNKNOWN or not sides[0]:
            return sides if sides is UNKNOWN else None
        collective = sides[0]
        cluster = cluster_of(ctx, conc, args.call)
        if cluster is UNKNOWN:
            return UNKNOWN
        return (collective, cluster) if cluster.blocks % 2 else None

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        collective, cluster = detail
        given = f"cluster={cluster.dims}" if cluster.dims else "no cluster"
        return ("Collective TMEM allocations are only supported for clusters with an even number of "
                f"blocks in them: the kernel allocates collective TMEM ({describe_refs(ctx, collective)}) "
                f"but has {given}")
