"""PLS001: a collective MMA on TMEM that was not allocated collective."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from astroid import nodes

from .. import fixes
from ..context import Context, State
from ..findings import Applicability, Finding, Fix, Related, Span
from ..trace import Site, decide, objects
from ..trace.pick import Picker, explore
from ..trace.refusals import barrier_error, checked_before, fails_first, scales_error, shape_error, space_error
from ..values import UNKNOWN
from . import examples
from .base import Invalid, Rule
from .kernels import body_traced, lowering_semantics, pallas_call_scratch, plain_tmem_left, run_of, without_pairs
from .pls002_mixed_collective_union import member_uses as _member_uses
from .tmem import collective_keyword_text

if TYPE_CHECKING:
    from ..trace.interp import Frame

_Use = tuple[objects.Alloc, objects.Guard, bool, nodes.Call]  # (allocation, guard, collective MMA?, the MMA)
_Uses = dict[nodes.Call, list[_Use]]  # allocation call -> its uses by MMAs
_Key = tuple[nodes.Call, str, nodes.Call]  # (the MMA, the operand's role, the allocation or union judged)


@dataclass(frozen=True)
class Problem:
    role: str  # "Accumulator" | "LHS"
    operand: nodes.NodeNG | None  # the argument as written in the MMA call
    ref: Any  # objects.Alloc, or the objects.Union whose TMEM is not collective
    member_of: objects.Union | None
    axis: Any
    to_fix: tuple[objects.Alloc, ...]  # the TMEM allocations that need collective=True

    @property
    def target(self) -> nodes.Call:
        return self.member_of.node if self.member_of is not None else self.ref.node


@dataclass
class Occurrences:
    """One finding: a problem of one MMA call, in every context where it occurs. The finding
    is on the call (JAX's innermost frame, in a helper module if the MMA is there); `anchor` is
    where the analysed file leads to it."""

    call: nodes.Call
    anchor: nodes.NodeNG
    problems: list[tuple[objects.Guard, Problem, Site]] = field(default_factory=list)


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

    JAX checks the operands when it first evaluates an MMA of given operand shapes, and caches
    that check by the operands' types, which leave `collective` out: a run of an MMA call (this
    one, or another given the same other operands) on TMEM allocated like a collective one an
    earlier run used (same shape, dtype and packing; `for acc in (acc_collective, acc_plain):`
    around it) is not checked and not reported here; lowering then refuses the kernel's mixed
    TMEM (PLS014). Nor is an MMA reported on the paths where a check JAX makes first surely
    raises: its operands' shapes (PLS018), its scales (PLS011), its operands' memory spaces
    (PLS009); nor where JAX's trace of the body stops before it (an earlier call that surely
    raises, a constructor of the kernel's scratch).

    Accumulators and LHS operands unpacked from a `plgpu.RefUnion` whose TMEM is not collective
    are reported too. JAX does not check them when tracing; lowering fails with `Collective
    attributes are inconsistent across operations in the kernel.` under Warpgroup lowering
    semantics (the default from jax 0.11); under Lane semantics (the default in jax 0.10, or
    asked for in `compiler_params`: then not reported) it lowers without complaint.

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
    clusters with an even number of blocks"), or when the allocation is a `pl.pallas_call`'s
    scratch (a pallas_call has no cluster: PLS013). It is not offered where the trace shows it
    wrong (JAX confirms each on the generated corpus): when a non-collective MMA also uses the
    allocation in some setting (jax 0.12: `Collective attributes are inconsistent across
    operations in the kernel.`), when a kernel allocating it has no even cluster in some
    setting (PLS013), or when the kernel would still allocate non-collective TMEM once the
    file's findings are fixed (`Can't mix collective and non-collective TMEM allocations within
    the same kernel.`, PLS014). The same holds for the fix at the helper's call site.

    When the flag is a parameter of the function that allocates (`accumulator(m, n,
    collective=False)` around `plgpu.TMEM(..., collective=collective)`), the preferred fix
    passes `collective=True` at the one call that leads to the failing MMA, leaving the helper
    alone for its other callers; it is safe when that parameter serves only the allocation.
    When the MMA is collective only in some settings (`collective_axis="x" if collective else
    None`), the preferred fix ties the allocation's flag to that same condition, written with a
    name in scope at the allocation (`collective=collective`, `collective=config.collective`,
    `collective=config["collective"]`, `collective=axis is not None`) that the trace checked in
    every setting: right whichever setting the kernel is built in, where `collective=True`
    would break the single-block one. It is safe when the expression is a plain name that the
    MMA's own `collective_axis` is written with and the allocation's flag was a literal.
    No fix removes `collective_axis` from the MMA: the single-CTA MMA left needs an accumulator
    half as wide (JAX raises `Accumulator and RHS have incompatible shapes.`, PLS018), and
    which of the two is meant cannot be told from the code.

    Where it is reported: on the `tcgen05_mma` call, as JAX's traceback names it (its innermost
    frame): in a helper module of the project if the MMA is written there (the finding then
    belongs to that file, with the call of the analysed file that leads to it as related
    information and as its anchor, where flake8 shows it and where a `# noqa` may also go);
    inside an installed library (JAX's own `ops` building blocks, read but never imported), on
    the analysed file's call into it.

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
    jax_exception = "ValueError"
    triggers = (b"tcgen05", b"TMEM")  # the MMA may sit in an imported helper
    identifiers = frozenset({"tcgen05_mma", "TMEM"})  # an MMA here, or an allocation passed to one
    VALID = (examples.PLS001_VALID,)
    INVALID = (Invalid(examples.PLS001_INVALID, fixed=examples.PLS001_VALID),)

    def check(self, ctx: Context) -> Iterator[Finding]:
        found: dict[_Key, Occurrences] = {}
        verdicts: dict[_Key, decide.Verdicts] = defaultdict(lambda: decide.Verdicts([], []))
        uses: _Uses = {}
        for site in ctx.trace.sites("mma"):
            reported = ctx.reported_at(site)
            if reported is not None:
                self._site(ctx, site, reported, found, verdicts, uses)
        # the allocations the file's findings make collective (fixed together by --fix, e.g. the
        # two LHS allocations a loop passes to one MMA, or two MMAs' accumulators)
        ctx.state(FIXED_WITH).update(alloc.node for occurrences in found.values()
                                     for _, problem, _ in occurrences.problems
                                     if problem.member_of is None for alloc in problem.to_fix)
        for key, occurrences in found.items():
            yield from self._finding(ctx, occurrences, verdicts[key], uses)

    # -- deciding --------------------------------------------------------------------------

    def _site(self, ctx: Context, site: Site, reported: nodes.NodeNG, found: dict[_Key, Occurrences],
              verdicts: dict[_Key, decide.Verdicts], uses: _Uses) -> None:
        arguments = site.arguments
        written = _written_operands(site.node)
        caught = ctx.surely_caught(site, self.jax_exception)  # (JAX raises, a handler goes on)
        for guard, axis in decide.alternatives(arguments.get("collective_axis"), site.guard):
            for op_guard, collective_op in decide.is_set(axis, guard):
                if collective_op is UNKNOWN:
                    continue
                for role, name in (("Accumulator", "acc"), ("LHS", "a")):
                    for ref_guard, operand in decide.alternatives(arguments.get(name), op_guard):
                        problem_args = (role, written.get(name), axis)
                        for guard_, target, problem in self._operand(operand, collective_op, ref_guard, problem_args,
                                                                     uses, site):
                            if problem is UNKNOWN:
                                continue
                            if problem is not None and (caught or problem.member_of is None and _checked_before(
                                    ctx, site, name, problem.ref, guard_)):
                                problem = None  # JAX's cached check of an earlier run passes it
                            key = (site.node, role, target)
                            verdict = verdicts[key]
                            for reached, checked in _checked_here(ctx, site, guard_, problem):
                                if checked is not None and decide.unchosen(reached):
                                    continue  # (a setting the file does not choose: where it is deployed, another caller's)
                                if checked is None:
                                    verdict.decided.append((reached, site.chain))
                                    continue
                                verdict.bad.append((reached, site.chain))
                                occurrences = found.setdefault(key, Occurrences(site.node, reported))
                                occurrences.problems.append((reached, checked, site))

    @staticmethod
    def _operand(operand: Any, collective_op: bool, guard: objects.Guard,
                 problem_args: tuple[str, nodes.NodeNG | None, Any],
                 uses: _Uses, site: Site) -> list[tuple[objects.Guard, nodes.Call, Any]]:
        """(guard, the allocation or union judged, Problem | None | UNKNOWN) for one operand."""
        role, written, axis = problem_args
        mma, in_core_map = site.node, bool(site.meshes)
        ref = objects.base_ref(operand)
        if isinstance(ref, objects.Alloc):
            if ref.space != "TMEM":
                return []
            uses.setdefault(ref.node, []).append((ref, guard, collective_op, mma))
            if not collective_op:
                return [(guard, ref.node, None)]
            return [
                (g, ref.node, UNKNOWN if value is UNKNOWN else None if value else Problem(
                    role, written, ref, None, axis, (ref,)))
                for g, value in decide.flag(ref.collective, guard)
            ]
        union = ref.ref if isinstance(ref, objects.Member) and isinstance(ref.ref, objects.Union) else (
            ref.union if isinstance(ref, objects.Member) else ref if isinstance(ref, objects.Union) else None)
        if union is None or in_core_map:
            # inside `pl.core_map(plgpu.WarpMesh(...))` JAX 0.12 lowers a collective MMA on a
            # union member without complaint (and 0.10.2 never checks members)
            return []
        if not collective_op:
            return [(guard, union.node, None)]
        results: list[tuple[objects.Guard, nodes.Call, Any]] = []
        for g, value in decide.union_collective(union, guard):
            if value is UNKNOWN or value is decide.MIXED or value is None:
                results.append((g, union.node, UNKNOWN if value is UNKNOWN else None))
            elif value is False:
                results.append((g, union.node, Problem(role, written, union, union, axis,
                                                       tuple(decide.tmem_allocs(union, g)))))
            else:
                results.append((g, union.node, None))
        return results

    # -- reporting -------------------------------------------------------------------------

    def _finding(self, ctx: Context, occurrences: Occurrences, verdict: decide.Verdicts,
                 uses: _Uses) -> Iterator[Finding]:
        span = ctx.span(decide.shown_at(occurrences.call, occurrences.anchor))
        if span is None:
            return
        anchor = ctx.span(occurrences.anchor) if span.path is not None else None
        _, problem, _ = occurrences.problems[0]
        with ctx.shown_in(span):
            message = self._message(ctx, occurrences, problem, verdict.describe(ctx.where))
        yield Finding(
            self.code,
            message,
            span,
            self.severity,
            related=self._related(ctx, problem) + _reached_from(anchor),
            fixes=self._fixes(ctx, occurrences.call, problem, uses, occurrences),
            anchor=anchor,
        )

    @staticmethod
    def _message(ctx: Context, occurrences: Occurrences, problem: Problem, condition: str) -> str:
        axis = _render(problem.axis)
        when = f", {condition}" if condition else ""
        shown = _display(problem.operand) if problem.operand is not None else problem.role.lower()
        union = problem.member_of
        if union is not None:
            return (
                f"{problem.role} '{shown}' must be collective: collective_axis={axis} is set, but it is "
                f"a member of the RefUnion at {ctx.where(union.node)}, whose TMEM is not collective{when} "
                "(JAX misses this when tracing; lowering fails with 'Collective attributes are "
                "inconsistent across operations in the kernel.' from jax 0.11)"
            )
        alloc = problem.ref
        name = alloc.name or shown
        return (
            f"{problem.role} '{name}' must be collective: collective_axis={axis} is set, but it is "
            f"allocated at {ctx.where(alloc.node)} {collective_keyword_text(alloc.node)}{when}"
        )

    @staticmethod
    def _related(ctx: Context, problem: Problem) -> tuple[Related, ...]:
        union = problem.member_of
        node = problem.target
        span = ctx.span(node)
        if span is None:
            return ()
        what = "RefUnion allocated here" if union is not None else "TMEM allocated here"
        return (Related(span, f"{what} {collective_keyword_text(node)}"),)

    def _fixes(self, ctx: Context, call: nodes.Call, problem: Problem, uses: _Uses,
               occurrences: Occurrences) -> tuple[Fix, ...]:
        found = list(self._call_site_fix(ctx, problem, uses, occurrences))
        found += self._tie_fix(ctx, problem, uses, preferred=not any(fix.preferred for fix in found))
        union = problem.member_of
        edits = tuple(edit for alloc in problem.to_fix for edit in fixes.set_keyword(ctx, alloc.node, "collective", "True"))
        target = problem.ref.node if union is None else union.node
        mixed = union is None and plain_tmem_left(
            ctx, {alloc.node for alloc in problem.to_fix} | _fixed_with(ctx)) is True
        if edits and not any(_used_non_collectively(uses, alloc.node) for alloc in problem.to_fix) and not (
                mixed or without_pairs(ctx, target) or union is not None and False in _member_uses(ctx, union.node)):
            safe = union is None and _always_collective(uses, problem.ref.node) and _literal_flag(
                problem.ref.node
            ) and not _in_pallas_call(ctx, problem.ref.node)
            title = "Add collective=True to the TMEM allocation" if union is None else (
                "Add collective=True to the RefUnion's TMEM allocations")
            applicability = Applicability.SAFE if safe else Applicability.UNSAFE
            found.append(Fix(title, applicability, edits, preferred=bool(safe) and not found))
        # No fix removes `collective_axis`: a collective MMA's accumulator is twice as wide as
        # its RHS, so the single-CTA MMA left would raise `Accumulator and RHS have
        # incompatible shapes.` (PLS018): JAX did so on every such fix of the generated corpus.
        return tuple(found)

    @staticmethod
    def _call_site_fix(ctx: Context, problem: Problem, uses: _Uses,
                       occurrences: Occurrences) -> Iterator[Fix]:
        """`accumulator(m, n, collective=False)` where the helper allocates with
        `collective=collective`: the flag belongs to this call, not to the helper's body (other
        callers may want it off). Safe when the parameter serves only the allocation."""
        if problem.member_of is not None:
            return
        found = _flag_parameter(problem.ref, [p for _, p, _ in occurrences.problems])
        if found is None:
            return
        func, name, site = found
        edits = fixes.set_argument(ctx, site, func, name, "True")
        node = problem.ref.node
        if not edits or _used_non_collectively(uses, node) or without_pairs(ctx, node) or plain_tmem_left(
                ctx, {node} | _fixed_with(ctx)) is True:
            return  # collective TMEM where some setting has no cluster pair or keeps plain TMEM
        passed = _passed_value(site, func, name)
        safe = (_always_collective(uses, problem.ref.node) and (passed is None or isinstance(passed, nodes.Const))
                and _uses_of(func, name) == 1)
        yield Fix(f"Pass {name}=True to {func.name}() at {ctx.where(site)}",
                  Applicability.SAFE if safe else Applicability.UNSAFE, edits, preferred=bool(safe))


    @staticmethod
    def _tie_fix(ctx: Context, problem: Problem, uses: _Uses, preferred: bool) -> list[Fix]:
        """The MMA is collective only in some settings: the allocation's flag should follow the
        same condition (`collective=collective`), which is right in every setting."""
        if problem.member_of is not None:
            return []
        tied = _tied_flag(uses.get(problem.ref.node, []))
        if tied is None:
            return []
        expression, provable = tied
        edits = fixes.set_keyword(ctx, problem.ref.node, "collective", expression)
        if not edits:
            return []
        safe = provable and _literal_flag(problem.ref.node) and problem.ref.node.root() is ctx.module
        return [Fix(f"Make the TMEM collective when the MMA is: collective={expression}",
                    Applicability.SAFE if safe else Applicability.UNSAFE, edits, preferred=preferred)]


def _checked_before(ctx: Context, site: Site, name: str, alloc: objects.Alloc, guard: objects.Guard) -> bool:
    """Does JAX let this operand pass unchecked in every setting of `guard`
    (`refusals.checked_before`: its abstract evaluation is cached from an earlier run of the MMA
    on collective TMEM of the same aval)? Then JAX reports the kernel's mixed TMEM (PLS014)."""
    run = run_of(ctx, site)
    if run is None:
        return False
    outcomes = explore(lambda pick: checked_before(pick, run.members, site, name, alloc), guard)
    return bool(outcomes) and all(outcome is True for _, outcome in outcomes)


def _fixed_with(ctx: Context) -> set[nodes.Call]:
    """The allocations the file's PLS001 findings make collective (`check` records them)."""
    return ctx.state(FIXED_WITH)


# the TMEM allocations the file's PLS001 findings make collective (fixed together by --fix)
FIXED_WITH: State[set[nodes.Call]] = State("PLS001 allocations made collective", lambda ctx: set())


def _used_non_collectively(uses: _Uses, node: nodes.Call) -> bool:
    """Does a traced non-collective MMA use the allocation? Then `collective=True` breaks that
    MMA (jax 0.12 lowering: `Collective attributes are inconsistent across operations in the
    kernel.`; with no cluster in that setting: PLS013) and is not offered."""
    return any(not use[2] for use in uses.get(node, []))


def _always_collective(uses: _Uses, node: nodes.Call) -> bool:
    found = uses.get(node, [])
    return bool(found) and all(use[2] for use in found)


def _tied_flag(uses: list[_Use]) -> tuple[str, bool] | None:
    """An expression in scope at the allocation that is true exactly where an MMA using it is
    collective, in every setting traced, and whether the MMAs' own `collective_axis` names it
    (then it is provably the same condition)."""
    if not uses or all(use[2] for use in uses) or not any(use[2] for use in uses):
        return None
    common: list[str] | None = None
    for alloc, guard, collective, _ in uses:
        found = _tracking(alloc.scope, guard, collective)
        common = found if common is None else [e for e in common if e in found]
        if not common:
            return None
    assert common is not None  # `uses` is not empty
    expression = common[0]
    return expression, expression.isidentifier() and all(expression in _axis_names(use[3]) for use in uses)


def _axis_names(mma: nodes.Call) -> set[str]:
    """The names the MMA's `collective_axis` argument is written with."""
    axis = fixes.keyword(mma, "collective_axis")
    return {name.name for name in axis.value.nodes_of_class(nodes.Name)} if axis is not None else set()


def _checked_here(ctx: Context, site: Site, guard: objects.Guard, problem: Problem | None
                  ) -> list[tuple[objects.Guard, Any]]:
    """The problem on the paths where JAX gets to check it: none where an earlier check of the
    MMA surely raises (its shapes, its scales, its operands' memory spaces: `mma`), nor, for a
    RefUnion member's (which lowering checks), where tracing the MMA raises at all; nor where
    the trace of the body stops before the MMA (`kernels.body_traced`)."""
    if problem is None:
        return [(guard, None)]
    member = problem.member_of is not None
    checks = (shape_error, scales_error, space_error) + ((barrier_error,) if member else ())
    return [(reached, None if earlier else problem) for reached, earlier in explore(
        lambda pick: not body_traced(ctx, pick, site) or fails_first(pick, site, *checks)
        or member and _lane_lowered(ctx, pick, site), guard)]


def _lane_lowered(ctx: Context, pick: Picker, site: Site) -> bool:
    """May the MMA's kernel ask for Lane lowering semantics, which check no RefUnion member's
    collective flag (only Warpgroup lowering does, the default from jax 0.11)? Semantics we
    cannot tell may be Lane: then JAX may lower it. A kernel JAX only traces is lowered by
    neither."""
    run = run_of(ctx, site)
    if run is None:
        return False
    if run.site.traced_only:
        return True  # (JAX only traces the kernel: no lowering checks it)
    semantics = lowering_semantics(pick, run)
    return semantics is UNKNOWN or semantics == "Lane"


def _tracking(scope: Frame | None, guard: objects.Guard, collective: bool) -> list[str]:
    """Expressions over the names visible in `scope` whose truth is `collective` under `guard`,
    simplest first."""
    names, attributes, identities = [], [], []
    seen: set[str] = set()
    frame = scope
    while frame is not None:
        for name, value in frame.vars.items():
            if name in seen or name.startswith("__"):
                continue
            seen.add(name)
            if _always(decide.truth(value, guard), collective):
                names.append(name)
            elif _always(decide.is_set(value, guard), collective) and not isinstance(value, objects.Free):
                identities.append(f"{name} is not None")
            if isinstance(value, objects.Instance):
                attributes += [f"{name}.{attr}" for attr, item in value.attributes.items()
                               if not attr.startswith("_") and _always(decide.truth(item, guard), collective)]
            elif isinstance(value, dict):  # `config["collective"]`
                attributes += [f"{name}[{key!r}]" for key, item in value.items()
                               if isinstance(key, str) and _always(decide.truth(item, guard), collective)]
            elif isinstance(value, objects.Free):
                attributes += [f"{name}{var.label[len(value.label):]}" for var, truth in guard
                               if var.key[0] == "truth" and var.key[1][:len(value.key)] == value.key
                               and var.key[1] != value.key and var.label.startswith(value.label + ".")
                               and truth == collective]
        frame = frame.parent
    return names + attributes + identities


def _always(outcomes: list[tuple[objects.Guard, Any]], wanted: bool) -> bool:
    return bool(outcomes) and all(outcome is not UNKNOWN and bool(outcome) == wanted for _, outcome in outcomes)


def _flag_parameter(alloc: objects.Alloc, problems: list[Problem]) -> tuple[nodes.FunctionDef, str, nodes.Call] | None:
    """(helper, parameter, call) when the allocation's flag is a parameter of the function
    around it and every failing allocation was made through one call of that function."""
    flag = fixes.keyword(alloc.node, "collective")
    if flag is None or not isinstance(flag.value, nodes.Name):
        return None
    func = flag.value.scope()
    if not isinstance(func, nodes.FunctionDef) or flag.value.name not in func.argnames():
        return None
    calls = {problem.ref.chain[-1] if problem.ref.chain else None for problem in problems}
    if len(calls) != 1:
        return None
    call = calls.pop()
    if not isinstance(call, nodes.Call):
        return None
    return func, flag.value.name, call



def _uses_of(func: nodes.FunctionDef, name: str) -> int:
    return sum(1 for node in func.nodes_of_class(nodes.Name) if node.name == name and node.scope() is func)


def _passed_value(call: nodes.Call, func: nodes.FunctionDef, name: str) -> nodes.NodeNG | None:
    keyword = fixes.keyword(call, name)
    if keyword is not None:
        return keyword.value
    positional = [arg.name for arg in (func.args.posonlyargs or []) + (func.args.args or [])]
    if name in positional and positional.index(name) < len(call.args) and fixes.names_callee(call, func):
        return call.args[positional.index(name)]
    return None  # (positions count only in a call of the function itself: not in `map(helper, flags)`)


def _reached_from(anchor: Span | None) -> tuple[Related, ...]:
    return () if anchor is None else (Related(anchor, "reached from this call"),)


def _written_operands(call: nodes.Call) -> dict[str, nodes.NodeNG]:
    """The accumulator and LHS as written in the call (for messages), where they are visible."""
    written: dict[str, nodes.NodeNG] = {}
    for name, arg in zip(("acc", "a"), call.args):
        if isinstance(arg, nodes.Starred):
            break
        written[name] = arg
    for keyword in call.keywords or ():
        if keyword.arg in ("acc", "a"):
            written[keyword.arg] = keyword.value
    return written


def _display(operand: nodes.NodeNG) -> str:
    """How to name an operand: `acc.at[:, pl.ds(0, n)]` is shown as `acc`."""
    while (isinstance(operand, nodes.Subscript) and isinstance(operand.value, nodes.Attribute)
           and operand.value.attrname == "at"):
        operand = operand.value.expr
    return operand.as_string()


def _render(axis: Any) -> str:
    if isinstance(axis, objects.Free):
        return axis.label
    return repr(axis)


def _in_pallas_call(ctx: Context, alloc: nodes.Call) -> bool:
    """Is the allocation in a `pl.pallas_call`'s scratch? A pallas_call has no cluster, so
    collective TMEM there fails to lower (PLS013): the fix cannot be safe."""
    return alloc in pallas_call_scratch(ctx)


def _literal_flag(alloc: nodes.Call) -> bool:
    flag = fixes.keyword(alloc, "collective")
    return flag is None or isinstance(flag.value, nodes.Const)
