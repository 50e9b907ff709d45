"""PLS013: collective TMEM in a kernel without an even number of blocks per cluster."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..findings import Severity
from ..trace import Site
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import (MOSAIC_KERNEL, PALLAS_CALL, PALLAS_CALL_CONFIRMED, PALLAS_KERNEL, KernelRule, KernelRun, Allocation, allocation_site, cluster_of,
                      describe_refs, fails_tracing_first, tmem_allocations, unknown_barrier_axis, lowered)


class CollectiveTmemCluster(KernelRule):
    """## What it does
    Flags a `plgpu.kernel(...)` (or a `pl.kernel(..., mesh=plgpu.Mesh(...))`, whose cluster
    is the Mesh's) that allocates collective TMEM
    (`plgpu.TMEM(..., collective=True)`, also inside a RefUnion), in its scratch or with
    `pl.run_scoped` in its body, while its `cluster=` has an odd number of blocks, or is not
    given at all. Flags that choose both (`collective=flag` with `cluster=(2,) if flag else
    ()`) are reasoned about together. JAX gives no source line: the finding goes on the
    first collective TMEM allocation of the scratch (the `plgpu.TMEM(...)` call, or, when a
    helper makes it, the call in the code building the kernel that leads there), or on the
    `pl.run_scoped` call when only the body allocates collective TMEM (the call of the
    kernel's own file that leads to a helper module calling it).

    Collective TMEM in the `scratch_shapes` of a `pl.pallas_call(...)`, which has no cluster,
    is flagged too, as a warning: jax 0.10.2 confirms it when lowering on the CPU, and jax 0.12
    cannot lower `pallas_call` without a GPU, so the check there is not confirmed.

    A kernel that also allocates non-collective TMEM is PLS014's: JAX checks for mixed
    allocations first and stops there.

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
    in_own_file = True
    apis = (MOSAIC_KERNEL, PALLAS_KERNEL, PALLAS_CALL)
    VALID = (examples.PLS013_VALID,)
    INVALID = (Invalid(examples.PLS013_INVALID),)

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
        if not collective:
            return None
        plain = [allocation for allocation in allocations if not allocation.collective]
        if plain and not fails_tracing_first(pick, run, plain):
            return None  # JAX checks for mixed TMEM first (PLS014) and stops there
        if run.api == PALLAS_CALL:
            return (tuple(collective), None)
        cluster = cluster_of(pick, run)
        if cluster is UNKNOWN:
            return UNKNOWN
        return (tuple(collective), cluster) if cluster.blocks % 2 else None

    def reported(self, run: KernelRun, detail: Any) -> Site:
        """The first collective allocation in the scratch (`allocation_site`), else the
        `pl.run_scoped` of the first one."""
        collective: tuple[Allocation, ...]
        collective, _ = detail
        in_scratch = [allocation for allocation in collective if allocation.by is None]
        if in_scratch:
            return allocation_site(run, in_scratch[0])
        return collective[0].by or run.site

    def same_problem(self, ctx: Context, run: KernelRun, detail: Any) -> Any:
        return True  # one finding per kernel (and place), whatever each setting allocates

    def severity_of(self, run: KernelRun, detail: Any) -> Severity:
        return Severity.WARNING if detail[1] is None else self.severity

    def message(self, ctx: Context, run: KernelRun, detail: Any) -> str:
        collective, cluster = detail
        refs = describe_refs(ctx, list(collective))
        if cluster is None:
            return ("Collective TMEM allocations are only supported for clusters with an even number of "
                    f"blocks in them: this pl.pallas_call allocates collective TMEM ({refs}) "
                    f"and a pallas_call has no cluster; use plgpu.kernel with cluster=(2,) ({PALLAS_CALL_CONFIRMED})")
        given = f"cluster={cluster.dims}" if cluster.dims else "no cluster"
        where = "the kernel" if self.reported(run, detail).node is run.node else (
            f"the {run.api} at {ctx.where(run.node)}")
        return ("Collective TMEM allocations are only supported for clusters with an even number of "
                f"blocks in them: {where} allocates collective TMEM ({refs}) but has {given}")
