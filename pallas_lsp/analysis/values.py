"""Abstract values: what an expression of the analysed program can be.

Evaluation happens in two steps. `flow` turns an expression into a *lazy* value tree (no
decision taken on flags or on which call site reached a function), and `solve` concretizes that
tree under an assignment of the few free variables it touches. Keeping the tree lazy is what
lets `collective=collective` and `collective_axis="x" if collective else None` agree: both
concretize the same variable under the same assignment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from astroid import nodes


class _Unknown:
    """The value could not be resolved. Any decision that depends on it is left undecided."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


# ---------------------------------------------------------------------------
# Free variables: the only things an assignment decides.


@dataclass(frozen=True)
class Var:
    """A free variable. `domain` lists its possible values; `label` renders it for messages."""

    key: tuple
    domain: tuple
    label: str
    labels: tuple = ()  # one per domain value, for choices between call sites

    def render(self, value: object) -> str:
        if self.labels:
            return self.labels[self.domain.index(value)]
        if self.key[0] == "none":
            return f"{self.label} is {'None' if value else 'not None'}"
        return f"{self.label} is {value}"


# ---------------------------------------------------------------------------
# Lazy value trees, built by `flow`.


class Lazy:
    """Base of lazy values. Subclasses are small frozen records."""


@dataclass(frozen=True)
class Const(Lazy):
    value: object


@dataclass(frozen=True)
class Opaque(Lazy):
    """UNKNOWN, with the reason kept for debugging."""

    reason: str = ""


@dataclass(frozen=True)
class Seq(Lazy):
    kind: str  # "tuple" | "list"
    items: tuple  # of Lazy; a Starred item is Star(Lazy)


@dataclass(frozen=True)
class Star(Lazy):
    value: Lazy


@dataclass(frozen=True)
class Mapping(Lazy):
    # ((key: Lazy | None, value: Lazy), ...); key None means `**value`
    items: tuple


@dataclass(frozen=True)
class Ite(Lazy):
    cond: Lazy
    then: Lazy
    orelse: Lazy


@dataclass(frozen=True)
class Choice(Lazy):
    """One of `alternatives`, chosen by `var` (call sites of a function, reaching assignments)."""

    var: Var
    alternatives: tuple


@dataclass(frozen=True)
class FreeRoot(Lazy):
    """An input nobody in the analysed code supplies: a parameter of an entry point."""

    key: tuple
    label: str


@dataclass(frozen=True)
class Index(Lazy):
    base: Lazy
    index: Lazy


@dataclass(frozen=True)
class Attr(Lazy):
    base: Lazy
    name: str


@dataclass(frozen=True)
class Op(Lazy):
    """A Python operator: unary (`not`, `-`), binary (`+`), comparison (`==`, `is`) or boolean."""

    op: str
    operands: tuple
    node: nodes.NodeNG | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Alloc(Lazy):
    """A memory-space constructor call: `plgpu.TMEM(...)`, `plgpu.SMEM(...)`, ..."""

    node: nodes.Call
    space: str
    collective: Lazy  # the `collective=` argument, Const(None) when absent
    name: str  # the name the allocation is bound to, for messages


@dataclass(frozen=True)
class UnionAlloc(Lazy):
    """`plgpu.RefUnion(*groups)`."""

    node: nodes.Call
    groups: tuple
    name: str


@dataclass(frozen=True)
class Barrier(Lazy):
    node: nodes.Call
    kind: str  # "Barrier" | "ClusterBarrier"


@dataclass(frozen=True)
class Func(Lazy):
    """A function, lambda or class of the analysed code, as a value."""

    node: nodes.FunctionDef | nodes.Lambda | nodes.ClassDef


@dataclass(frozen=True)
class Partial(Lazy):
    func: Lazy
    args: tuple
    keywords: tuple  # ((name | None, Lazy), ...)


@dataclass(frozen=True)
class Param(Lazy):
    """The value a parameter receives from one invocation of its function."""

    func: nodes.FunctionDef | nodes.Lambda
    name: str
    invocation: Any  # flow.Invocation


@dataclass(frozen=True)
class LateParam(Lazy):
    """A parameter asked for while its function's invocations were still being collected."""

    func: nodes.FunctionDef | nodes.Lambda
    name: str


@dataclass(frozen=True)
class Returned(Lazy):
    """What `func` returns when called at `invocation` (its parameters pinned to that call)."""

    func: nodes.FunctionDef | nodes.Lambda
    invocation: Any
    value: Lazy  # the return expression(s), evaluated in the callee


@dataclass(frozen=True)
class Instance(Lazy):
    """An instance of a class of the analysed code (dataclass configs)."""

    cls: nodes.ClassDef
    invocation: Any


# ---------------------------------------------------------------------------
# Concrete values, produced by `solve` under an assignment.


@dataclass(frozen=True)
class Free:
    """A concrete stand-in for an unsupplied input; its truthiness is a variable."""

    key: tuple
    label: str


@dataclass(frozen=True)
class Ref:
    """A concrete reference: an allocation, possibly reached as a member of a RefUnion.

    `pins` are the call variables fixed where the allocation was reached (a helper returning
    `plgpu.TMEM(..., collective=collective)` for one of its calls): the allocation's own
    arguments are read under them.
    """

    alloc: Alloc
    union: UnionAlloc | None = None
    pins: tuple = field(default=(), compare=False)
    sliced: bool = field(default=False, compare=False)  # reached through `.at[...]`: shape unknown


@dataclass(frozen=True)
class UnionRef:
    union: UnionAlloc
    parent: UnionAlloc | None = None
