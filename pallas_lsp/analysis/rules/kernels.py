"""Facts about one run of a kernel, from the trace: its cluster and threads (the "kernel"
site's arguments; for `plgpu.kernel` they arrive in `**mesh_kwargs`), the TMEM it allocates
(its scratch, and every `pl.run_scoped` of its body, `functools.partial(pl.run_scoped, ...)`
and helpers included), and the tcgen05 ops it runs. Shared by the rules JAX reports when
lowering (PLS012 - PLS017).

A kernel made by a factory runs once per call of the factory: each run is its own
`KernelRun` (the calls that led to the `plgpu.kernel(...)` tell them apart), so a collective
and a non-collective instance of one kernel are never mixed up.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator

from astroid import nodes

from .. import api
from ..context import Context, State
from ..findings import Finding, Fix, Severity
from ..trace import Site, decide
from ..trace import objects as o
from ..trace.pick import Picker, explore
from ..trace.refusals import made_raises, plain_collective_raises, traced_commit_raises, traced_mma_raises
from ..trace.stubs import tree_children
from ..values import UNKNOWN
from .base import Rule
from .site_rule import SiteRule, api_function, finding

MOSAIC_KERNEL = "plgpu.kernel"
PALLAS_CALL = "pl.pallas_call"
PALLAS_KERNEL = "pl.kernel"
# What a lowering finding on a `pallas_call` adds: only one JAX version could judge it
PALLAS_CALL_CONFIRMED = "confirmed with jax 0.10.2; jax 0.12 cannot lower pallas_call without a GPU"


@dataclass
class KernelRun:
    site: Site  # the "kernel" site
    members: list[Site] = field(default_factory=list)  # the sites its body recorded, in order

    @property
    def api(self) -> str:
        return api_function(self.site)

    @property
    def node(self) -> nodes.Call:
        return self.site.node


def _own_chain(site: Site) -> o.Chain:
    """The calls that led to a kernel site, without the decorator call it is itself."""
    chain = site.chain
    return chain[:-1] if chain and chain[-1] is site.node else chain


def _index_runs(ctx: Context) -> tuple[list[KernelRun], dict[int, KernelRun]]:
    runs: list[KernelRun] = []
    by_key: dict[tuple[nodes.NodeNG, o.Chain], list[KernelRun]] = {}
    by_site: dict[int, KernelRun] = {}
    for site in ctx.trace.sites("kernel"):
        if ctx.trace.superseded(site):
            continue
        run = KernelRun(site)
        runs.append(run)
        by_key.setdefault((site.node, _own_chain(site)), []).append(run)
        by_site[id(site)] = run
    of_site: dict[int, KernelRun] = {}
    for site in ctx.trace.interp.sites:
        if site.kind == "kernel" or site.kernel is None or ctx.trace.superseded(site):
            continue
        owner = by_site.get(id(site.run)) if site.run is not None else None
        if owner is None:
            owner = _run_of(site, by_key)
        if owner is not None:
            owner.members.append(site)
            of_site[id(site)] = owner
    return runs, of_site


# every kernel run of the trace, and the run of each site of a body (by the site's id)
_RUNS: State[tuple[list[KernelRun], dict[int, KernelRun]]] = State("kernel runs", _index_runs)


def kernel_runs(ctx: Context) -> list[KernelRun]:
    """Every kernel run of the trace, with the sites of its body (computed once per file)."""
    return ctx.state(_RUNS)[0]


def _may_report_here(ctx: Context) -> list[KernelRun]:
    """The kernel runs a finding in the analysed file may come from: all but those a replayed
    run made (`Trace.kept_sites`: their sites are all reported elsewhere), unless another run
    of the same kernel call is kept (a finding there says in which settings it is decided)."""
    kept = ctx.trace.kept_sites
    runs = kernel_runs(ctx)
    live = {run.node for run in runs if id(run.site) not in kept}
    return [run for run in runs if id(run.site) not in kept or run.node in live]


_REPORTING: State[list[KernelRun]] = State("kernel runs that may report here", _may_report_here)


def run_of(ctx: Context, site: Site) -> KernelRun | None:
    """The kernel run a site of the body belongs to; None when unknown."""
    return ctx.state(_RUNS)[1].get(id(site))


def _run_of(site: Site, by_key: dict[tuple[nodes.NodeNG, o.Chain], list[KernelRun]]) -> KernelRun | None:
    chain, kernel = site.chain, site.kernel
    index = next((i for i, node in enumerate(chain) if node is kernel), None)
    if index is None or kernel is None:
        return None
    candidates = [run for run in by_key.get((kernel, chain[:index]), ()) if run.site.guard <= site.guard]
    return candidates[0] if len(candidates) == 1 else None


# ---------------------------------------------------------------------------
# The cluster and the threads.


@dataclass(frozen=True)
class Cluster:
    names: tuple[str, ...]
    dims: tuple[int, ...]

    @property
    def blocks(self) -> int:
        return math.prod(self.dims)

    def shown(self) -> str:
        return f"cluster={self.dims}, cluster_names={self.names}"


def mesh(pick: Picker, run: KernelRun) -> dict[str, Any] | Any:
    """`plgpu.kernel`'s `**mesh_kwargs` (cluster, threads, grid), or the keywords of the
    `plgpu.Mesh(...)` a `pl.kernel(mesh=...)` is given; UNKNOWN for other kernels."""
    if run.api == PALLAS_KERNEL:
        spec = pick.pick(run.site.arguments.get("mesh"))
        return dict(spec.keywords) if isinstance(spec, o.MeshSpec) else UNKNOWN
    if run.api != MOSAIC_KERNEL:
        return UNKNOWN
    found = pick.pick(run.site.arguments.get("mesh_kwargs"))
    return found if isinstance(found, dict) else UNKNOWN


def cluster_of(pick: Picker, run: KernelRun) -> Cluster | Any:
    """The kernel's `cluster=` and `cluster_names=` (both `()` when absent), or UNKNOWN."""
    kwargs = mesh(pick, run)
    if kwargs is UNKNOWN:
        return UNKNOWN
    names = _sequence(pick, kwargs.get("cluster_names", ()), str)
    dims = _sequence(pick, kwargs.get("cluster", ()), int)
    if names is UNKNOWN or dims is UNKNOWN:
        return UNKNOWN
    return Cluster(names, dims)


def threads_of(pick: Picker, run: KernelRun) -> tuple[int, str] | None | Any:
    """(num_threads, thread_name) of a multithreaded kernel: one with a `thread_name`, as JAX's
    lowering counts it (`num_threads=1` too); None without threads; UNKNOWN."""
    kwargs = mesh(pick, run)
    if kwargs is UNKNOWN:
        return UNKNOWN
    count = pick.pick(kwargs.get("num_threads"))
    if count is None:
        return None
    name = pick.pick(kwargs.get("thread_name"))
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(name, str):
        return UNKNOWN
    return (count, name) if count >= 1 else UNKNOWN


def lowering_semantics(pick: Picker, run: KernelRun) -> Any:
    """The kernel's lowering semantics: None for the version's default, "Lane",
    "Warpgroup", or UNKNOWN when `compiler_params` hides it."""
    params = pick.pick(run.site.arguments.get("compiler_params"))
    if params is None:
        return None
    if not isinstance(params, o.Namespace):  # (`plgpu.CompilerParams(...)`, as the trace made it)
        return UNKNOWN
    semantics = pick.pick(params.attributes.get("lowering_semantics"))
    if semantics is None:
        return None
    name = semantics.qualified if isinstance(semantics, api.ApiValue) else ""
    return "Lane" if name.endswith(".Lane") else "Warpgroup" if name.endswith(".Warpgroup") else UNKNOWN


def _sequence(pick: Picker, value: Any, item: type) -> tuple[Any, ...] | Any:
    found = pick.pick(value)
    if not isinstance(found, (tuple, list)):
        return UNKNOWN
    items = [pick.pick(element) for element in found]
    if not all(isinstance(x, item) and not isinstance(x, bool) for x in items):
        return UNKNOWN
    return tuple(items)


# ---------------------------------------------------------------------------
# The TMEM a run allocates.


@dataclass(frozen=True)
class Allocation:
    """One TMEM allocation of a kernel (a RefUnion counts as one)."""

    ref: Any  # objects.Alloc | objects.Union
    collective: bool
    by: Site | None  # the `pl.run_scoped` site that allocated it; None for the kernel's scratch


def allocation_site(run: KernelRun, allocation: Allocation) -> Site:
    """Where a finding about a scratch allocation goes: its constructor call, or, when a helper
    made it, the call on the way there in the code that builds the kernel (else the kernel)."""
    ref = allocation.ref
    chain = tuple(getattr(ref, "chain", ()))
    kernel_chain = run.site.built if run.site.built is not None else run.site.chain  # (built, not applied)
    common = 0
    while common < min(len(chain), len(kernel_chain)) and chain[common] is kernel_chain[common]:
        common += 1
    node = chain[common] if common < len(chain) else ref.node
    return Site("alloc", node, {}, run.site.guard, chain[:common] + (run.node,), None, ref)


def scratch_value(run: KernelRun) -> Any:
    arguments = run.site.arguments
    for name in ("scratch_types", "scratch_shapes"):
        value = arguments.get(name)
        if value is not None:
            return value
    return None


def tmem_allocations(pick: Picker, run: KernelRun) -> list[Allocation] | Any:
    """Every TMEM allocation of the run, in allocation order: the scratch (a single ref,
    which JAX ignores, gives none), then each `pl.run_scoped` of the body; UNKNOWN when a
    part cannot be followed, or when the body makes TMEM we do not see allocated."""
    found: list[Allocation] = []
    accounted: set[nodes.Call] = set()
    scratch = pick.pick(scratch_value(run))
    if not isinstance(scratch, (o.Alloc, o.Union, o.Member, o.View, o.NotSequence, o.Generator)):  # (JAX ignores these)
        if not _collect(pick, scratch, None, found, accounted):
            return UNKNOWN
    for site in run.members:
        if site.kind != "run_scoped" or not pick.holds(site.guard):
            continue
        if not _collect(pick, (site.arguments.get("types"), site.arguments.get("kw_types")), site, found, accounted):
            return UNKNOWN
    for site in run.members:
        if site.kind == "alloc" and site.value.space == "TMEM" and site.node not in accounted \
                and pick.holds(site.guard):
            return UNKNOWN  # made in the body, allocated by something we do not model
    return found


def _collect(pick: Picker, value: Any, by: Site | None, found: list[Allocation], accounted: set[nodes.Call]) -> bool:
    if pick.every_way(_no_tmem, value):
        _alloc_nodes(value, accounted, 0)
        return True
    item = pick.pick(value)
    if item is None or isinstance(item, (o.Barrier, str, int, float)):
        return True
    children = tree_children(item)
    if children is not None:
        return all(_collect(pick, element, by, found, accounted) for element in children)
    ref = o.base_ref(item)
    if isinstance(ref, o.Member):
        ref = ref.ref
    if not isinstance(ref, (o.Alloc, o.Union)):
        return isinstance(item, api.ApiValue)  # semaphores and other API objects: no TMEM
    if not _account(pick, ref, accounted):
        return False
    collective = pick.collective(ref)
    if collective is UNKNOWN or collective is decide.MIXED:
        return False
    if collective is not None:
        found.append(Allocation(ref, bool(collective), by))
    return True


def _no_tmem(item: Any) -> bool:
    """A part of a scratch that allocates no TMEM however it was chosen (`_collect` finds
    nothing in it and can follow it)."""
    if item is None or isinstance(item, (o.Barrier, str, int, float)):
        return True
    ref = o.base_ref(item)
    if isinstance(ref, o.Alloc):
        return ref.space != "TMEM"
    return isinstance(ref, api.ApiValue)


def _account(pick: Picker, ref: Any, accounted: set[nodes.Call]) -> bool:
    if isinstance(ref, o.Alloc):
        accounted.add(ref.node)
        return True
    leaves = pick.leaves(ref.groups)
    if leaves is UNKNOWN:
        return False
    return all(_account(pick, leaf, accounted) for leaf in leaves)


def pallas_call_scratch(ctx: Context) -> set[nodes.Call]:
    """The allocation calls found in any `pl.pallas_call`'s scratch, in any setting."""
    found: set[nodes.Call] = set()
    for site in ctx.trace.sites("kernel"):
        if api_function(site) == PALLAS_CALL:
            _alloc_nodes(site.arguments.get("scratch_shapes"), found, 0)
    return found


def _alloc_nodes(value: Any, found: set[nodes.Call], depth: int) -> None:
    if depth > 16:
        return
    for _, item in o.split(value):
        item = o.base_ref(item)
        if isinstance(item, o.Member):
            item = item.ref
        if isinstance(item, o.Alloc):
            found.add(item.node)
        elif isinstance(item, o.Union):
            _alloc_nodes(item.groups, found, depth + 1)
        else:
            for element in tree_children(item) or ():
                _alloc_nodes(element, found, depth + 1)


def without_pairs(ctx: Context, node: nodes.NodeNG) -> bool:
    """Does a kernel run allocate the TMEM or RefUnion made at `node` (as scratch or by a
    `pl.run_scoped` of its body, or a union holding it) where its cluster has an odd number of
    blocks, none, or no cluster at all (a `pl.pallas_call`)? Collective TMEM there is PLS013's
    error, so a fix making it collective is not offered."""
    for run in kernel_runs(ctx):
        def check(pick: Picker, run: KernelRun = run) -> Any:
            values = [run.site.arguments.get(name) for name in ("scratch_types", "scratch_shapes")]
            values += [value for site in run.members if site.kind == "run_scoped" and pick.holds(site.guard)
                       for value in (site.arguments.get("types"), site.arguments.get("kw_types"))]
            if not any(_holds(pick, value, node, 0) for value in values if value is not None):
                return None
            if run.api == PALLAS_CALL:
                return True
            cluster = cluster_of(pick, run)
            return UNKNOWN if cluster is UNKNOWN else cluster.blocks % 2 == 1
        if any(outcome is True for _, outcome in explore(check, run.site.guard)):
            return True
    return False


def _holds(pick: Picker, value: Any, node: nodes.NodeNG, depth: int) -> bool:
    item = pick.pick(value)
    if depth > 8:
        return False
    if isinstance(item, dict):
        return any(_holds(pick, element, node, depth + 1) for element in item.values())
    if isinstance(item, (tuple, list)):
        return any(_holds(pick, element, node, depth + 1) for element in item)
    ref = o.base_ref(item)
    if isinstance(ref, o.Member):
        ref = ref.ref
    if isinstance(ref, o.Alloc):
        return ref.node is node
    if isinstance(ref, o.Union):
        if ref.node is node:
            return True
        leaves = pick.leaves(ref.groups)
        return leaves is not UNKNOWN and any(_holds(pick, leaf, node, depth + 1) for leaf in leaves)
    return False


def plain_tmem_left(ctx: Context, made_collective: set[nodes.Call]) -> Any:
    """Would a kernel run that allocates one of the TMEM allocations at `made_collective` still
    allocate non-collective TMEM once those are made collective (JAX: `Can't mix collective and
    non-collective TMEM allocations within the same kernel.`, PLS014)? True, False (no run is
    left mixed, and some run allocates them), or UNKNOWN."""
    outcomes = []
    for run in kernel_runs(ctx):
        def check(pick: Picker, run: KernelRun = run) -> Any:
            allocations = tmem_allocations(pick, run)
            if allocations is UNKNOWN:
                return UNKNOWN
            held = {leaf.node for allocation in allocations for leaf in _alloc_leaves(pick, allocation.ref)}
            if not held & made_collective:
                return None
            return any(not allocation.collective and not {leaf.node for leaf in _alloc_leaves(pick, allocation.ref)}
                       <= made_collective for allocation in allocations)
        outcomes += [outcome for _, outcome in explore(check, run.site.guard)]
    if True in outcomes:
        return True
    if UNKNOWN in outcomes or False not in outcomes:
        return UNKNOWN
    return False


def _alloc_leaves(pick: Picker, ref: Any) -> list[o.Alloc]:
    if isinstance(ref, o.Alloc):
        return [ref]
    leaves = pick.leaves(ref.groups)
    return [] if leaves is UNKNOWN else [leaf for item in leaves for leaf in _alloc_leaves(pick, item)]


def lowered(ctx: Context, pick: Picker, run: KernelRun) -> Any:
    """Does Mosaic GPU lower the kernel run (True), or never (False: JAX only traces it,
    `Site.traced_only`, or tracing surely raises first, `trace_raises`, or the kernel is run by
    an interpreter, `interpret=`); UNKNOWN when whether it is interpreted is not known. The
    lowering rules check nothing where it is not."""
    if run.site.traced_only:
        return False
    interpreted = pick.truth(run.site.arguments.get("interpret"), free=True)
    if interpreted is UNKNOWN:
        return UNKNOWN
    return not interpreted and not trace_raises(ctx, pick, run)


def trace_raises(ctx: Context, pick: Picker, run: KernelRun) -> bool:
    """Does JAX surely raise before it lowers the kernel? An MMA of the run when it is traced
    (`mma`: its shapes, its scales, its operands' memory spaces, its barrier), a
    `tcgen05_commit_arrive` (its barrier), or the constructor of an allocation the kernel is
    given or makes (`allocation_raises`: the scratch is made before the kernel is built). Then
    nothing JAX checks when lowering is reached. (A plain TMEM operand of a collective MMA is
    `fails_tracing_first`'s: JAX's cached check may pass it, `refusals.plain_collective_raises`.)"""
    may_raise = ctx.state(_MAY_RAISE_WHEN_TRACED)
    if any(_may_raise_when_traced(may_raise, site) and pick.holds(site.guard) and _raises_when_traced(pick, site)
           for site in run.members):
        return True
    return allocation_raises(ctx, pick, run, in_body=True)


def _may_raise_when_traced(known: dict[int, tuple[Site, bool]], site: Site) -> bool:
    """Does tracing the MMA or commit raise on some consistent choice of what it picks? Asked
    once per site (`explore`), where each lowering rule asked again on each of its paths (a
    picker more constrained than the site's guard makes one of the choices explored here):
    most MMAs raise on none, and no path of a rule needs asking about them."""
    if site.kind not in ("mma", "commit"):
        return False
    found = known.get(id(site))
    if found is None or found[0] is not site:
        outcomes = explore(functools.partial(_raises_when_traced, site=site), site.guard)
        found = known[id(site)] = (site, any(outcome is not False for _, outcome in outcomes))
    return found[1]


_MAY_RAISE_WHEN_TRACED: State[dict[int, tuple[Site, bool]]] = State("MMAs and commits whose trace may raise",
                                                                    lambda ctx: {})


def body_traced(ctx: Context, pick: Picker, site: Site) -> bool:
    """Does JAX's trace of the body get to `site`? Not where building its kernel's scratch
    surely raises first (`allocation_raises`), nor after a call of the body that surely raises
    when traced (an earlier MMA's or commit's checks, `_stops_trace`): JAX reports one error
    and stops there (two MMAs on one plain accumulator: the first)."""
    run = run_of(ctx, site)
    if run is None:
        return True
    if allocation_raises(ctx, pick, run, in_body=False):
        return False
    stopping = _stopping_calls(ctx, run)
    if not stopping:
        return True  # (no call of the run raises on any path: most runs)
    for earlier in run.members:
        if earlier is site:
            return True
        raising = stopping.get(id(earlier))
        if raising and earlier.node is not site.node and any(
                guard <= pick.guard or pick.holds(guard) for guard in raising):
            return False  # (on this path, the earlier call surely raises: decided once per call)
    return True


class TracedSiteRule(SiteRule):
    """A check JAX makes as it builds a kernel's scratch or traces its body: not reported where
    JAX's trace never gets to the site (`body_traced`), whatever the rule's own problem says."""

    def reached(self, ctx: Context, site: Site, pick: Picker) -> bool:
        return body_traced(ctx, pick, site)


def _stops_trace(pick: Picker, run: KernelRun, site: Site) -> bool:
    """Does tracing this MMA or commit surely raise: its own checks (`_raises_when_traced`),
    or a plain TMEM operand of a collective MMA that JAX's cache does not pass (PLS001)? (The
    body's allocations that raise are `_raising_allocations`'.)"""
    return _raises_when_traced(pick, site) or plain_collective_raises(pick, site, run.members)


def _stopping_calls(ctx: Context, run: KernelRun) -> dict[int, list[o.Guard]]:
    """The run's body's calls whose trace surely raises on some path (`_stops_trace`,
    `_copy_raises`), by their ids, with the guards under which they do; found for a run when
    a site of it is first judged (the other kernels a tokamax op runs, replayed, never are)."""
    known = ctx.state(_STOPPING)
    found = known.get(id(run.site))
    if found is None:
        found = known[id(run.site)] = {}
        for site in run.members[:-1]:  # (nothing follows the last)
            if site.kind in ("alloc", "union"):
                made = ctx.state(_RAISING_ALLOCATIONS).get(id(site.value))
                raising = made[1] if made is not None and made[0] is site else []
            elif site.kind in ("mma", "commit"):
                raising = [guard for guard, outcome in explore(
                    functools.partial(_stops_trace, run=run, site=site), site.guard) if outcome is True]
            elif site.kind == "copy":
                raising = [guard for guard, outcome in explore(functools.partial(_copy_raises, site=site), site.guard)
                           if outcome is True]
            else:
                continue
            if raising:
                found[id(site)] = raising
    return found


def _copy_raises(pick: Picker, site: Site) -> bool:
    """Does a copy into TMEM (`async_copy_scales_to_tmem`, `async_copy_smem_to_tmem`, ...)
    surely raise: a source that is no SMEM ref or a target that is no TMEM ref, which its
    abstract evaluation refuses (`... target must be a TMEM ref`) before any MMA after it?"""
    for name, space in (("smem_ref", "SMEM"), ("tmem_ref", "TMEM")):
        ref = o.base_ref(pick.pick(site.arguments.get(name)))
        if isinstance(ref, (o.Alloc, o.Operand)) and isinstance(ref.space, str) and ref.space != space:
            return True
    return False


# per kernel run (by its site's id): `_stopping_calls`
_STOPPING: State[dict[int, dict[int, list[o.Guard]]]] = State("calls whose trace raises", lambda ctx: {})


def allocation_raises(ctx: Context, pick: Picker, run: KernelRun, in_body: bool) -> bool:
    """Does making one of the run's allocations surely raise: its scratch, which JAX makes
    before it builds the kernel, and (`in_body`) what the body's `pl.run_scoped` calls make? A
    TMEM constructor's checks (`refusals.tmem_raises`), an SMEM or GMEM allocation given a
    TMEM-only argument (PLS003), a RefUnion of spaces JAX does not alias (PLS007)."""
    raising = ctx.state(_RAISING_ALLOCATIONS)
    if not raising:
        return False  # (no allocation of the file raises on any path: most files)
    values = [scratch_value(run)]
    if in_body:
        values += [value for site in run.members if site.kind == "run_scoped" and pick.holds(site.guard)
                   for value in (site.arguments.get("types"), site.arguments.get("kw_types"))]
    made: list[Any] = []
    for value in values:
        _made_parts(pick, value, made, 0)
    return any(made_raises(pick, found[0]) for part in made if (found := raising.get(id(part))) is not None)


def _made_parts(pick: Picker, value: Any, found: list[Any], depth: int) -> None:
    """The allocations and RefUnions a pytree of allocations holds (a union's members too)."""
    item = pick.pick(value)
    if depth > 16 or item is None:
        return
    children = tree_children(item)
    if children is not None:
        for element in children:
            _made_parts(pick, element, found, depth + 1)
        return
    ref = o.base_ref(item)
    if isinstance(ref, o.Member):
        ref = ref.ref
    if isinstance(ref, (o.Alloc, o.Union)):
        found.append(ref)
    if isinstance(ref, o.Union):
        _made_parts(pick, ref.groups, found, depth + 1)


def _raises_when_traced(pick: Picker, site: Site) -> bool:
    if site.kind == "mma":
        return traced_mma_raises(pick, site)
    return site.kind == "commit" and traced_commit_raises(pick, site)


def _raising_allocations(ctx: Context) -> dict[int, tuple[Site, list[o.Guard]]]:
    """The "alloc" and "union" sites whose constructor surely raises on some path
    (`made_raises`), with the guards under which it does, by the id of the allocation or
    union each made."""
    found: dict[int, tuple[Site, list[o.Guard]]] = {}
    for site in ctx.trace.sites("alloc") + ctx.trace.sites("union"):
        if site.kind == "alloc" and site.value.space != "TMEM" and all(
                site.arguments.get(name) is None for name in api.TMEM_ONLY_KEYWORDS):
            continue  # (an SMEM allocation given none of them: most allocations)
        raising = [guard for guard, outcome in explore(functools.partial(made_raises, site=site), site.guard)
                   if outcome is True]
        if raising:
            found[id(site.value)] = (site, raising)
    return found


_RAISING_ALLOCATIONS: State[dict[int, tuple[Site, list[o.Guard]]]] = State(
    "allocations whose constructor raises", _raising_allocations)


def fails_tracing_first(pick: Picker, run: KernelRun, plain: list[Allocation]) -> bool:
    """Does a collective MMA of this run use one of the `plain` (non-collective) TMEM
    allocations as accumulator or LHS? JAX then stops at trace time (PLS001), before lowering
    could see anything about the kernel's allocations."""
    # (the allocations themselves: one helper's `plgpu.TMEM(...)` call makes both kinds)
    allocs = {id(allocation.ref) for allocation in plain if isinstance(allocation.ref, o.Alloc)}
    return any(pick.holds(site.guard) and plain_collective_raises(
        pick, site, run.members, plain=lambda ref: id(ref) in allocs) for site in run.members)


def cluster_barriers(pick: Picker, run: KernelRun) -> list[tuple[o.Barrier, Site | None]]:
    """The `plgpu.ClusterBarrier`s the run allocates (its scratch, then each `pl.run_scoped` of
    its body), with the `pl.run_scoped` site that allocates each (None for the scratch); the
    parts we cannot follow are left out."""
    found: list[tuple[o.Barrier, Site | None]] = []
    _cluster_barriers_in(pick, scratch_value(run), None, 0, found)
    for site in run.members:
        if site.kind == "run_scoped" and pick.holds(site.guard):
            _cluster_barriers_in(pick, (site.arguments.get("types"), site.arguments.get("kw_types")), site, 0, found)
    return found


def _cluster_barriers_in(pick: Picker, value: Any, by: Site | None, depth: int,
                         found: list[tuple[o.Barrier, Site | None]]) -> None:
    """(Not a nested function: a recursive closure is a reference cycle, and the picker it
    holds would wait for the cyclic collector.)"""
    if pick.every_way(_no_cluster_barrier, value):
        return
    item = pick.pick(value)
    if depth > 16:
        return
    if isinstance(item, dict):
        item = list(item.values())
    if isinstance(item, (tuple, list)):
        for element in item:
            _cluster_barriers_in(pick, element, by, depth + 1, found)
    elif isinstance(item, o.Barrier) and item.kind == "ClusterBarrier":
        found.append((item, by))


def _no_cluster_barrier(item: Any) -> bool:
    return not (isinstance(item, o.Barrier) and item.kind == "ClusterBarrier")


def unknown_barrier_axis(pick: Picker, run: KernelRun) -> tuple[o.Barrier, Site | None, str, Cluster] | None | Any:
    """The first cluster barrier whose `collective_axes` name an axis the kernel's cluster does
    not have, with that axis. JAX resolves these axes when it first sizes the kernel's
    resources, before anything else is lowered: `Unknown cluster axis {ax}, available axes:
    [...]` (PLS012). None, or UNKNOWN when the cluster or an axis cannot be read."""
    if run.api != MOSAIC_KERNEL:
        return None
    barriers = cluster_barriers(pick, run)
    if not barriers:
        return None
    cluster = cluster_of(pick, run)
    if cluster is UNKNOWN:
        return UNKNOWN
    for barrier, by in barriers:
        axes = _leaves(pick, dict(barrier.arguments).get("collective_axes"), 0)
        if axes is UNKNOWN:
            return UNKNOWN
        for axis in axes:
            if axis not in cluster.names:
                return (barrier, by, axis, cluster)
    return None


def unknown_op_axis(pick: Picker, run: KernelRun) -> bool:
    """Does an op of the kernel (an MMA, a commit, a copy into TMEM), surely on this path,
    name a collective axis its cluster does not have (PLS012)? Lowering looks each op's axis
    up as it lowers it, and stops there, before it compares the kernel's ops (PLS017)."""
    cluster = cluster_of(pick, run)
    if cluster is UNKNOWN:
        return False
    for member in run.members:
        axis = member.arguments.get("collective_axis") if member.kind in ("mma", "commit", "copy") else None
        if isinstance(axis, str) and axis not in cluster.names and member.guard <= pick.guard:
            return True
    return False


def _leaves(pick: Picker, value: Any, depth: int) -> list[str] | Any:
    item = pick.pick(value)
    if isinstance(item, str):
        return [item]
    if isinstance(item, (tuple, list)) and depth < 8:
        found: list[str] = []
        for element in item:
            leaves = _leaves(pick, element, depth + 1)
            if leaves is UNKNOWN:
                return UNKNOWN
            found += leaves
        return found
    return UNKNOWN


def fails_allocating(pick: Picker, run: KernelRun) -> Any:
    """Does lowering this run stop at its TMEM allocations, before its body is lowered? JAX
    checks them first (the kernel's resources, then the launch's init: mixed collective and
    non-collective TMEM, PLS014; collective TMEM without an even number of blocks per
    cluster, PLS013), so what the body's ops would raise when lowering (PLS012, PLS016,
    PLS017) is never reported there. A cluster barrier on an unknown axis stops it even
    earlier (PLS012 on the barrier). True, False or UNKNOWN."""
    barrier = unknown_barrier_axis(pick, run)
    if barrier is not None:
        return True if barrier is not UNKNOWN else UNKNOWN
    allocations = tmem_allocations(pick, run)
    if allocations is UNKNOWN:
        return UNKNOWN
    collective = [allocation for allocation in allocations if allocation.collective]
    if not collective:
        return False
    plain = [allocation for allocation in allocations if not allocation.collective]
    if plain:
        return not fails_tracing_first(pick, run, plain)
    if run.api == PALLAS_CALL:
        return True
    cluster = cluster_of(pick, run)
    return UNKNOWN if cluster is UNKNOWN else cluster.blocks % 2 == 1


def describe_refs(ctx: Context, allocations: list[Allocation]) -> str:
    """"'acc' (line 12), the RefUnion at line 14": allocations and unions, for messages."""
    shown = []
    for allocation in allocations:
        made = allocation.ref
        what = "the RefUnion" if isinstance(made, o.Union) else "the TMEM"
        where = ctx.where(made.node)
        call = next((node for node in reversed(getattr(made, "chain", ())) if isinstance(node, nodes.Call)
                     and ctx.is_local(node) and node.lineno != made.node.lineno), None)
        if call is not None:
            where += f", made by the call at {ctx.where(call)}"
        shown.append(f"'{made.name}' ({where})" if made.name else f"{what} at {where}")
    return ", ".join(shown)


# ---------------------------------------------------------------------------
# Rules about a kernel run as a whole.


class KernelRule(Rule):
    """A rule about one kernel run (its cluster, its allocations). `problem` returns a falsy
    value when the run is fine, UNKNOWN when it cannot tell, else a detail; `reported` says
    which site the finding goes on (the kernel's, or the `pl.run_scoped` that allocates)."""

    apis: ClassVar[tuple[str, ...]] = (MOSAIC_KERNEL,)
    # JAX names no line: a `pl.run_scoped` in a helper module is reported on the call of the
    # analysed file that leads there (the kernel's file), not in the helper module
    in_own_file: ClassVar[bool] = False

    def problem(self, ctx: Context, run: KernelRun, pick: Picker) -> Any:
        raise NotImplementedError

    def message(self, ctx: Context, run: KernelRun, detail: Any) -> str:
        raise NotImplementedError

    def reported(self, run: KernelRun, detail: Any) -> Site:
        return run.site

    def fixes(self, ctx: Context, run: KernelRun, detail: Any) -> tuple[Fix, ...]:
        return ()

    def severity_of(self, run: KernelRun, detail: Any) -> Severity:
        return self.severity

    def same_problem(self, ctx: Context, run: KernelRun, detail: Any) -> Any:
        return self.message(ctx, run, detail)

    def check(self, ctx: Context) -> Iterator[Finding]:
        found: dict[tuple[nodes.NodeNG, Any], list[Any]] = {}  # key -> [run, detail, site, bad]
        decided: dict[nodes.Call, list[tuple[o.Guard, o.Chain]]] = {}
        for run in ctx.state(_REPORTING):
            if run.api not in self.apis:
                continue
            for guard, outcome in explore(functools.partial(self.problem, ctx, run), run.site.guard):
                if outcome is UNKNOWN or decide.unchosen(guard):
                    continue  # (unknown, or in a setting the file does not choose: not its to report)
                decided.setdefault(run.node, []).append((guard, run.site.chain))
                if not outcome:
                    continue
                site = self.reported(run, outcome)
                reported = ctx.reportable_at(site, self.lowering, self.jax_exception)
                if reported is None:
                    continue
                key = (reported, self.same_problem(ctx, run, outcome))
                found.setdefault(key, [run, outcome, site, []])[3].append((guard, run.site.chain))
        for (reported, _), (run, detail, site, bad) in found.items():
            others = decided.get(run.node, [])
            node = (reported if self.in_own_file and site is not run.site and site.node.root() is not ctx.module
                    else site.node)
            yield from finding(self, ctx, node, reported, functools.partial(self.message, ctx, run, detail),
                               self.severity_of(run, detail), bad, others,
                               functools.partial(self.fixes, ctx, run, detail))


def tie_is_right(ctx: Context, union: nodes.NodeNG, tied: set[nodes.Call]) -> bool:
    """Would the RefUnion made at `union` be right in every setting of every kernel run that
    allocates it, once all its TMEM members take the flag its members made at `tied` have
    there: one flag in each setting (not UNKNOWN), an even cluster of a `plgpu.kernel` where
    it is collective (PLS013), the kernel's other TMEM with the same flag (PLS014), and every
    MMA using a member collective exactly when the union is (jax 0.12: `Collective attributes
    are inconsistent across operations in the kernel.`)? False when some setting is wrong or
    cannot be told, or no run allocates it."""
    outcomes: list[Any] = []
    for run in kernel_runs(ctx):
        def check(pick: Picker, run: KernelRun = run) -> Any:
            values = [scratch_value(run)] + [
                value for site in run.members if site.kind == "run_scoped" and pick.holds(site.guard)
                for value in (site.arguments.get("types"), site.arguments.get("kw_types"))]
            held: list[o.Union] = []
            leaves: list[o.Alloc] = []
            for value in values:
                if value is not None and not _walk_tmem(pick, value, union, held, leaves, 0):
                    return UNKNOWN
            if not held:
                return None
            members = {leaf.node for found in held for leaf in _alloc_leaves(pick, found)}
            flags = {pick.flag(leaf.collective) for leaf in leaves if leaf.node in tied}
            if len(flags) != 1 or UNKNOWN in flags:
                return UNKNOWN
            flag = bool(flags.pop())
            if flag:
                cluster = cluster_of(pick, run)
                if run.api != MOSAIC_KERNEL or cluster is UNKNOWN or cluster.blocks % 2:
                    return UNKNOWN if cluster is UNKNOWN else False
            for leaf in leaves:
                if leaf.node not in members:
                    other = pick.flag(leaf.collective)
                    if other is UNKNOWN or bool(other) != flag:
                        return UNKNOWN if other is UNKNOWN else False
            for site in run.members:
                if site.kind != "mma" or not pick.holds(site.guard):
                    continue
                if not any(_member_of(pick.pick(site.arguments.get(name)), union) for name in ("acc", "a")):
                    continue
                collective = pick.given(site.arguments.get("collective_axis"))
                if collective is UNKNOWN or collective != flag:
                    return UNKNOWN if collective is UNKNOWN else False
            return True
        outcomes += [outcome for _, outcome in explore(check, run.site.guard)]
    return True in outcomes and all(outcome is True or outcome is None for outcome in outcomes)


def _member_of(operand: Any, union: nodes.NodeNG) -> bool:
    ref = o.base_ref(operand)
    if isinstance(ref, o.Union):
        return ref.node is union
    if isinstance(ref, o.Member):
        return ref.union.node is union or isinstance(ref.ref, o.Union) and ref.ref.node is union
    return False


def _walk_tmem(pick: Picker, value: Any, union: nodes.NodeNG, held: list[o.Union], leaves: list[o.Alloc],
               depth: int) -> bool:
    """The TMEM allocations among `value` (a pytree of scratch) into `leaves`, the unions made
    at `union` into `held`; False when a part cannot be followed."""
    if depth > 16:
        return False
    item = pick.pick(value)
    if item is None or isinstance(item, (o.Barrier, str, int, float)):
        return True
    children = tree_children(item)
    if children is not None:
        return all(_walk_tmem(pick, element, union, held, leaves, depth + 1) for element in children)
    ref = o.base_ref(item)
    if isinstance(ref, o.Member):
        ref = ref.ref
    if isinstance(ref, o.Alloc):
        if ref.space == "TMEM":
            leaves.append(ref)
        return True
    if isinstance(ref, o.Union):
        if ref.node is union:
            held.append(ref)
        found = pick.leaves(ref.groups)
        return found is not UNKNOWN and all(_walk_tmem(pick, leaf, union, held, leaves, depth + 1) for leaf in found)
    return isinstance(item, api.ApiValue)
