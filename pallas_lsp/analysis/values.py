"""The two values every layer shares: `UNKNOWN` (silence) and `Var` (a free variable of a
guard: an input's truthiness, its identity with None, a condition we cannot decide)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable


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


@dataclass(frozen=True)
class Var:
    """A free variable. `domain` lists its possible values; `label` renders it for messages."""

    key: tuple[Any, ...]  # (kind, ...), hashable: ("truth", free key), ("none", free key), ("cond", ...)
    domain: tuple[Hashable, ...]
    label: str
    labels: tuple[str, ...] = ()  # one per domain value, for choices between call sites

    def __hash__(self) -> int:  # guards hash their variables all the time: compute it once
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.key, self.domain, self.label, self.labels))
            object.__setattr__(self, "_hash", cached)
        return cached

    def render(self, value: object) -> str:
        if self.labels:
            return self.labels[self.domain.index(value)]
        if self.key[0] == "none":
            return f"{self.label} is {'None' if value else 'not None'}"
        if len(self.key) == 4 and self.key[2] == "==" and self.domain == (False, True):  # `objects.equals_var`
            return self.label if value else self.label.replace(" == ", " != ", 1)
        return f"{self.label} is {value}"
