"""Facts about the `plgpu.kernel` calls that run a piece of code, shared by the rules JAX
reports when lowering (cluster axes, TMEM allocations of a kernel)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

from astroid import nodes

from .. import api, values as v
from ..api import Kind
from ..context import Context
from ..findings import Finding
from ..solve import Concretizer
from ..values import UNKNOWN
from .call_rule import Arguments, CallRule, arguments
from .tmem import MIXED, flag, union_collective

MOSAIC_KERNEL = f"{api.MOSAIC_GPU}.kernel"


def is_mosaic_kernel(ctx: Context, call: nodes.Call) -> bool:
    """`plgpu.kernel(...)` or `functools.partial(plgpu.kernel, ...)` (not `pl.kernel`)."""
    flow = ctx.flow
    if flow.api_name(call.func) == MOSAIC_KERNEL:
        return True
    return flow.api_kind(call) is Kind.PARTIAL and bool(call.args) and flow.api_name(call.args[0]) == MOSAIC_KERNEL


def mosaic_kernels_running(ctx: Context, node: nodes.NodeNG) -> list[nodes.Call] | None:
    """The `plgpu.kernel` calls whose body runs `node`; None when unknown or when one of them
    is another kind of kernel."""
    invocations = ctx.flow.kernels_running(node)
    if not invocations:
        return None
    calls = [invocation.node for invocation in invocations]
    if not all(isinstance(call, nodes.Call) and is_mosaic_kernel(ctx, call) for call in calls):
        return None
    return calls


@dataclass(frozen=True)
class Cluster:
    names: tuple[str, ...]
    dims: tuple[int, ...]

    @property
    def blocks(self) -> int:
        return math.prod(self.dims)

    def shown(self) -> str:
        return f"cluster={self.dims}, cluster_names={self.names}"


def cluster_of(ctx: Context, conc: Concretizer, call: nodes.Call) -> Cluster | Any:
    """The kernel's `cluster=` and `cluster_names=` (both `()` when absent), or UNKNOWN."""
    keywords = {kw.arg: kw.value for kw in call.keywords or ()}
    if None in keywords:
        return UNKNOWN  # **mesh_kwargs may carry them
    names = _sequence(conc, ctx, keywords.get("cluster_names"), str)
    dims = _sequence(conc, ctx, keywords.get("cluster"), int)
    if names is UNKNOWN or dims is UNKNOWN:
        return UNKNOWN
    return Cluster(names, dims)


def _sequence(conc: Concretizer, ctx: Context, node: nodes.NodeNG | None, item: type) -> tuple | Any:
    value = () if node is None else conc.value(ctx.flow.evaluate(node))
    if not isinstance(value, (tuple, list)):
        return UNKNOWN
    if not all(isinstance(x, item) and not isinstance(x, bool) for x in value):
        return UNKNOWN
    return tuple(value)


def scratch_of(ctx: Context, call: nodes.Call) -> nodes.NodeNG | None:
    """The kernel's scratch argument (`scratch_types=` or the old `scratch_shapes=`)."""
    keywords = {kw.arg: kw.value for kw in call.keywords or ()}
    return next((keywords[name] for name in api.SCRATCH_KEYWORDS[Kind.KERNEL] if name in keywords), None)


def tmem_allocations(conc: Concretizer, scratch: Any) -> list[tuple[Any, bool]] | Any:
    """(ref, collective) for each TMEM allocation (RefUnions count as one) of concrete kernel
    scratch; [] for a scratch JAX ignores (None, or a single ref); UNKNOWN."""
    if scratch is None or isinstance(scratch, (v.Ref, v.UnionRef)):
        return []
    found: list[tuple[Any, bool]] = []
    pending = [scratch]
    while pending:
        item = pending.pop(0)  # in source order, for messages
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (tuple, list)):
            pending.extend(item)
        elif isinstance(item, (v.Ref, v.UnionRef)):
            collective = _tmem_collective(conc, item)
            if collective is UNKNOWN:
                return UNKNOWN
            if collective is not None:
                found.append((item, collective))
        elif item is not None and not isinstance(item, v.Barrier):
            return UNKNOWN
    return found


def _tmem_collective(conc: Concretizer, ref: Any) -> bool | None | Any:
    """Whether a TMEM allocation is collective; None when it is not TMEM."""
    if isinstance(ref, v.UnionRef):
        collective = union_collective(conc, ref.union)
        return UNKNOWN if collective is MIXED else collective
    if ref.alloc.space != "TMEM":
        return None
    return conc.truth(flag(conc, ref))


def describe_refs(ctx: Context, refs: list) -> str:
    """"'acc' (line 12), the RefUnion at line 14": allocations and unions, for messages."""
    shown = []
    for ref in refs:
        made = ref.union if isinstance(ref, v.UnionRef) else ref.alloc
        what = "the RefUnion" if isinstance(ref, v.UnionRef) else "the TMEM"
        shown.append(f"'{made.name}' ({ctx.where(made.node)})" if made.name else f"{what} at {ctx.where(made.node)}")
    return ", ".join(shown)


class KernelRule(CallRule):
    """A rule about one `plgpu.kernel` call as a whole (its cluster, its scratch)."""

    kinds = (Kind.KERNEL, Kind.PARTIAL)

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call in ctx.flow.sites(*self.kinds):
            if is_mosaic_kernel(ctx, call) and not any(kw.arg is None for kw in call.keywords or ()):
                written = {kw.arg: kw.value for kw in call.keywords or ()}
                yield from self._call(ctx, Arguments(ctx, call, written, {}))

    def tmem_sides(self, ctx: Context, args: Arguments, conc: Concretizer) -> tuple[list, list] | Any:
        """(collective, non-collective) TMEM allocations of the kernel's scratch, or UNKNOWN."""
        allocations = kernel_tmem(ctx, conc, args.call)
        if allocations is UNKNOWN:
            return UNKNOWN
        return ([ref for ref, collective in allocations if collective],
                [ref for ref, collective in allocations if not collective])


def kernel_tmem(ctx: Context, conc: Concretizer, kernel: nodes.Call) -> list[tuple[Any, bool]] | Any:
    """(ref, collective) of each TMEM allocation in the kernel's scratch."""
    scratch = scratch_of(ctx, kernel)
    return [] if scratch is None else tmem_allocations(conc, conc.value(ctx.flow.evaluate(scratch)))


def fails_tracing_first(ctx: Context, conc: Concretizer, kernel: nodes.Call, plain: list) -> bool:
    """Does a collective MMA of this kernel use one of the `plain` (non-collective) TMEM refs
    as accumulator or LHS? JAX then stops at trace time (PLS001), before lowering could see
    anything about the kernel's allocations."""
    allocs = {ref.alloc for ref in plain if isinstance(ref, v.Ref)}
    for mma in ctx.flow.sites(Kind.MMA):
        args = arguments(ctx, mma)
        kernels = mosaic_kernels_running(ctx, mma)
        if args is None or not kernels or kernel not in kernels:
            continue
        if args.given(conc, "collective_axis") is not True:
            continue
        for name in ("acc", "a"):
            operand = args.value(conc, name) if name in args.written else None
            if isinstance(operand, v.Ref) and operand.union is None and operand.alloc in allocs:
                return True
    return False
