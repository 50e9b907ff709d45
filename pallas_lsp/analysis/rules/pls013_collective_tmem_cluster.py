"""PLS013: collective TMEM in a kernel without an even number of blocks per cluster."""

from __future__ import annotations

from typing import Any, Iterator

from ..api import Kind
from ..context import Context
from ..findings import Finding, Severity
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

    Collective TMEM in the `scratch_shapes` of a `pl.pallas_call(...)`, which has no cluster,
    is flagged too, as a warning: jax 0.10.2 confirms it when lowering on the CPU, and jax 0.12
    cannot lower `pallas_call` without a GPU, so the check there is not confirmed.

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
    in them. Got cluster: (1, 1, 1)` (when lowering, in every supported version; for
    `pl.pallas_call`, confirmed with jax 0.10.2).
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

    def check(self, ctx: Context) -> Iterator[Finding]:
        yield from super().check(ctx)
        for call in ctx.flow.sites(Kind.PALLAS_CALL):  # a pallas_call has no cluster at all
            if not any(kw.arg is None for kw in call.keywords or ()):
                written = {kw.arg: kw.value for kw in call.keywords or ()}
                yield from self._call(ctx, Arguments(ctx, call, written, {}))

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        sides = self.tmem_sides(ctx, args, conc)
        if sides is UNKNOWN or not sides[0]:
            return sides if sides is UNKNOWN else None
        collective = sides[0]
        if ctx.flow.api_kind(args.call) is Kind.PALLAS_CALL:
            return (collective, None)
        cluster = cluster_of(ctx, conc, args.call)
        if cluster is UNKNOWN:
            return UNKNOWN
        return (collective, cluster) if cluster.blocks % 2 else None

    def severity_of(self, detail: Any) -> Severity:
        return Severity.WARNING if detail[1] is None else self.severity

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        collective, cluster = detail
        if cluster is None:
            return ("Collective TMEM allocations are only supported for clusters with an even number of "
                    f"blocks in them: this pl.pallas_call allocates collective TMEM ({describe_refs(ctx, collective)}) "
                    "and a pallas_call has no cluster; use plgpu.kernel with cluster=(2,) (confirmed with "
                    "jax 0.10.2; jax 0.12 cannot lower pallas_call without a GPU)")
        given = f"cluster={cluster.dims}" if cluster.dims else "no cluster"
        return ("Collective TMEM allocations are only supported for clusters with an even number of "
                f"blocks in them: the kernel allocates collective TMEM ({describe_refs(ctx, collective)}) "
                f"but has {given}")
