"""PLS002: a RefUnion aliasing collective and non-collective TMEM."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterator

from astroid import nodes

from .. import fixes
from ..context import Context
from ..findings import Applicability, Finding, Fix, Related
from ..trace import decide, objects
from ..values import UNKNOWN
from . import examples
from .base import Invalid, Rule
from .kernels import tie_is_right, without_pairs
from .tmem import collective_keyword_text

_Sides = dict[bool, list[objects.Alloc | objects.Union]]  # collective? -> the union's leaves
_Run = tuple[objects.Guard, objects.Chain, _Sides]  # (guard, chain, sides) of one setting


class MixedCollectiveUnion(Rule):
    """## What it does
    Flags a `plgpu.RefUnion(...)` whose TMEM members, looked at through nested unions and
    list or tuple groups, are collective for some and not for others. The members on each side
    are named. Flags that depend on a value are reasoned about together, as in PLS001.

    ## Why is this bad?
    Aliased TMEM shares one allocation, and an allocation is either collective (spanning the
    two blocks of a cluster) or not. JAX raises in the `RefUnion` constructor, so the kernel
    cannot even be built.

    ## Example
    ```python
    plgpu.RefUnion(
        plgpu.TMEM((128, 128), jnp.float32, collective=True),
        plgpu.TMEM((128, 128), jnp.float32),
    )
    ```

    Use instead:
    ```python
    plgpu.RefUnion(
        plgpu.TMEM((128, 128), jnp.float32, collective=True),
        plgpu.TMEM((128, 128), jnp.float32, collective=True),
    )
    ```

    ## Fix safety
    When some members' flag is an expression (`collective=collective`,
    `collective=config.collective`) and the others' a literal or absent, the preferred fix
    gives the others that same expression, as PLS001 ties an allocation to its MMA's condition.
    It is offered only where the trace shows it right in every setting of every kernel that
    allocates the union: one flag for the whole union, an even cluster where it is collective
    (PLS013), the kernel's other TMEM with the same flag (PLS014), and every MMA using a member
    collective exactly when the union is; and only when all the members are made in one scope
    (the expression means the same there). It is safe when they are written in the union's own
    statement and the expression calls nothing (provably the same value), else unsafe.

    Otherwise both fixes, making every member collective or making every member non-collective, are
    unsafe: which one is right depends on the MMAs that use the members. Each writes the same
    literal flag on every member whose flag is not already that literal, an expression too: a
    flag that is on in one setting and off in another would leave the union mixed in the other.
    A fix the trace shows to be wrong is not offered (JAX confirms each on the generated
    corpus): non-collective members when a collective MMA uses one, collective members when a
    non-collective MMA uses one (jax 0.12 lowering: `Collective attributes are inconsistent
    across operations in the kernel.`) or when a kernel allocating the union has no even
    cluster in some setting (PLS013).

    Where it is reported: on the `plgpu.RefUnion(...)` call JAX names, also when a helper
    module of the project builds the union (the analysed file's call is its anchor), and on the
    analysed file's call when the union is built inside an installed library.

    ## JAX message
    `Some aliased TMEM references are collective and some are not.` (when `RefUnion(...)` is
    evaluated, before any trace).
    """

    code = "PLS002"
    name = "mixed-collective-ref-union"
    summary = "RefUnion aliases collective and non-collective TMEM"
    jax_message = "Some aliased TMEM references are collective and some are not."
    jax_exception = "ValueError"
    triggers = (b"RefUnion", b"TMEM", b"tcgen05")  # the union may be built by an imported helper
    identifiers = frozenset({"RefUnion", "TMEM", "tcgen05_mma"})
    VALID = (examples.PLS002_VALID,)
    INVALID = (Invalid(examples.PLS002_INVALID, fixed=examples.PLS002_VALID),)

    def check(self, ctx: Context) -> Iterator[Finding]:
        found: dict[nodes.Call, tuple[list[_Run], list[_Run], nodes.NodeNG]] = {}  # RefUnion -> (bad, fine, anchor)
        for site in ctx.trace.sites("union"):
            reported = ctx.reported_at(site)
            if reported is None or ctx.surely_caught(site, self.jax_exception):
                continue  # (caught: JAX raises, and a handler goes on)
            bad, decided, _ = found.setdefault(site.node, ([], [], reported))
            for guard, sides in _mixed(site.value, site.guard):
                if sides is UNKNOWN or sides and decide.unchosen(guard):
                    continue  # (unknown, or mixed only in a setting the file does not choose)
                (bad if sides else decided).append((guard, site.chain, sides))
        for union, (bad, decided, reported) in found.items():
            span = ctx.span(decide.shown_at(union, reported))
            if not bad or span is None:
                continue
            anchor = ctx.span(reported) if span.path is not None else None
            reached = () if anchor is None else (Related(anchor, "reached from this call"),)
            sides = bad[0][2]
            with ctx.shown_in(span):
                condition = decide.Verdicts([b[:2] for b in bad], [d[:2] for d in decided]).describe(ctx.where)
                message = (
                    "Some aliased TMEM references are collective and some are not: "
                    f"collective: {_names(ctx, sides[True])}; not collective: {_names(ctx, sides[False])}"
                    + (f", {condition}" if condition else "")
                )
            yield Finding(
                self.code, message, span, self.severity,
                related=self._related(ctx, sides) + reached,
                fixes=_tie_fix(ctx, union, _every_side(bad)) + self._fixes(ctx, _every_side(bad), _ruled_out(ctx, union)),
                anchor=anchor,
            )

    @staticmethod
    def _related(ctx: Context, sides: _Sides) -> tuple[Related, ...]:
        related = []
        for collective, refs in sides.items():
            for ref in refs:
                node = _node(ref)
                span = ctx.span(node)
                if span is not None:
                    what = "collective" if collective else "not collective"
                    related.append(Related(span, f"{what}: {collective_keyword_text(node)}"))
        return tuple(related)

    @staticmethod
    def _fixes(ctx: Context, sides: _Sides, ruled_out: set[bool]) -> tuple[Fix, ...]:
        """Every TMEM of the union given the same literal flag (a flag that is an expression
        may differ in another setting, so it is written over too), unless the trace shows
        that flag breaking the kernel (`ruled_out`)."""
        found = []
        for value, title in ((True, "Make all aliased TMEM refs collective"),
                             (False, "Make all aliased TMEM refs non-collective")):
            if value in ruled_out:
                continue
            if not sides[not value] or not all(isinstance(ref, objects.Alloc) for ref in sides[not value]):
                continue
            refs = sides[not value] + [ref for ref in sides[value] if isinstance(ref, objects.Alloc) and all(
                _node(ref) is not _node(other) for other in sides[not value])]
            todo = [ref for ref in refs if not _literal(ref.node, value)]
            edits = [fixes.set_keyword(ctx, ref.node, "collective", str(value)) for ref in todo]
            if todo and all(edits):
                found.append(Fix(title, Applicability.UNSAFE, tuple(e for group in edits for e in group)))
        return tuple(found)


def _tie_fix(ctx: Context, union: nodes.Call, sides: _Sides) -> tuple[Fix, ...]:
    """Members whose flag is an expression (`collective=config.collective`) beside members with
    a literal or no flag: the literal ones take the same expression, which the trace checked
    right in every setting of every kernel allocating the union (`kernels.tie_is_right`)."""
    refs: list[objects.Alloc] = []
    for ref in sides[True] + sides[False]:
        if not isinstance(ref, objects.Alloc):
            return ()  # a nested union: its own flags are not this fix's to write
        if all(ref.node is not seen.node for seen in refs):
            refs.append(ref)
    written = {ref.node: fixes.keyword(ref.node, "collective") for ref in refs}
    tied = [ref for ref in refs if (kw := written[ref.node]) is not None and not isinstance(kw.value, nodes.Const)]
    odd = [ref for ref in refs if ref not in tied]
    expressions = {written[ref.node].value.as_string() for ref in tied}  # type: ignore[union-attr]  # tied: written
    if not tied or not odd or len(expressions) != 1 or len({ref.node.scope() for ref in refs}) != 1:
        return ()  # an expression in one scope may mean something else (or nothing) in another
    expression = expressions.pop()
    value = written[tied[0].node].value  # type: ignore[union-attr]  # tied: written
    if not tie_is_right(ctx, union, {ref.node for ref in tied}) or not all(
            _readable_at(value, ref.node) for ref in odd):
        return ()
    edits = [fixes.set_keyword(ctx, ref.node, "collective", expression) for ref in odd]
    if not all(edits):
        return ()
    # provably the same value: written in the union's own statement, read without calls
    pure = not any(isinstance(node, (nodes.Call, nodes.NamedExpr, nodes.Await, nodes.Yield, nodes.YieldFrom))
                   for node in [value, *value.nodes_of_class(nodes.NodeNG)])
    same_statement = all(ref.node.statement() is union.statement() for ref in refs)
    return (Fix(f"Make the TMEM collective when the other members are: collective={expression}",
                Applicability.SAFE if pure and same_statement else Applicability.UNSAFE,
                tuple(edit for group in edits for edit in group), preferred=True),)


def _readable_at(expression: nodes.NodeNG, at: nodes.NodeNG) -> bool:
    """Could `expression` be written at `at`: is every name it reads (but those it binds
    itself, a comprehension's) bound there by an earlier statement? (`acc =
    plgpu.TMEM(..., collective=not acc.collective)` would read `acc` before it exists.)"""
    own = {target.name for target in expression.nodes_of_class(nodes.AssignName)}
    statement = at.statement()
    for name in expression.nodes_of_class(nodes.Name):
        if name.name in own:
            continue
        try:
            _, assignments = at.scope().lookup(name.name)
        except Exception:  # noqa: BLE001 - astroid on odd code: not provably readable
            return False
        if any(assignment.statement() is statement or (assignment.root() is at.root() and (assignment.lineno or 0)
                                                       > (statement.lineno or 0)) for assignment in assignments):
            return False
    return True


def _ruled_out(ctx: Context, union: nodes.NodeNG) -> set[bool]:
    """The flags the union's members cannot all take: collective where a kernel allocating it
    has no even cluster (PLS013's error) or a non-collective MMA uses a member; non-collective
    where a collective MMA uses a member (both fail lowering in jax 0.12: `Collective
    attributes are inconsistent across operations in the kernel.`)."""
    ruled_out = {not collective for collective in member_uses(ctx, union)}
    if without_pairs(ctx, union):
        ruled_out.add(True)
    return ruled_out


def member_uses(ctx: Context, union: nodes.NodeNG) -> set[bool]:
    """Whether each traced MMA whose accumulator or LHS is a member of the union is collective."""
    found: set[bool] = set()
    for site in ctx.trace.sites("mma"):
        for guard, axis in decide.alternatives(site.arguments.get("collective_axis"), site.guard):
            for op_guard, collective in decide.is_set(axis, guard):
                if collective is UNKNOWN:
                    continue
                for name in ("acc", "a"):
                    for _, operand in decide.alternatives(site.arguments.get(name), op_guard):
                        ref = objects.base_ref(operand)
                        unions = [ref] if isinstance(ref, objects.Union) else [ref.union, ref.ref] if isinstance(
                            ref, objects.Member) else []
                        if any(isinstance(u, objects.Union) and u.node is union for u in unions):
                            found.add(bool(collective))
    return found


def _literal(call: nodes.Call, value: bool) -> bool:
    """Is `call`'s `collective=` the literal `value` (absent: False)?"""
    keyword = fixes.keyword(call, "collective")
    if keyword is None:
        return value is False and not any(kw.arg is None for kw in call.keywords or ())
    return isinstance(keyword.value, nodes.Const) and keyword.value.value is value


def _every_side(bad: list[_Run]) -> _Sides:
    """The refs collective and not collective in any setting where the union is mixed: a flag
    that is on in one setting and off in another is on both sides, so a fix made for one
    setting is not left mixed in another."""
    merged: _Sides = {True: [], False: []}
    for *_, sides in bad:
        for collective, refs in sides.items():
            merged[collective] += [ref for ref in refs
                                   if all(_node(ref) is not _node(seen) for seen in merged[collective])]
    return merged


def _mixed(union: objects.Union, under: objects.Guard) -> list[tuple[objects.Guard, Any]]:
    """(guard, sides) per guard: sides maps collective (True/False) to the leaves, empty when
    the union is uniform or not TMEM; UNKNOWN when undecided."""
    found: list[tuple[objects.Guard, Any]] = []
    for guard, refs in decide.leaves(union.groups, under):
        if refs is UNKNOWN or not refs:
            found.append((guard, UNKNOWN))
            continue
        for space_guard, kind in decide.space(union, guard):
            if kind is UNKNOWN:
                found.append((space_guard, UNKNOWN))
            elif kind != "TMEM":
                found.append((space_guard, {}))
            else:
                for flag_guard, flags in decide.leaf_flags(refs, space_guard):
                    if flags is UNKNOWN or decide.MIXED in flags:
                        found.append((flag_guard, UNKNOWN if flags is UNKNOWN else {}))
                    elif all(value == flags[0] for value in flags):  # JAX compares with !=
                        found.append((flag_guard, {}))
                    else:
                        sides: _Sides = defaultdict(list)
                        for leaf, value in zip(refs, flags):
                            sides[bool(value)].append(leaf)
                        found.append((flag_guard, sides))
    return found


def _node(ref: objects.Alloc | objects.Union) -> nodes.Call:
    return ref.node


def _names(ctx: Context, refs: list[objects.Alloc | objects.Union]) -> str:
    described = []
    for ref in refs:
        name = ref.name
        where = ctx.where(_node(ref))
        described.append(f"'{name}' ({where})" if name else where)
    return ", ".join(described)
