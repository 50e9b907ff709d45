"""Facts about TMEM allocations shared by the rules."""

from __future__ import annotations

from typing import Any

from astroid import nodes

from .. import fixes, values as v
from ..solve import Concretizer
from ..values import UNKNOWN


def leaves(conc: Concretizer, group: Any) -> list | Any:
    """The refs of a RefUnion group, recursively through lists and tuples (nested unions are
    leaves, as in `jax.tree.leaves`); UNKNOWN when a part cannot be resolved."""
    if isinstance(group, (tuple, list)):
        found: list = []
        for item in group:
            inner = leaves(conc, item)
            if inner is UNKNOWN:
                return UNKNOWN
            found.extend(inner)
        return found
    if isinstance(group, (v.Ref, v.UnionRef)):
        return [group]
    return UNKNOWN


def union_leaves(conc: Concretizer, union: v.UnionAlloc) -> list | Any:
    return leaves(conc, [conc.value(group) for group in union.groups])


def space(conc: Concretizer, ref: Any) -> str | Any:
    """'TMEM', 'SMEM', ... of a ref or union; 'mixed' for a union of several; UNKNOWN."""
    if isinstance(ref, v.Ref):
        return ref.alloc.space
    found = union_leaves(conc, ref.union)
    if found is UNKNOWN or not found:
        return UNKNOWN
    spaces = {space(conc, leaf) for leaf in found}
    if UNKNOWN in spaces:
        return UNKNOWN
    return spaces.pop() if len(spaces) == 1 else "mixed"


def flag(conc: Concretizer, ref: Any) -> Any:
    """A TMEM ref's stored `collective` value as JAX compares it (None becomes False)."""
    if isinstance(ref, v.UnionRef):
        return union_collective(conc, ref.union)
    value = conc.argument(ref, ref.alloc.collective)
    if value is None:
        return False
    if isinstance(value, v.Free):
        return conc.truth(value)
    if isinstance(value, (bool, int, float, str)):
        return value
    return UNKNOWN


MIXED = "mixed"  # a union JAX refuses to build (PLS002)


def union_collective(conc: Concretizer, union: v.UnionAlloc) -> Any:
    """A TMEM union's `collective` (all leaves collective), MIXED when its leaves disagree,
    None when it is not a TMEM union."""
    found = union_leaves(conc, union)
    if found is UNKNOWN:
        return UNKNOWN
    if space(conc, v.UnionRef(union)) != "TMEM":
        return None
    flags = [flag(conc, leaf) for leaf in found]
    if UNKNOWN in flags:
        return UNKNOWN
    if any(value != flags[0] for value in flags):  # JAX compares with !=, not truthiness
        return MIXED
    truths = [conc.truth(value) for value in flags]
    return UNKNOWN if UNKNOWN in truths else all(truths)


def tmem_allocs(conc: Concretizer, union: v.UnionAlloc) -> list[v.Alloc]:
    """Every TMEM allocation inside a union, nested unions included."""
    found = union_leaves(conc, union)
    if found is UNKNOWN:
        return []
    allocs: list[v.Alloc] = []
    for leaf in found:
        if isinstance(leaf, v.UnionRef):
            allocs.extend(tmem_allocs(conc, leaf.union))
        elif leaf.alloc.space == "TMEM":
            allocs.append(leaf.alloc)
    return allocs


def collective_keyword_text(call: nodes.Call) -> str:
    """'without collective=True' or 'with collective=<as written>'."""
    keyword = fixes.keyword(call, "collective")
    if keyword is None:
        return "without collective=True"
    return f"with collective={keyword.value.as_string()}"
