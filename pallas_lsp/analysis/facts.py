"""What the analysis knows about TMEM allocations and MMA operands, for the editor's hover.

Computed in the same pass as the findings (the server asks for it), so a hover is served from
the cached result. Each fact is Markdown attached to a span of the analysed file: a memory-space
constructor call, or an operand of a `tcgen05_mma`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

from astroid import nodes

from . import fixes
from .context import Context
from .findings import Span
from .trace import Site, decide
from .trace import objects as o
from .trace.pick import Picker, explore
from .values import UNKNOWN

_ROLES = (("acc", "accumulator"), ("a", "LHS"), ("b", "RHS"))


@dataclass(frozen=True)
class Fact:
    span: Span
    markdown: str


@dataclass(frozen=True)
class _Use:
    mma: nodes.Call
    role: str
    collective: Any  # True, False, or a condition text


def facts(ctx: Context) -> list[Fact]:
    uses: dict[nodes.Call, list[_Use]] = defaultdict(list)
    allocs: dict[nodes.Call, list[Site]] = defaultdict(list)
    for site in ctx.trace.sites("alloc"):
        allocs[site.node].append(site)
    mmas: dict[nodes.Call, list[Site]] = defaultdict(list)
    for site in ctx.trace.sites("mma"):
        mmas[site.node].append(site)
    found: list[Fact] = []
    for call, sites in mmas.items():
        found.extend(_operand_facts(ctx, call, sites, uses))
    for call, sites in allocs.items():
        fact = _allocation_fact(ctx, call, sites, uses.get(call, []))
        if fact is not None:
            found.append(fact)
    # in the order of the text (what a hover finds first at a place stays first): the order of
    # the trace's sites is its own business, and a replayed trace may meet them in another one
    found.sort(key=lambda fact: (fact.span.path or "", fact.span.line, fact.span.col, fact.span.end_line,
                                 fact.span.end_col))
    return found


_Run = tuple[o.Guard, Any, o.Chain]  # (guard, outcome, chain)


def _runs(sites: list[Site], check: Callable[[Site, Picker], Any]) -> list[_Run]:
    """(guard, outcome, chain) of `check` over every site of one call."""
    return [(guard, outcome, site.chain) for site in sites
            for guard, outcome in explore(functools.partial(check, site), site.guard)]


def _operand_facts(ctx: Context, call: nodes.Call, sites: list[Site], uses: dict[nodes.Call, list[_Use]]) -> list[Fact]:
    if any(isinstance(arg, nodes.Starred) for arg in call.args) or len(call.args) < 3:
        return []
    collective = _summary(_runs(sites, lambda site, pick: _axis_given(pick, site.arguments.get("collective_axis"))))
    found = []
    for (name, role), operand in zip(_ROLES, call.args[:3]):
        def ref_of(site: Site, pick: Picker, name: str = name) -> Any:
            return _alloc_of(pick.pick(site.arguments.get(name)))

        refs = _runs(sites, ref_of)
        made = {outcome.node: outcome for _, outcome, _ in refs if isinstance(outcome, o.Alloc)}
        if len(made) != 1:
            continue
        alloc = next(iter(made.values()))
        uses[alloc.node].append(_Use(call, role, collective))
        span = ctx.span(operand)
        if span is not None and ctx.is_local(operand):
            lines = [f"**{role}** of `tcgen05_mma` ({_collective_text(collective)})", ""]
            lines += _allocation_lines(ctx, alloc.node, alloc.space, alloc.name, _flag_text(sites_of(ctx, alloc)))
            found.append(Fact(span, "\n".join(lines)))
    return found


def sites_of(ctx: Context, alloc: o.Alloc) -> list[Site]:
    return [site for site in ctx.trace.sites("alloc") if site.node is alloc.node]


def _axis_given(pick: Picker, value: Any) -> Any:
    item = pick.pick(value)
    if isinstance(item, o.Free):
        return pick._choose(decide.is_set(item, pick.guard))
    return pick.given(item)


def _alloc_of(value: Any) -> Any:
    ref = o.base_ref(value)
    if isinstance(ref, o.Member):
        ref = ref.ref
    return ref if isinstance(ref, o.Alloc) else UNKNOWN


def _allocation_fact(ctx: Context, call: nodes.Call, sites: list[Site], uses: list[_Use]) -> Fact | None:
    span = ctx.span(call)
    if span is None or not ctx.is_local(call):
        return None
    first = sites[0].value
    lines = _allocation_lines(ctx, call, first.space, first.name, _flag_text(sites), here=True)
    for use in uses:
        lines.append(f"- {use.role} of the `tcgen05_mma` at {ctx.where(use.mma)} "
                     f"({_collective_text(use.collective)})")
    return Fact(span, "\n".join(lines))


def _allocation_lines(ctx: Context, node: nodes.Call, space: str, name: str, flag: str,
                      here: bool = False) -> list[str]:
    named = f" `{name}`" if name else ""
    where = "" if here else f", allocated at {ctx.where(node)}"
    lines = [f"**{space}** allocation{named}{where}", ""]
    shape, dtype = (node.args + [None, None])[:2]
    if shape is not None:
        lines.append(f"- shape `{shape.as_string()}`" + (f", dtype `{dtype.as_string()}`" if dtype else ""))
    if space == "TMEM":
        lines.append(f"- collective: {flag}")
    return lines


def _flag_text(sites: list[Site]) -> str:
    if not sites:
        return "unknown"
    node = sites[0].node
    summary = _summary(_runs(sites, lambda site, pick: _flag(pick, site.value)))
    keyword = fixes.keyword(node, "collective")
    written = "" if keyword is None else f" (`collective={keyword.value.as_string()}`)"
    if summary is True:
        return "yes" + written
    if summary is False:
        return "no" + (written or " (no `collective=`)")
    if summary is UNKNOWN:
        return "unknown" + written
    return f"{summary}{written}"


def _flag(pick: Picker, alloc: Any) -> Any:
    if not isinstance(alloc, o.Alloc):
        return UNKNOWN
    value = pick.flag(alloc.collective)
    return UNKNOWN if value is UNKNOWN else bool(value)


def _summary(runs: list[_Run]) -> Any:
    """True/False when every decided run agrees, UNKNOWN when none decides, else a condition
    ('yes when config.collective is True')."""
    decided = [(guard, outcome, chain) for guard, outcome, chain in runs if outcome is True or outcome is False]
    values = {outcome for _, outcome, _ in decided}
    if not values:
        return UNKNOWN
    if len(values) == 1:
        return values.pop()
    condition = decide.Verdicts([(g, c) for g, outcome, c in decided if outcome is True],
                                [(g, c) for g, outcome, c in decided if outcome is False]).describe()
    return f"yes {condition}, otherwise no"


def _collective_text(collective: Any) -> str:
    if collective is True:
        return "collective"
    if collective is False:
        return "not collective"
    if collective is UNKNOWN:
        return "collective or not: unknown"
    return f"collective: {collective}"
