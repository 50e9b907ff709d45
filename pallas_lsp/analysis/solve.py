"""Deciding lazy values under assignments of their free variables.

`explore(check)` runs `check(concretizer)` once per assignment of the variables the check
actually touches. Variables are discovered on demand: reading an unassigned one raises
`NeedVar`, and the run is repeated once per value of its domain. A handful of flags gives a
handful of runs; the run count is capped, and past the cap nothing is decided (silence).
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from . import values as v
from .values import UNKNOWN

MAX_RUNS = 256
MAX_DEPTH = 120


class NeedVar(Exception):
    def __init__(self, var: v.Var) -> None:
        super().__init__(var.label)
        self.var = var


class TooDeep(Exception):
    pass


class BudgetExceeded(Exception):
    """The file's analysis budget ran out: nothing is reported for it."""


class Cancelled(BudgetExceeded):
    """The caller no longer wants the result (the server got a newer version of the text)."""


_BOOL = (False, True)

_BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "%": operator.mod,
}
_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_PRIMITIVE = (bool, int, float, str, type(None))


@dataclass(frozen=True)
class AtProxy:
    """`ref.at`: indexing it gives back the same allocation."""

    target: Any


@dataclass(frozen=True)
class InstanceObj:
    cls: Any
    invocation: Any


class Concretizer:
    """Evaluates lazy values under one (partial) assignment of free variables."""

    def __init__(self, assignment: dict, binder: Any, pins: dict | None = None) -> None:
        self.assignment = assignment
        self.binder = binder  # flow.Flow: binds parameters, reads instance fields
        self.pins: dict[v.Var, Any] = dict(pins or {})
        self.depth = 0

    # -- variables ------------------------------------------------------------------------

    def read(self, var: v.Var) -> Any:
        if var in self.pins:
            return self.pins[var]
        if var not in self.assignment:
            raise NeedVar(var)
        return self.assignment[var]

    def pinned(self, var: v.Var, value: Any, lazy: v.Lazy) -> Any:
        """Evaluate `lazy` with `var` fixed to `value` (a call's own arguments for its body)."""
        saved = self.pins.get(var, _MISSING)
        self.pins[var] = value
        try:
            return self.value(lazy)
        finally:
            if saved is _MISSING:
                del self.pins[var]
            else:
                self.pins[var] = saved

    def argument(self, ref: v.Ref, lazy: v.Lazy) -> Any:
        """An argument of `ref`'s allocation (its `collective=`), under the pins in force
        where the allocation was reached."""
        saved = dict(self.pins)
        self.pins.update(ref.pins)
        try:
            return self.value(lazy)
        finally:
            self.pins = saved

    # -- values ---------------------------------------------------------------------------

    def value(self, lazy: v.Lazy) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooDeep()
        try:
            return self._value(lazy)
        finally:
            self.depth -= 1

    def _value(self, lazy: v.Lazy) -> Any:  # noqa: C901 - one branch per value kind
        if isinstance(lazy, v.Const):
            return lazy.value
        if isinstance(lazy, v.Opaque):
            return UNKNOWN
        if isinstance(lazy, (v.Alloc,)):
            return v.Ref(lazy, pins=tuple(self.pins.items()))
        if isinstance(lazy, v.UnionAlloc):
            return v.UnionRef(lazy)
        if isinstance(lazy, (v.Barrier, v.Func, v.Partial)):
            return lazy
        if isinstance(lazy, v.Seq):
            return self._sequence(lazy)
        if isinstance(lazy, v.Mapping):
            return self._mapping(lazy)
        if isinstance(lazy, v.Ite):
            truth = self.truth(self.value(lazy.cond))
            if truth is UNKNOWN:
                return UNKNOWN
            return self.value(lazy.then if truth else lazy.orelse)
        if isinstance(lazy, v.Choice):
            return self.value(lazy.alternatives[self.read(lazy.var)])
        if isinstance(lazy, v.FreeRoot):
            return v.Free(lazy.key, lazy.label)
        if isinstance(lazy, v.Index):
            return self.index(self.value(lazy.base), self.value(lazy.index))
        if isinstance(lazy, v.Attr):
            return self.attribute(self.value(lazy.base), lazy.name)
        if isinstance(lazy, v.Op):
            return self._operator(lazy)
        if isinstance(lazy, v.Param):
            return self.binder.bind(self, lazy)
        if isinstance(lazy, v.LateParam):
            return self.value(self.binder.parameter(lazy.func, lazy.name))
        if isinstance(lazy, v.Returned):
            return self.pinned(self.binder.call_var(lazy.func), lazy.invocation.index, lazy.value)
        if isinstance(lazy, v.Instance):
            return InstanceObj(lazy.cls, lazy.invocation)
        if isinstance(lazy, v.Star):
            return UNKNOWN
        return UNKNOWN

    def _sequence(self, lazy: v.Seq) -> Any:
        items: list = []
        for item in lazy.items:
            if isinstance(item, v.Star):
                spread = self.value(item.value)
                if not isinstance(spread, (tuple, list)):
                    return UNKNOWN
                items.extend(spread)
            else:
                items.append(self.value(item))
        return tuple(items) if lazy.kind == "tuple" else list(items)

    def _mapping(self, lazy: v.Mapping) -> Any:
        result: dict = {}
        for key, item in lazy.items:
            if key is None:
                spread = self.value(item)
                if not isinstance(spread, dict):
                    return UNKNOWN
                result.update(spread)
                continue
            concrete_key = self.value(key)
            if not isinstance(concrete_key, _PRIMITIVE):
                return UNKNOWN
            result[concrete_key] = self.value(item)
        return result

    # -- operations -----------------------------------------------------------------------

    def truth(self, value: Any) -> Any:
        """Python truthiness, a variable for free inputs, UNKNOWN when undecidable."""
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, v.Free):
            return self.read(v.Var(("truth", value.key), _BOOL, value.label))
        if isinstance(value, _PRIMITIVE + (tuple, list, dict)):
            return bool(value)
        if isinstance(value, (v.Ref, v.UnionRef, v.Barrier, v.Func, v.Partial, AtProxy)):
            return True
        return UNKNOWN

    def is_none(self, value: Any) -> Any:
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, v.Free):
            return self.read(v.Var(("none", value.key), _BOOL, value.label))
        return value is None

    def index(self, base: Any, index: Any) -> Any:
        if base is UNKNOWN:
            return UNKNOWN
        if isinstance(base, AtProxy):
            target = base.target
            return dataclasses.replace(target, sliced=True) if isinstance(target, v.Ref) else target
        if isinstance(base, v.UnionRef):
            return self._union_group(base, index)
        if isinstance(base, v.Free):
            if isinstance(index, _PRIMITIVE):
                return v.Free(base.key + (repr(index),), f"{base.label}[{index!r}]")
            return UNKNOWN
        if isinstance(base, (tuple, list)) and isinstance(index, int) and not isinstance(index, bool):
            return base[index] if -len(base) <= index < len(base) else UNKNOWN
        if isinstance(base, dict) and isinstance(index, _PRIMITIVE):
            return base.get(index, UNKNOWN)
        return UNKNOWN

    def _union_group(self, union_ref: v.UnionRef, index: Any) -> Any:
        """`union[i]` / unpacking a union: group i, every leaf marked as a member of the union."""
        groups = union_ref.union.groups
        if not isinstance(index, int) or isinstance(index, bool) or not -len(groups) <= index < len(groups):
            return UNKNOWN
        return self.members(self.value(groups[index]), union_ref.union)

    def members(self, group: Any, union: v.UnionAlloc) -> Any:
        if isinstance(group, (tuple, list)):
            return type(group)(self.members(item, union) for item in group)
        if isinstance(group, v.Ref):
            return v.Ref(group.alloc, union, group.pins, group.sliced)
        if isinstance(group, v.UnionRef):
            return v.UnionRef(group.union, union)
        return group

    def attribute(self, base: Any, name: str) -> Any:
        if isinstance(base, v.Free):
            return v.Free(base.key + (name,), f"{base.label}.{name}")
        if isinstance(base, (v.Ref, v.UnionRef, v.Barrier)) and name == "at":
            return AtProxy(base)
        if isinstance(base, InstanceObj):
            return self.binder.instance_field(self, base, name)
        return UNKNOWN

    def _operator(self, lazy: v.Op) -> Any:
        op = lazy.op
        if op in ("and", "or"):
            result = UNKNOWN
            for operand in lazy.operands:
                result = self.value(operand)
                truth = self.truth(result)
                if truth is UNKNOWN:
                    return UNKNOWN
                if truth == (op == "or"):
                    return result
            return result
        if op == "not":
            truth = self.truth(self.value(lazy.operands[0]))
            return UNKNOWN if truth is UNKNOWN else not truth
        if op in ("is", "is not"):
            return self._identity(lazy)
        operands = [self.value(operand) for operand in lazy.operands]
        if op in _COMPARE:
            left, right = operands
            if isinstance(left, _PRIMITIVE) and isinstance(right, _PRIMITIVE):
                try:
                    return _COMPARE[op](left, right)
                except TypeError:
                    return UNKNOWN
            return self._opaque_condition(lazy)
        if op in _BINARY:
            left, right = operands
            if _foldable(left) and _foldable(right):
                try:
                    return _BINARY[op](left, right)
                except (TypeError, ValueError, ArithmeticError, OverflowError):
                    return UNKNOWN
            return UNKNOWN
        if op == "-unary" and isinstance(operands[0], (int, float)):
            return -operands[0]
        return UNKNOWN

    def _identity(self, lazy: v.Op) -> Any:
        left, right = (self.value(operand) for operand in lazy.operands)
        for subject, other in ((left, right), (right, left)):
            if other is None:
                result = self.is_none(subject)
                if result is UNKNOWN:
                    return UNKNOWN
                return result if lazy.op == "is" else not result
        if isinstance(left, _PRIMITIVE) and isinstance(right, _PRIMITIVE):
            same = left is right or (type(left) is type(right) and left == right)
            return same if lazy.op == "is" else not same
        return self._opaque_condition(lazy)

    def _opaque_condition(self, lazy: v.Op) -> Any:
        """A comparison on inputs we cannot see: both outcomes are possible, keyed by its node."""
        if lazy.node is None:
            return UNKNOWN
        return self.read(v.Var(("cond", lazy.node), _BOOL, lazy.node.as_string()))


_MISSING = object()


def _foldable(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str, tuple)) and not (
        isinstance(value, tuple) and any(not isinstance(item, _PRIMITIVE) for item in value)
    )


# ---------------------------------------------------------------------------
# Exploring assignments.


@dataclass(frozen=True)
class Run:
    assignment: dict
    outcome: Any  # whatever the check returned; UNKNOWN means undecided


def explore(check: Callable[[Concretizer], Any], binder: Any, pins: dict | None = None) -> list[Run] | None:
    """All runs of `check` over the assignments it needs, or None past the cap.

    `pins` fixes variables for every run (a helper's call variable, to the call being checked).
    """
    pending: list[dict] = [{}]
    runs: list[Run] = []
    while pending:
        assignment = pending.pop()
        try:
            outcome = check(Concretizer(assignment, binder, pins))
        except NeedVar as need:
            for value in reversed(need.var.domain):
                pending.append({**assignment, need.var: value})
            if len(runs) + len(pending) > MAX_RUNS:
                return None
            continue
        except (TooDeep, RecursionError):
            outcome = UNKNOWN
        runs.append(Run(assignment, outcome))
    return runs


def describe(bad: list[Run], decided: Iterable[Run]) -> str:
    """'' when every decided run is bad, else 'when <literals>, via <call>' for the first bad run.

    Literals that do not matter (flipping one gives another bad run with the rest unchanged)
    are dropped, so `collective` alone is named, not every call-site choice on the way.
    """
    decided = list(decided)
    if not bad or len(bad) == len(decided):
        return ""
    bad_keys = {_key(run.assignment) for run in bad}
    first = bad[0].assignment
    needed = []
    for var, value in first.items():
        flips = [other for other in var.domain if other != value]
        if flips and all(_key({**first, var: other}) in bad_keys for other in flips):
            continue
        needed.append((var, value))
    conditions = [var.render(value) for var, value in needed if not var.labels]
    paths = [var.render(value) for var, value in needed if var.labels]  # "via the call at ..."
    parts = (["when " + " and ".join(conditions)] if conditions else []) + paths
    return ", ".join(parts)


def _key(assignment: dict) -> frozenset:
    return frozenset(assignment.items())
