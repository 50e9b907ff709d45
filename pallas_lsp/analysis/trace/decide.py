"""Verdicts over traced values: what the rules ask of a trace, with no interpreter internals.

Every answer is a list of (guard, outcome) alternatives: the outcome holds whenever its guard
does. An UNKNOWN outcome is undecided (the rule stays silent about it).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any, Callable, Iterable

from astroid import nodes

from ..values import UNKNOWN
from . import objects as o
from .interp import Site
from .objects import Guard, conjoin, split
from .stubs import tree_children

MIXED = "mixed"
_PRIMITIVE = (bool, int, float, str, type(None))


def alternatives(value: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """`value`'s alternatives consistent with `under` (conjoined with it)."""
    found: list[tuple[Guard, Any]] = []
    for guard, item in split(value):
        both = conjoin(under, guard)
        if both is not None:
            found.append((both, item))
    return found


def truth(value: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """Python truthiness of `value`: True, False or UNKNOWN, per guard."""
    return o.truth_alternatives(value, under)


def is_set(value: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """Is `value` not None (a `collective_axis` given)? Per guard; UNKNOWN when unknown."""
    found: list[tuple[Guard, Any]] = []
    for guard, item in alternatives(value, under):
        if isinstance(item, o.Free):
            var = o.none_var(item)
            for is_none in o.BOOL:
                literal = conjoin(guard, frozenset({(var, is_none)}))
                if literal is not None:
                    found.append((literal, not is_none))
        elif item is UNKNOWN or isinstance(item, o.Library):  # a library's attribute may be None
            found.append((guard, UNKNOWN))
        else:
            found.append((guard, item is not None))
    return found


def flag(value: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """A TMEM allocation's `collective` as JAX stores it: None is False; a free input's
    truthiness decides it. Values are kept (JAX compares flags with `!=`)."""
    found: list[tuple[Guard, Any]] = []
    for guard, item in alternatives(value, under):
        if item is None:
            found.append((guard, False))
        elif isinstance(item, o.Free):
            found.extend(truth(item, guard))
        elif isinstance(item, _PRIMITIVE):
            found.append((guard, item))
        else:
            found.append((guard, UNKNOWN))
    return found


def leaves(value: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """The refs of a RefUnion group (nested unions are leaves, as in `jax.tree.leaves`), per
    guard: a list, or UNKNOWN when a part cannot be resolved."""
    found: list[tuple[Guard, Any]] = []
    for guard, item in alternatives(value, under):
        item = o.base_ref(item)
        if isinstance(item, o.Member):
            item = item.ref
        children = tree_children(item) if not isinstance(item, (o.Alloc, o.Union)) else None
        if children is not None:
            combos: list[tuple[Guard, Any]] = [(guard, [])]
            for element in children:
                combos = [
                    (both, UNKNOWN if found_items is UNKNOWN or inner is UNKNOWN else found_items + inner)
                    for g, found_items in combos
                    for both, inner in leaves(element, g)
                ]
                if len(combos) > o.MAX_ALTERNATIVES:
                    return [(guard, UNKNOWN)]
            found.extend(combos)
        elif isinstance(item, (o.Alloc, o.Union)):
            found.append((guard, [item]))
        else:
            found.append((guard, UNKNOWN))
    return found


def space(ref: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """'TMEM', 'SMEM', ... of an allocation or union ('mixed' for a union of several)."""
    if isinstance(ref, o.Alloc):
        return [(under, ref.space)]
    found: list[tuple[Guard, Any]] = []
    for guard, refs in leaves(ref.groups, under):
        if refs is UNKNOWN or not refs:
            found.append((guard, UNKNOWN))
            continue
        combos: list[tuple[Guard, set[Any]]] = [(guard, set())]
        for leaf in refs:
            combos = [(both, spaces | {s}) for g, spaces in combos for both, s in space(leaf, g)]
        for g, spaces in combos:
            found.append((g, UNKNOWN if UNKNOWN in spaces else (spaces.pop() if len(spaces) == 1 else "mixed")))
    return found


def union_collective(union: o.Union, under: Guard) -> list[tuple[Guard, Any]]:
    """A union's `collective` as JAX computes it: all its TMEM leaves collective (True or
    False), MIXED when they disagree, None when it is not a TMEM union."""
    found: list[tuple[Guard, Any]] = []
    for guard, refs in leaves(union.groups, under):
        if refs is UNKNOWN or not refs:
            found.append((guard, UNKNOWN))
            continue
        for g, kind in space(union, guard):
            if kind is UNKNOWN:
                found.append((g, UNKNOWN))
            elif kind != "TMEM":
                found.append((g, None))
            else:
                found.extend(_agreement(refs, g))
    return found


def leaf_flags(refs: list[o.Alloc | o.Union], under: Guard) -> list[tuple[Guard, Any]]:
    """Each leaf's flag, per guard: a list of values, or UNKNOWN."""
    combos: list[tuple[Guard, Any]] = [(under, [])]
    for leaf in refs:
        combos = [
            (both, UNKNOWN if values is UNKNOWN or value is UNKNOWN else values + [value])
            for g, values in combos
            for both, value in (union_collective(leaf, g) if isinstance(leaf, o.Union) else flag(leaf.collective, g))
        ]
        if len(combos) > o.MAX_ALTERNATIVES:
            return [(under, UNKNOWN)]
    return combos


def _agreement(refs: list[o.Alloc | o.Union], under: Guard) -> list[tuple[Guard, Any]]:
    found: list[tuple[Guard, Any]] = []
    for guard, values in leaf_flags(refs, under):
        if values is UNKNOWN or MIXED in values:
            found.append((guard, UNKNOWN if values is UNKNOWN else MIXED))
        elif any(value != values[0] for value in values):
            found.append((guard, MIXED))
        else:
            found.append((guard, all(bool(value) for value in values)))
    return found


def tmem_allocs(union: o.Union, under: Guard) -> list[o.Alloc]:
    result: list[o.Alloc] = []
    for _, refs in leaves(union.groups, under):
        if refs is UNKNOWN:
            continue
        for leaf in refs:
            if isinstance(leaf, o.Union):
                result.extend(a for a in tmem_allocs(leaf, under) if a not in result)
            elif leaf.space == "TMEM" and leaf not in result:
                result.append(leaf)
    return result


# ---------------------------------------------------------------------------
# Where and when.


def reported_at(site: Site, root: nodes.Module) -> nodes.NodeNG | None:
    """Where JAX's traceback last points into the analysed file: the call itself, or the
    innermost call of the file on the way to it (a helper in another module)."""
    if site.node.root() is root:
        return site.node
    for node in reversed(site.chain):
        if isinstance(node, nodes.Call) and node.root() is root:
            return node
    return None


def shown_at(node: nodes.NodeNG, anchor: nodes.NodeNG) -> nodes.NodeNG:
    """Where a finding about the call `node` goes: at the call (in a helper module of the
    project, if it is there), but inside an installed library, which the user does not edit,
    at the analysed file's call into it (`anchor`)."""
    return anchor if getattr(node.root(), "pallas_library", None) else node


def context(chain: o.Chain) -> nodes.NodeNG | None:
    """The outermost call on the way: which use of the code led here."""
    for node in chain:
        if isinstance(node, nodes.Call):
            return node
    return None


@dataclass
class Verdicts:
    """The guards under which one check failed and those under which it was decided."""

    bad: list[tuple[Guard, o.Chain]]
    decided: list[tuple[Guard, o.Chain]]

    def describe(self, where: Callable[[nodes.NodeNG], str] = lambda node: f"line {node.lineno}") -> str:
        """'' when it fails wherever it was decided; else 'when <inputs>' (only the inputs that
        make the difference) and 'via the call at line N' (when only some uses fail; `where`
        names the call's place)."""
        bad_guards = [guard for guard, _ in self.bad]
        all_guards = bad_guards + [guard for guard, _ in self.decided]
        parts = []
        first = bad_guards[0]
        # An input's value (`block_m == 96`, an entry point's default) is named even when
        # nothing was decided for its other values: the finding holds for that value only.
        shown = {literal for literal in first if _is_value_test(literal[0])}
        if set(bad_guards) != set(all_guards):
            shown |= first - (frozenset.intersection(*all_guards) if all_guards else frozenset())
        bad_set = set(bad_guards)
        known = set(all_guards)
        named: list[tuple[str, bool]] = []  # (condition, whether flipping it decided otherwise)
        pinned = {var.key[1] for var, value in shown if value and _is_equality(var)}
        for var, value in sorted(shown, key=lambda literal: literal[0].label):
            flipped = (first - {(var, value)}) | {(var, not value)}
            if flipped in bad_set or (not value and _is_equality(var) and var.key[1] in pinned):
                continue  # (`block_m == 96` says `block_m != 128`)
            named.append((var.render(value), flipped in known or _is_value_test(var)))
        # where flipping some of them leads to a run that decided otherwise, those are the
        # difference; the others only lead here (`if k % tile_k: raise` before the call)
        differ = any(differs for _, differs in named)
        conditions = [text for text, differs in named if differs or not differ]
        if conditions:
            parts.append("when " + " and ".join(conditions))
        bad_contexts = {context(chain) for _, chain in self.bad}
        all_contexts = bad_contexts | {context(chain) for _, chain in self.decided}
        if bad_contexts != all_contexts:
            first_context = context(self.bad[0][1])
            if first_context is not None:
                parts.append(f"via the call at {where(first_context)}")
        return ", ".join(parts)


def unchosen(guard: Guard) -> bool:
    """Does the guard choose a setting the file does not: of a deployed input the code does
    not know holds, or a value of an entry point's parameter other than its default
    (`objects.unknowable_setting`)?"""
    return any(o.unknowable_setting(var, value) for var, value in guard)


def _is_value_test(var: Any) -> bool:
    """Is `var` an input compared with a constant (`objects.equals_var`)?"""
    return len(var.key) == 4 and var.key[0] == "cond"


def _is_equality(var: Any) -> bool:
    return _is_value_test(var) and var.key[2] == "=="


def combine(groups: Iterable[list[tuple[Guard, Any]]]) -> list[list[tuple[Guard, Any]]]:
    return [list(choice) for choice in product(*groups)]
