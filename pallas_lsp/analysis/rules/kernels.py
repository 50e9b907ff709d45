"""Facts about the `plgpu.kernel` calls that run a piece of code, shared by the rules JAX
reports when lowering (cluster axes, TMEM allocations of a kernel)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from astroid import nodes

from .. import api
from ..api import Kind
from ..context import Context
from ..solve import Concretizer
from ..values import UNKNOWN

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
