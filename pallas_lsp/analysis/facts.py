"""What the analysis knows about TMEM allocations and MMA operands, for the editor's hover.

Computed in the same pass as the findings (the server asks for it), so a hover is served from
the cached result. Each fact is Markdown attached to a span of the analysed file: a memory-space
constructor call, or an operand of a `tcgen05_mma`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from astroid import nodes

from . import fixes, values as v
from .api import Kind
from .context import Context
from .findings import Span
from .solve import Concretizer, Run, describe
from .values import UNKNOWN

_ROLES = ("accumulator", "LHS", "RHS")


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
    found: list[Fact] = []
    for call in ctx.flow.sites(Kind.MMA):
        found.extend(_operand_facts(ctx, call, uses))
    for call in ctx.flow.sites(Kind.ALLOC):
        fact = _allocation_fact(ctx, call, uses.get(call, []))
        if fact is not None:
            found.append(fact)
    return found


def _operand_facts(ctx: Context, call: nodes.Call, uses: dict) -> Iterable[Fact]:
    if any(isinstance(arg, nodes.Starred) for arg in call.args) or len(call.args) < 3:
        return
    written = fixes.keyword(call, "collective_axis")
    axis = written.value if written is not None else None
    axis_runs = _runs(ctx, ctx.flow.evaluate(axis), lambda conc, value: conc.is_none(value) is False)
    collective = _summary(axis_runs)
    for role, operand in zip(_ROLES, call.args[:3]):
        lazy = ctx.flow.evaluate(operand)
        refs = _runs(ctx, lazy, lambda conc, value: value)
        allocs = {run.outcome.alloc.node: run.outcome.alloc for run in refs if isinstance(run.outcome, v.Ref)}
        if len(allocs) != 1:
            continue
        alloc = next(iter(allocs.values()))
        uses[alloc.node].append(_Use(call, role, collective))
        span = ctx.span(operand)
        if span is not None and ctx.is_local(operand):
            lines = [f"**{role}** of `tcgen05_mma` ({_collective_text(collective)})", ""]
            lines += _allocation_lines(ctx, alloc)
            yield Fact(span, "\n".join(lines))


def _allocation_fact(ctx: Context, call: nodes.Call, uses: list[_Use]) -> Fact | None:
    alloc = ctx.flow.evaluate(call)
    span = ctx.span(call)
    if not isinstance(alloc, v.Alloc) or span is None:
        return None
    lines = _allocation_lines(ctx, alloc, here=True)
    for use in uses:
        lines.append(f"- {use.role} of the `tcgen05_mma` at {ctx.where(use.mma)} "
                     f"({_collective_text(use.collective)})")
    return Fact(span, "\n".join(lines))


def _allocation_lines(ctx: Context, alloc: v.Alloc, here: bool = False) -> list[str]:
    space = alloc.space
    name = f" `{alloc.name}`" if alloc.name else ""
    where = "" if here else f", allocated at {ctx.where(alloc.node)}"
    lines = [f"**{space}** allocation{name}{where}", ""]
    shape, dtype = (alloc.node.args + [None, None])[:2]
    if shape is not None:
        lines.append(f"- shape `{shape.as_string()}`" + (f", dtype `{dtype.as_string()}`" if dtype else ""))
    if space == "TMEM":
        lines.append(f"- collective: {_flag_text(ctx, alloc)}")
    return lines


def _flag_text(ctx: Context, alloc: v.Alloc) -> str:
    runs = _runs(ctx, alloc.collective, lambda conc, value: conc.truth(value) if value is not None else False)
    summary = _summary(runs)
    keyword = fixes.keyword(alloc.node, "collective")
    written = "" if keyword is None else f" (`collective={keyword.value.as_string()}`)"
    if summary is True:
        return "yes" + written
    if summary is False:
        return "no" + (written or " (no `collective=`)")
    if summary is UNKNOWN:
        return "unknown" + written
    return f"{summary}{written}"


def _runs(ctx: Context, lazy: v.Lazy, decide) -> list[Run]:
    def check(conc: Concretizer) -> Any:
        return decide(conc, conc.value(lazy))

    return ctx.explore(check) or []


def _summary(runs: list[Run]) -> Any:
    """True/False when every decided run agrees, UNKNOWN when none decides, else a condition
    ('yes when config.collective is True')."""
    decided = [run for run in runs if run.outcome is not UNKNOWN and run.outcome in (True, False)]
    values = {run.outcome for run in decided}
    if not values:
        return UNKNOWN
    if len(values) == 1:
        return values.pop()
    condition = describe([run for run in decided if run.outcome is True], decided)
    return f"yes {condition}, otherwise no"


def _collective_text(collective: Any) -> str:
    if collective is True:
        return "collective"
    if collective is False:
        return "not collective"
    if collective is UNKNOWN:
        return "collective or not: unknown"
    return f"collective: {collective}"
