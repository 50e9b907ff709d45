"""PLS012: a `collective_axis` the kernel's cluster cannot serve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from astroid import nodes

from ..context import Context
from ..findings import Finding, Severity
from ..trace import Site
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import (MOSAIC_KERNEL, Allocation, Cluster, KernelRule, KernelRun, allocation_site, cluster_of,
                      fails_allocating, lowering_semantics, run_of, unknown_barrier_axis, lowered)
from .pls017_inconsistent_collective_op import InconsistentCollectiveOp
from .site_rule import SiteRule


@dataclass(frozen=True)
class Mismatch:
    what: str  # "unknown" | "minor" | "size" | "shape"
    axis: str | tuple[Any, ...]
    cluster: Cluster
    kernel: nodes.Call


class CollectiveAxisCluster(SiteRule):
    """## What it does
    Flags `plgpu.tcgen05_mma`, `plgpu.tcgen05_commit_arrive` and `plgpu.async_copy_*_to_tmem`
    calls whose `collective_axis` does not fit the `cluster=` / `cluster_names=` of the
    `plgpu.kernel` that runs them (found through closures, `pl.when`, loops and helper
    calls):

    * the axis is not one of the kernel's `cluster_names` (a tuple of names, `("x",)`, as
      barriers take them, is none of them; also for the `collective_axes` of a
      `plgpu.ClusterBarrier` the kernel allocates: the finding goes on the barrier, which JAX
      checks before anything else it lowers);
    * it is, but not the last (minor-most) one;
    * for an MMA with a barrier and for `tcgen05_commit_arrive`: the minor-most cluster
      dimension is not 2 (an error in every version), or another dimension is not 1 (a
      warning: jax 0.10.2 refuses it, jax 0.12 accepts it).

    JAX checks the kernel's TMEM allocations before it lowers these ops: a kernel that mixes
    collective and non-collective TMEM (PLS014), or allocates collective TMEM without an even
    number of blocks per cluster (PLS013, which a collective MMA's accumulator always is when
    the cluster is odd), fails there, and is not flagged here. Nor is an arrival's cluster
    shape in a kernel whose `compiler_params` ask for Warpgroup lowering semantics and whose
    collective attributes disagree: that lowering stops at the disagreement first (PLS017).

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
    A collective MMA pairs the two blocks along the minor-most cluster axis. JAX checks this
    only when the kernel is lowered for the GPU, so the kernel traces fine and fails on the
    machine that compiles it.

    ## Example
    ```python
    plgpu.kernel(kernel, cluster=(2, 1), cluster_names=("x", "y"), ...)
    ...
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x")
    ```

    Use instead:
    ```python
    plgpu.kernel(kernel, cluster=(1, 2), cluster_names=("x", "y"), ...)
    ...
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="y")
    ```

    ## Fix safety
    There is no fix: the cluster shape and the axis are both design decisions.

    ## JAX message
    When lowering (`jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))`), in every
    supported version: `Unknown cluster axis {axis}, available axes: [...]` /
    `Can only perform collective MMA along minormost cluster axis. Got {axis}, expected
    {last}.`; for the cluster shape, jax 0.12: `Collective arrivals require the minormost
    cluster dimension to have size 2, got: (...)`, jax 0.10.2: `Collective arrivals only
    support (2, 1, 1)-shaped clusters`.
    """

    code = "PLS012"
    name = "collective-axis-cluster"
    summary = "collective_axis not served by the kernel's cluster"
    jax_message = "Unknown cluster axis"
    # (the axis may be given by position, `tcgen05_commit_arrive(barrier, "x")`, or as a key of
    # a `**` mapping: the ops themselves are triggers too)
    triggers = (b"collective_axis", b"ClusterBarrier", b"tcgen05", b"_to_tmem")
    identifiers = frozenset({"collective_axis", "ClusterBarrier", "tcgen05_mma", "tcgen05_commit_arrive",
                             "async_copy_smem_to_tmem", "async_copy_scales_to_tmem",
                             "async_copy_sparse_metadata_to_tmem"})
    lowering = True
    kinds = ("mma", "commit", "copy")
    VALID = (examples.PLS012_VALID,)
    INVALID = (Invalid(examples.PLS012_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        axis = pick.pick(site.arguments.get("collective_axis"))
        if axis is None:
            return None
        run = run_of(ctx, site)
        if not isinstance(axis, (str, tuple)) or run is None:
            return UNKNOWN  # (a tuple is no cluster axis: `("x",)` is not one of the names)
        lowers = lowered(ctx, pick, run)
        if lowers is not True:  # (never lowered: nothing here is checked)
            return UNKNOWN if lowers is UNKNOWN else None
        cluster = cluster_of(pick, run)
        if cluster is UNKNOWN:
            return UNKNOWN
        what = _mismatch(axis, cluster, _arrives(site, pick))
        if what is UNKNOWN:
            return UNKNOWN
        if not what:
            return None
        if site.kind == "mma" and cluster.blocks % 2:
            return None  # its collective accumulator stops JAX first (PLS001, PLS013 or PLS014)
        stops = fails_allocating(pick, run)
        if stops is not False:
            return None if stops is True else UNKNOWN  # the kernel's TMEM stops JAX first
        if what in ("size", "shape") and lowering_semantics(pick, run) == "Warpgroup":
            # Warpgroup lowering checks the kernel's collective attributes before an arrival's
            # cluster: an inconsistent op stops it there first (PLS017)
            first = InconsistentCollectiveOp().problem(ctx, site, pick)
            if first is not None:
                return None if first is not UNKNOWN else UNKNOWN
        return Mismatch(what, axis, cluster, run.node)

    def check(self, ctx: Context) -> Iterator[Finding]:
        yield from super().check(ctx)
        yield from _BarrierAxes().check(ctx)

    def severity_of(self, detail: Mismatch) -> Severity:
        return Severity.WARNING if detail.what == "shape" else Severity.ERROR

    def message(self, ctx: Context, site: Site, detail: Mismatch) -> str:
        axis, cluster = detail.axis, detail.cluster
        where = f"the plgpu.kernel at {ctx.where(detail.kernel)} has {cluster.shown()}"
        if detail.what == "unknown":
            return f"Unknown cluster axis {axis}, available axes: {list(cluster.names)}: {where}"
        if detail.what == "minor":
            return (f"Can only perform collective MMA along minormost cluster axis. Got {axis}, "
                    f"expected {cluster.names[-1]}: {where}")
        if detail.what == "size":
            return (f"Collective arrivals require the minormost cluster dimension to have size 2: {where} "
                    "(jax 0.10.2 wants a (..., 1, 2) cluster)")
        return (f"Collective arrivals only support (2, 1, 1)-shaped clusters in jax 0.10.2 (jax 0.12 "
                f"accepts any cluster whose minor-most dimension is 2): {where}")


def _arrives(site: Site, pick: Picker) -> Any:
    """Does the op arrive on a barrier collectively (where the cluster shape is checked)?"""
    if site.kind == "commit":
        return True
    if site.kind == "mma":
        return pick.given(site.arguments.get("barrier"))
    return False


def _mismatch(axis: str | tuple[Any, ...], cluster: Cluster, arrives: Any) -> str | Any:
    if axis not in cluster.names:
        return "unknown"
    if axis != cluster.names[-1]:
        return "minor"
    if arrives is UNKNOWN:
        return UNKNOWN
    if not arrives or len(cluster.dims) != len(cluster.names):
        return "" if arrives is False else UNKNOWN
    if cluster.dims[-1] != 2:
        return "size"
    if any(dim != 1 for dim in cluster.dims[:-1]):
        return "shape"
    return ""


class _BarrierAxes(KernelRule):
    """PLS012 on a kernel's `plgpu.ClusterBarrier(collective_axes=...)` naming an axis its
    cluster does not have (JAX resolves these first, when it sizes the kernel's resources).
    The finding goes on the barrier's constructor call (or, when a helper makes it, the call
    in the code building the kernel that leads there), or on the `pl.run_scoped` that
    allocates it."""

    code = CollectiveAxisCluster.code
    name = CollectiveAxisCluster.name
    summary = CollectiveAxisCluster.summary
    jax_message = CollectiveAxisCluster.jax_message
    lowering = True
    in_own_file = True
    apis = (MOSAIC_KERNEL,)

    def problem(self, ctx: Context, run: KernelRun, pick: Picker) -> Any:
        lowers = lowered(ctx, pick, run)
        if lowers is not True:  # (never lowered: tracing stops first, or an interpreter runs it)
            return UNKNOWN if lowers is UNKNOWN else None
        return unknown_barrier_axis(pick, run)

    def same_problem(self, ctx: Context, run: KernelRun, detail: Any) -> Any:
        return True  # one finding per barrier (and place), whatever each setting names

    def reported(self, run: KernelRun, detail: Any) -> Site:
        barrier, by, _, _ = detail
        return allocation_site(run, Allocation(barrier, False, None)) if by is None else by

    def message(self, ctx: Context, run: KernelRun, detail: Any) -> str:
        _, _, axis, cluster = detail
        return (f"Unknown cluster axis {axis}, available axes: {list(cluster.names)}: this ClusterBarrier's "
                f"collective_axes name it, but the plgpu.kernel at {ctx.where(run.node)} has {cluster.shown()}")
