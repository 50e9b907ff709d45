"""Concrete alternatives of traced values, chosen consistently along one run of a check
(`Picker`), and every consistent choice explored (`explore`). The rules decide their problems
through it, and the trace decides with it whether a constructor surely raises
(`refusals`): a value with several guarded alternatives is one value per alternative,
each under the guard it holds under.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from .. import api
from ..values import UNKNOWN, Var
from . import decide
from . import objects as o
from .stubs import tree_children

_T = TypeVar("_T")
MAX_RUNS = 256  # alternatives explored per site before giving up (silence)
_PRIMITIVE = (bool, int, float, str, type(None))
_OBJECTS = (o.Alloc, o.Union, o.Member, o.View, o.Barrier, o.Closure, o.Bound, o.Partial, o.Kernel,
            api.ApiValue, api.DType)


class _Branch(Exception):
    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


class _Dead(Exception):
    """No alternative is consistent with the guard so far."""


class Picker:
    """Concrete alternatives of traced values, chosen consistently along one run."""

    def __init__(self, guard: o.Guard, choices: list[int],
                 seen: dict[tuple[Any, ...], tuple[Any, Any]] | None = None) -> None:
        self.guard = guard
        self._choices = choices
        self._index = 0
        # `explore` runs a check again for each choice, so it picks the same values under the
        # same guards again: their alternatives, by value (held, so its id stays its own) and guard
        self._seen = {} if seen is None else seen

    def _choose(self, options: list[tuple[o.Guard, _T]]) -> _T:
        if not options:
            raise _Dead()
        if len(options) == 1:
            choice = options[0]
        else:
            if self._index >= len(self._choices):
                raise _Branch(len(options))
            choice = options[self._choices[self._index]]
            self._index += 1
        self.guard = choice[0]
        return choice[1]

    def pick(self, value: Any) -> Any:
        """One alternative of `value` (a plain value, an object, a `Free` input or UNKNOWN)."""
        if not isinstance(value, o.Guarded):
            return value  # (its one alternative, under the guard so far)
        key = (id(value), self.guard)
        seen = self._seen.get(key)
        if seen is None or seen[0] is not value:
            seen = self._seen[key] = (value, decide.alternatives(value, self.guard))
        return self._choose(seen[1])

    def every_way(self, test: Callable[[Any], bool], value: Any) -> bool:
        """Does `test` hold of every alternative of `value`, and of every alternative of its
        items (tuples, lists, dict values), whichever way they were chosen? Then a walk looking
        for what `test` rules out may pass over it without choosing (no run of `explore` per
        way). False when no alternative is consistent with the guard so far (the walk picks
        it, and the run is dead). Remembered by value and guard, as `pick` is."""
        key = (id(value), self.guard, test)
        seen = self._seen.get(key)
        if seen is None or seen[0] is not value:
            ways = decide.alternatives(value, self.guard) if isinstance(value, o.Guarded) else [(self.guard, value)]
            seen = self._seen[key] = (value, bool(ways) and _every_way(test, value, 0))
        return bool(seen[1])

    def shape(self, value: Any) -> tuple[int, ...] | Any:
        """A shape of plain integers, each dimension one of its alternatives (`(block_m, 128)`
        with `block_m` an input left at its default, or `128 if collective else 64`);
        UNKNOWN when it is not a tuple or list of integers."""
        dims = self.sequence(value)
        if dims is UNKNOWN:
            return UNKNOWN
        known = tuple(self.integer(dim) for dim in dims)
        return UNKNOWN if any(dim is UNKNOWN for dim in known) else known

    def sequence(self, value: Any) -> tuple[Any, ...] | Any:
        """One alternative of a tuple or list, its items not chosen yet (a check reads only
        the items it needs: whichever way an undecidable condition chose the others, the
        outcome holds); UNKNOWN for anything else."""
        items = self.pick(value)
        return tuple(items) if isinstance(items, (tuple, list)) else UNKNOWN

    def integer(self, value: Any) -> int | Any:
        """One alternative of a plain integer (not a bool); UNKNOWN for anything else (an
        input's `x.shape[-1]` is an integer when the code runs, but not one we know)."""
        item = self.pick(value)
        return item if isinstance(item, int) and not isinstance(item, bool) else UNKNOWN

    def holds(self, guard: o.Guard) -> bool:
        """Does `guard` hold (decided both ways when the guard so far leaves it open)?"""
        open_literals = [literal for literal in guard if literal not in self.guard]
        if not open_literals:
            return True
        options: list[tuple[o.Guard, bool]] = []
        both = o.conjoin(self.guard, frozenset(open_literals))
        if both is not None:
            options.append((both, True))
        prefix: list[tuple[Var, bool]] = []
        for var, value in sorted(open_literals, key=lambda literal: literal[0].label):
            negated = o.conjoin(self.guard, frozenset(prefix), frozenset({(var, not value)}))
            if negated is not None:
                options.append((negated, False))
            prefix.append((var, value))
        return self._choose(options)

    def given(self, value: Any) -> Any:
        """Is the value not None? UNKNOWN for inputs and values we cannot follow."""
        item = self.pick(value)
        if item is UNKNOWN or isinstance(item, (o.Free, o.Library, o.TailTuple)):
            return UNKNOWN
        return item is not None

    def truth(self, value: Any, free: bool = False) -> Any:
        """Python truthiness; an input is UNKNOWN, or (with `free`) decided both ways."""
        item = self.pick(value)
        if isinstance(item, o.Free):
            if not free:
                return UNKNOWN
            return self._choose(decide.truth(item, self.guard))
        return _truth(item)

    def flag(self, value: Any) -> Any:
        """A TMEM allocation's `collective` as JAX stores it (None is False); an input's
        truthiness is decided both ways, as PLS001 does."""
        return self._choose(decide.flag(self.pick(value), self.guard))

    # -- refs --------------------------------------------------------------------------

    def leaves(self, value: Any) -> list[o.Alloc | o.Union] | Any:
        """The allocations and unions of a pytree of refs (nested unions are leaves), in
        `jax.tree.leaves` order: a dict's by its sorted keys, a named tuple's fields, no None."""
        item = o.base_ref(self.pick(value))
        if isinstance(item, o.Member):
            item = item.ref
        children = tree_children(item) if not isinstance(item, (o.Alloc, o.Union)) else None
        if children is not None:
            found: list[o.Alloc | o.Union] = []
            for element in children:
                inner = self.leaves(element)
                if inner is UNKNOWN:
                    return UNKNOWN
                found.extend(inner)
            return found
        if isinstance(item, (o.Alloc, o.Union)):
            return [item]
        return UNKNOWN

    def space(self, ref: Any) -> Any:
        """'TMEM', 'SMEM', ... of an allocation or union ('mixed' for a union of several)."""
        ref = o.base_ref(ref)
        if isinstance(ref, o.Member):
            ref = ref.ref
        if isinstance(ref, o.Alloc):
            return ref.space
        if isinstance(ref, o.Operand):
            return ref.space
        if not isinstance(ref, o.Union):
            return UNKNOWN
        found = self.leaves(ref.groups)
        if found is UNKNOWN or not found:
            return UNKNOWN
        spaces = {self.space(leaf) for leaf in found}
        if UNKNOWN in spaces:
            return UNKNOWN
        return spaces.pop() if len(spaces) == 1 else "mixed"

    def collective(self, ref: Any) -> Any:
        """Is a TMEM allocation (or TMEM union) collective? None when it is not TMEM;
        decide.MIXED for a union JAX refuses (PLS002); UNKNOWN."""
        ref = o.base_ref(ref)
        if isinstance(ref, o.Member):
            ref = ref.ref
        if isinstance(ref, o.Alloc):
            if ref.space != "TMEM":
                return None
            value = self.flag(ref.collective)
            return UNKNOWN if value is UNKNOWN else bool(value)
        if not isinstance(ref, o.Union):
            return UNKNOWN
        if self.space(ref) != "TMEM":
            return None if self.space(ref) not in (UNKNOWN, "mixed") else UNKNOWN
        found = self.leaves(ref.groups)
        if found is UNKNOWN:
            return UNKNOWN
        flags = []
        for leaf in found:
            value = self.collective(leaf) if isinstance(leaf, o.Union) else self.flag(leaf.collective)
            if value is UNKNOWN or value is decide.MIXED:
                return value
            flags.append(value)
        if any(value != flags[0] for value in flags):  # JAX compares with !=
            return decide.MIXED
        return all(bool(value) for value in flags)


def explore(check: Callable[[Picker], Any], guard: o.Guard) -> list[tuple[o.Guard, Any]]:
    """(guard, outcome) for every consistent choice of the alternatives `check` picks. An
    outcome that needed a condition we cannot decide is unknown (each place such a condition
    is tested is a variable of its own, so some combinations cannot happen), and so is one
    that needed a deployed input's setting the code does not know (`objects.deployed_setting`),
    unless every choice gives the same outcome: then no combination matters."""
    results: list[tuple[o.Guard, Any]] = []
    opaque: list[int] = []  # the results chosen by such a condition
    pending: list[list[int]] = [[]]
    seen: dict[tuple[Any, ...], tuple[Any, Any]] = {}
    runs = 0
    while pending:
        choices = pending.pop()
        runs += 1
        if runs > MAX_RUNS:
            return [(guard, UNKNOWN)]
        picker = Picker(guard, choices, seen)
        try:
            outcome = check(picker)
        except _Branch as branch:
            pending.extend(choices + [index] for index in reversed(range(branch.count)))
            continue
        except _Dead:
            continue
        if outcome is not UNKNOWN and any(_opaque(var) or o.deployed_setting(var, value)
                                          for var, value in picker.guard - guard):
            opaque.append(len(results))
        results.append((picker.guard, outcome))
    if opaque and not _all_same([outcome for _, outcome in results]):
        for index in opaque:
            results[index] = (results[index][0], UNKNOWN)
    return results


def _all_same(outcomes: list[Any]) -> bool:
    first = outcomes[0]
    try:
        return first is not UNKNOWN and all(outcome is first or outcome == first for outcome in outcomes)
    except Exception:  # noqa: BLE001 - an outcome that does not compare: not the same
        return False


def _opaque(var: Any) -> bool:
    """A condition the tracer could not decide (`objects.opaque_var`): one per place it is
    tested, so two tests of the same unknown value are unrelated variables, and their
    combinations include some that cannot happen."""
    return len(var.key) == 2 and var.key[0] == "cond"


def _every_way(test: Callable[[Any], bool], value: Any, depth: int) -> bool:
    if depth > 16:
        return False
    for _, item in o.split(value):
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, (tuple, list)):
            if not all(_every_way(test, element, depth + 1) for element in item):
                return False
        elif not test(item):
            return False
    return True


def _truth(item: Any) -> Any:
    if item is UNKNOWN or isinstance(item, (o.Library, o.TailTuple)):
        return UNKNOWN
    if isinstance(item, (*_PRIMITIVE, tuple, list, dict)):
        return bool(item)
    if isinstance(item, _OBJECTS):
        return True
    return UNKNOWN
