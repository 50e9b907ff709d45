"""PLS002: a RefUnion aliasing collective and non-collective TMEM."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterator

from astroid import nodes

from .. import fixes, values as v
from ..api import Kind
from ..context import Context
from ..findings import Applicability, Finding, Fix, Related
from ..solve import Concretizer, describe
from ..values import UNKNOWN
from . import examples
from .base import Invalid, Rule
from .tmem import collective_keyword_text, flag, space, union_leaves


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
    Both fixes, making every member collective or making every member non-collective, are
    unsafe: which one is right depends on the MMAs that use the members.

    ## JAX message
    `Some aliased TMEM references are collective and some are not.` (when `RefUnion(...)` is
    evaluated, before any trace).
    """

    code = "PLS002"
    name = "mixed-collective-ref-union"
    summary = "RefUnion aliases collective and non-collective TMEM"
    jax_message = "Some aliased TMEM references are collective and some are not."
    triggers = (b"RefUnion",)
    identifiers = frozenset({"RefUnion"})
    VALID = (examples.PLS002_VALID,)
    INVALID = (Invalid(examples.PLS002_INVALID, fixed=examples.PLS002_VALID),)

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call in ctx.flow.sites(Kind.REF_UNION):
            yield from self._union(ctx, call)

    def _union(self, ctx: Context, call: nodes.Call) -> Iterator[Finding]:
        union = ctx.flow.evaluate(call)
        if not isinstance(union, v.UnionAlloc):
            return

        def check(conc: Concretizer) -> Any:
            found = union_leaves(conc, union)
            if found is UNKNOWN or not found:
                return UNKNOWN
            if space(conc, v.UnionRef(union)) != "TMEM":
                return ()
            flags = [flag(conc, leaf) for leaf in found]
            if UNKNOWN in flags:
                return UNKNOWN
            if all(value == flags[0] for value in flags):  # JAX compares with !=, not truthiness
                return ()
            return tuple((leaf, bool(value)) for leaf, value in zip(found, flags))

        runs = ctx.explore(check) or []
        decided = [run for run in runs if run.outcome is not UNKNOWN]
        bad = [run for run in decided if run.outcome]
        span = ctx.span(call)
        if not bad or span is None:
            return
        sides = _sides(bad[0].outcome)
        condition = describe(bad, decided)
        message = (
            "Some aliased TMEM references are collective and some are not: "
            f"collective: {_names(ctx, sides[True])}; not collective: {_names(ctx, sides[False])}"
            + (f", {condition}" if condition else "")
        )
        yield Finding(
            self.code, message, span, self.severity,
            related=self._related(ctx, sides),
            fixes=self._fixes(ctx, sides),
        )

    @staticmethod
    def _related(ctx: Context, sides: dict) -> tuple[Related, ...]:
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
    def _fixes(ctx: Context, sides: dict) -> tuple[Fix, ...]:
        found = []
        to_collective = tuple(
            edit for ref in sides[False] if isinstance(ref, v.Ref)
            for edit in fixes.set_keyword(ctx, ref.alloc.node, "collective", "True")
        )
        if to_collective and all(isinstance(ref, v.Ref) for ref in sides[False]):
            found.append(Fix("Make all aliased TMEM refs collective", Applicability.UNSAFE, to_collective))
        to_plain = tuple(
            edit for ref in sides[True] if isinstance(ref, v.Ref)
            for edit in fixes.set_keyword(ctx, ref.alloc.node, "collective", "False")
        )
        if to_plain and all(isinstance(ref, v.Ref) for ref in sides[True]):
            found.append(Fix("Make all aliased TMEM refs non-collective", Applicability.UNSAFE, to_plain))
        return tuple(found)


def _sides(outcome: tuple) -> dict:
    sides: dict = defaultdict(list)
    for leaf, collective in outcome:
        sides[collective].append(leaf)
    return sides


def _node(ref: Any) -> nodes.Call:
    return ref.union.node if isinstance(ref, v.UnionRef) else ref.alloc.node


def _names(ctx: Context, refs: list) -> str:
    described = []
    for ref in refs:
        name = ref.union.name if isinstance(ref, v.UnionRef) else ref.alloc.name
        where = ctx.where(_node(ref))
        described.append(f"'{name}' ({where})" if name else where)
    return ", ".join(described)
