"""PLS001: a collective MMA on TMEM that was not allocated collective."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterator

from astroid import nodes

from .. import fixes, values as v
from ..api import Kind
from ..context import Context
from ..findings import Applicability, Finding, Fix, Related
from ..solve import Concretizer, Run, describe
from ..values import UNKNOWN
from . import examples
from .base import Invalid, Rule
from .tmem import collective_keyword_text, tmem_allocs, union_collective


@dataclass(frozen=True)
class Problem:
    role: str  # "Accumulator" | "LHS"
    operand: nodes.NodeNG
    ref: Any  # v.Ref or v.UnionRef
    axis: Any
    to_fix: tuple  # the TMEM allocations that need collective=True

    @property
    def member_of(self) -> v.UnionAlloc | None:
        return self.ref.union

    @property
    def key(self) -> tuple:
        target = self.member_of.node if self.member_of is not None else self.ref.alloc.node
        return (self.role, target)


@dataclass(frozen=True)
class Site:
    reported_at: nodes.Call  # the MMA, or the root-module call that leads to it
    call: nodes.Call  # the tcgen05_mma call
    runs: list


@dataclass
class Outcome:
    problems: list[Problem] = field(default_factory=list)
    uses: list[tuple[nodes.Call, bool]] = field(default_factory=list)  # (allocation, collective op)


class NonCollectiveOperand(Rule):
    """## What it does
    Flags a `plgpu.tcgen05_mma(...)` call with `collective_axis` set whose accumulator (first
    argument), or whose LHS when it lives in Tensor Memory, was allocated with
    `plgpu.TMEM(...)` without `collective=True`. The allocation is followed wherever it is:
    kernel scratch (list, tuple or dict), `pl.run_scoped`, closures, helper functions,
    `functools.partial`, `.at[...]` slices, another module of the project.

    When the flag and the axis both depend on a value (`collective=config.collective` and
    `collective_axis="x" if config.collective else None`), the rule reasons about both together
    and reports only a setting that really fails, saying which (`when config.collective is
    True`).

    Accumulators and LHS operands unpacked from a `plgpu.RefUnion` whose TMEM is not collective
    are reported too. JAX does not check them when tracing; lowering fails with `Collective
    attributes are inconsistent across operations in the kernel.` under Warpgroup lowering
    semantics (the default from jax 0.11); under Lane semantics (the default in jax 0.10) it
    lowers without complaint.

    ## Why is this bad?
    A 2-CTA (collective) MMA writes an accumulator that spans the TMEM of both blocks of the
    cluster; the allocation has to be made for that. JAX raises only when the kernel is
    traced, one error at a time, often far from the allocation that needs the change.

    ## Example
    ```python
    scratch_types=dict(acc_tmem=plgpu.TMEM((128, 256), jnp.float32))
    ...
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x")
    ```

    Use instead:
    ```python
    scratch_types=dict(acc_tmem=plgpu.TMEM((128, 256), jnp.float32, collective=True))
    ```

    ## Fix safety
    Adding `collective=True` to the allocation is safe when every MMA that uses the allocation
    is collective and the flag was absent or a literal; it is unsafe when the allocation's flag
    is an expression (it may be right on another path: JAX 0.12 confirms that forcing it on
    can break a single-block kernel, "Collective TMEM allocations are only supported for
    clusters with an even number of blocks"), when a non-collective MMA also uses it, or when
    the allocation is a `pl.pallas_call`'s scratch (a pallas_call has no cluster: PLS013).

    When the flag is a parameter of the function that allocates (`accumulator(m, n,
    collective=False)` around `plgpu.TMEM(..., collective=collective)`), the preferred fix
    passes `collective=True` at the one call that leads to the failing MMA, leaving the helper
    alone for its other callers; it is safe when that parameter serves only the allocation.
    Removing `collective_axis` from the MMA is always unsafe: it turns a 2-CTA MMA into a
    single-CTA one.

    ## JAX message
    `Accumulator Ref must be collective if collective_axis is set.` /
    `LHS Ref must be collective if collective_axis is set.` (trace time, `jax.make_jaxpr`);
    for RefUnion members `Collective attributes are inconsistent across operations in the
    kernel.` (lowering, jax >= 0.11).
    """

    code = "PLS001"
    name = "non-collective-mma-operand"
    summary = "Collective tcgen05_mma on TMEM allocated without collective=True"
    jax_message = "Accumulator Ref must be collective if collective_axis is set."
    triggers = (b"tcgen05", b"TMEM")  # the MMA may sit in an imported helper
    identifiers = frozenset({"tcgen05_mma", "TMEM"})  # an MMA here, or an allocation passed to one
    VALID = (examples.PLS001_VALID,)
    INVALID = (Invalid(examples.PLS001_INVALID, fixed=examples.PLS001_VALID),)

    def check(self, ctx: Context) -> Iterator[Finding]:
        flow = ctx.flow
        sites = [Site(call, call, self._explore(ctx, call)) for call in flow.sites(Kind.MMA)]
        for root_call, helper, invocation, call in flow.foreign_sites(Kind.MMA):
            pins = {flow.call_var(helper): invocation.index}
            sites.append(Site(root_call, call, self._explore(ctx, call, pins)))
        collective_only = _collective_only_uses(site.runs for site in sites)
        for site in sites:
            yield from self._findings(ctx, site, collective_only)

    # -- deciding --------------------------------------------------------------------------

    def _explore(self, ctx: Context, call: nodes.Call, pins: dict | None = None) -> list[Run]:
        operands = _operands(call)
        if operands is None:
            return []
        acc, lhs, axis = operands
        flow = ctx.flow
        lazy = [("Accumulator", acc, flow.evaluate(acc)), ("LHS", lhs, flow.evaluate(lhs))]
        axis_lazy = flow.evaluate(axis)

        def check(conc: Concretizer) -> Any:
            axis_value = conc.value(axis_lazy)
            is_none = conc.is_none(axis_value)
            if is_none is UNKNOWN:
                return UNKNOWN
            outcome = Outcome()
            for role, node, operand in lazy:
                if node is not None:
                    self._operand(conc, outcome, role, node, conc.value(operand), axis_value, not is_none)
            return outcome

        return ctx.explore(check, pins) or []

    @staticmethod
    def _operand(conc: Concretizer, outcome: Outcome, role: str, node: nodes.NodeNG, ref: Any,
                 axis: Any, collective_op: bool) -> None:
        if isinstance(ref, v.Ref) and ref.union is None:
            if ref.alloc.space != "TMEM":
                return
            outcome.uses.append((ref.alloc.node, collective_op))
            if collective_op and conc.truth(conc.argument(ref, ref.alloc.collective)) is False:
                outcome.problems.append(Problem(role, node, ref, axis, (ref.alloc,)))
            return
        union = ref.union if isinstance(ref, (v.Ref, v.UnionRef)) else None
        if union is None or not collective_op:
            return
        if union_collective(conc, union) is False:
            outcome.problems.append(Problem(role, node, ref, axis, tuple(tmem_allocs(conc, union))))

    # -- reporting -------------------------------------------------------------------------

    def _findings(self, ctx: Context, site: Site, collective_only: dict) -> Iterator[Finding]:
        call = site.call
        decided = [run for run in site.runs if run.outcome is not UNKNOWN]
        bad: dict[tuple, list[tuple[Run, Problem]]] = defaultdict(list)
        for run in decided:
            for problem in run.outcome.problems:
                bad[problem.key].append((run, problem))
        span = ctx.span(site.reported_at)
        if span is None:
            return
        for occurrences in bad.values():
            problem = occurrences[0][1]
            condition = describe([run for run, _ in occurrences], decided)
            yield Finding(
                self.code,
                self._message(ctx, site, problem, condition),
                span,
                self.severity,
                related=self._related(ctx, problem),
                fixes=self._fixes(ctx, call, problem, collective_only, [run for run, _ in occurrences]),
            )

    @staticmethod
    def _message(ctx: Context, site: Site, problem: Problem, condition: str) -> str:
        axis = _render(problem.axis)
        if site.call is not site.reported_at:
            axis += f" in the tcgen05_mma at {ctx.where(site.call)}"
        when = f", {condition}" if condition else ""
        union = problem.member_of
        if union is not None:
            name = _display(problem.operand)
            return (
                f"{problem.role} '{name}' must be collective: collective_axis={axis} is set, but it is "
                f"a member of the RefUnion at {ctx.where(union.node)}, whose TMEM is not collective{when} "
                "(JAX misses this when tracing; lowering fails with 'Collective attributes are "
                "inconsistent across operations in the kernel.' from jax 0.11)"
            )
        alloc = problem.ref.alloc
        name = alloc.name or _display(problem.operand)
        return (
            f"{problem.role} '{name}' must be collective: collective_axis={axis} is set, but it is "
            f"allocated at {ctx.where(alloc.node)} {collective_keyword_text(alloc.node)}{when}"
        )

    @staticmethod
    def _related(ctx: Context, problem: Problem) -> tuple[Related, ...]:
        union = problem.member_of
        node = union.node if union is not None else problem.ref.alloc.node
        span = ctx.span(node)
        if span is None:
            return ()
        what = "RefUnion allocated here" if union is not None else "TMEM allocated here"
        return (Related(span, f"{what} {collective_keyword_text(node)}"),)

    def _fixes(self, ctx: Context, call: nodes.Call, problem: Problem, collective_only: dict,
               runs: list[Run]) -> tuple[Fix, ...]:
        found = list(self._call_site_fix(ctx, problem, collective_only, runs))
        union = problem.member_of
        edits = tuple(edit for alloc in problem.to_fix for edit in fixes.set_keyword(ctx, alloc.node, "collective", "True"))
        if edits:
            safe = union is None and collective_only.get(problem.ref.alloc.node, False) and _literal_flag(
                problem.ref.alloc.node
            ) and not _in_pallas_call(ctx, problem.ref.alloc.node)
            title = "Add collective=True to the TMEM allocation" if union is None else (
                "Add collective=True to the RefUnion's TMEM allocations")
            applicability = Applicability.SAFE if safe else Applicability.UNSAFE
            found.append(Fix(title, applicability, edits, preferred=bool(safe) and not found))
        removal = fixes.remove_keyword(ctx, call, "collective_axis")
        if removal:
            found.append(Fix("Remove collective_axis", Applicability.UNSAFE, removal))
        return tuple(found)


    @staticmethod
    def _call_site_fix(ctx: Context, problem: Problem, collective_only: dict, runs: list[Run]) -> Iterator[Fix]:
        """`accumulator(m, n, collective=False)` where the helper allocates with
        `collective=collective`: the flag belongs to this call, not to the helper's body (other
        callers may want it off). Safe when the parameter serves only the allocation."""
        ref = problem.ref
        if problem.member_of is not None:
            return
        found = _flag_parameter(ctx, ref, runs)
        if found is None:
            return
        func, name, invocation = found
        site = invocation.node
        if not isinstance(site, nodes.Call):
            return
        edits = fixes.set_argument(ctx, site, func, name, "True")
        if not edits:
            return
        passed = _passed_value(site, func, name)
        safe = (collective_only.get(ref.alloc.node, False) and (passed is None or isinstance(passed, nodes.Const))
                and _uses_of(func, name) == 1)
        yield Fix(f"Pass {name}=True to {func.name}() at {ctx.where(site)}",
                  Applicability.SAFE if safe else Applicability.UNSAFE, edits, preferred=bool(safe))


def _flag_parameter(ctx: Context, ref: Any, runs: list[Run]) -> tuple | None:
    """(helper, parameter, invocation) when the allocation's flag is a parameter of the
    function around it and every failing setting goes through one call of that function."""
    flag = fixes.keyword(ref.alloc.node, "collective")
    if flag is None or not isinstance(flag.value, nodes.Name):
        return None
    func = flag.value.scope()
    if not isinstance(func, nodes.FunctionDef) or flag.value.name not in func.argnames():
        return None
    var = ctx.flow.call_var(func)
    indices = {dict(ref.pins).get(var, run.assignment.get(var)) for run in runs}
    invocations = ctx.flow.invocations(func)
    if len(indices) != 1:
        return None
    index = indices.pop()
    if not isinstance(index, int) or not 0 <= index < len(invocations):
        return None
    return func, flag.value.name, invocations[index]


def _uses_of(func: nodes.FunctionDef, name: str) -> int:
    return sum(1 for node in func.nodes_of_class(nodes.Name) if node.name == name and node.scope() is func)


def _passed_value(call: nodes.Call, func: nodes.FunctionDef, name: str) -> nodes.NodeNG | None:
    keyword = fixes.keyword(call, name)
    if keyword is not None:
        return keyword.value
    positional = [arg.name for arg in (func.args.posonlyargs or []) + (func.args.args or [])]
    if name in positional and positional.index(name) < len(call.args):
        return call.args[positional.index(name)]
    return None


def _operands(call: nodes.Call) -> tuple | None:
    """(acc, a, collective_axis) of a tcgen05_mma call, or None when `*`/`**` hide them."""
    if any(isinstance(arg, nodes.Starred) for arg in call.args):
        return None
    keywords = {kw.arg: kw.value for kw in call.keywords or ()}
    if None in keywords:
        return None
    if "collective_axis" not in keywords:
        return None
    positional = list(call.args) + [None] * 2
    acc = keywords.get("acc", positional[0])
    lhs = keywords.get("a", positional[1])
    return acc, lhs, keywords["collective_axis"]


def _display(operand: nodes.NodeNG) -> str:
    """How to name an operand: `acc.at[:, pl.ds(0, n)]` is shown as `acc`."""
    while (isinstance(operand, nodes.Subscript) and isinstance(operand.value, nodes.Attribute)
           and operand.value.attrname == "at"):
        operand = operand.value.expr
    return operand.as_string()


def _render(axis: Any) -> str:
    if isinstance(axis, v.Free):
        return axis.label
    return repr(axis)


def _collective_only_uses(all_runs) -> dict:
    """Allocation -> True when every MMA use of it, in every setting, is collective."""
    verdict: dict = {}
    for runs in all_runs:
        for run in runs:
            if run.outcome is UNKNOWN:
                continue
            for alloc, collective_op in run.outcome.uses:
                verdict[alloc] = verdict.get(alloc, True) and collective_op
    return verdict


def _in_pallas_call(ctx: Context, alloc: nodes.Call) -> bool:
    """Is the allocation written in a `pl.pallas_call`'s scratch? A pallas_call has no cluster,
    so collective TMEM there fails to lower (PLS013): the fix cannot be safe."""
    node = alloc.parent
    while node is not None and not isinstance(node, (nodes.FunctionDef, nodes.Module)):
        if isinstance(node, nodes.Call) and ctx.flow.api_kind(node) is Kind.PALLAS_CALL:
            return True
        node = node.parent
    return False


def _literal_flag(alloc: nodes.Call) -> bool:
    flag = fixes.keyword(alloc, "collective")
    return flag is None or isinstance(flag.value, nodes.Const)
