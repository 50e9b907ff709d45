"""`@record`: what `@dataclasses.dataclass` makes of a plain data class, at a tenth of its cost.

A dataclass costs about a millisecond when its module is imported: each of its methods is
written out as source text and compiled (`__init__`, `__repr__`, `__eq__`, `__hash__`, the
frozen `__setattr__` and `__delattr__`), and its signature is computed for a docstring. The
package's 60-odd data classes were 60 ms of every `pallas-lint` or flake8 process that analyses
a file, a sixth of a pre-commit run on one kernel. A record compiles one function, its
`__init__` (the one that runs for every object made); the other methods are shared functions
that read the fields with `operator.attrgetter`.

Each method behaves as Python 3.11's and 3.12's dataclasses' do, for the options used here:
`frozen`, `eq`, defaults, `field(default=..., default_factory=..., compare=False)` and
`__post_init__`: the same parameters, the same equality (field tuples compared when the
classes are the same), the same hash (of the tuple of compared fields, so sets and dicts of
records iterate in the same order), the same text from `repr` (recursion printed `...`), and
the same errors on assigning to a frozen one (an `AttributeError`). A method the class defines
itself is kept, as dataclasses keep it. `tests/test_records.py` holds every record of the
package to a dataclass made of the same class body.

Not supported (use `dataclasses`): `dataclasses.replace`, `asdict`, `fields` (a record has no
`__dataclass_fields__`), inheritance between records, `order`, `slots`, keyword-only fields,
`ClassVar` annotations.
"""

from __future__ import annotations

import _thread
import operator
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    try:
        from typing import dataclass_transform
    except ImportError:  # Python 3.10: it only tells type checkers that `record` makes dataclasses
        def dataclass_transform(**kwargs: object) -> Callable[[_T], _T]:
            return lambda function: function

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record (`dataclasses.FrozenInstanceError`'s twin)."""


class Field:
    """What `field(...)` gives the class body; replaced by the default when the record is made."""

    __slots__ = ("compare", "default", "default_factory")

    def __init__(self, default: Any, default_factory: Any, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare


@overload
def field(*, default: _T, compare: bool = True) -> _T: ...
@overload
def field(*, default_factory: Callable[[], _T], compare: bool = True) -> _T: ...
@overload
def field(*, compare: bool = True) -> Any: ...
def field(*, default: Any = _MISSING, default_factory: Any = _MISSING, compare: bool = True) -> Any:
    """`dataclasses.field` with the parameters used here."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, compare)


@overload
@dataclass_transform(field_specifiers=(field,))
def record(cls: type[_T], /) -> type[_T]: ...
@overload
@dataclass_transform(field_specifiers=(field,))
def record(*, frozen: bool = False, eq: bool = True) -> Callable[[type[_T]], type[_T]]: ...
def record(cls: type[_T] | None = None, /, *, frozen: bool = False,
           eq: bool = True) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`dataclasses.dataclass` (with `frozen` and `eq`; see the module's docstring)."""
    def wrap(cls: type[_T]) -> type[_T]:
        return _build(cls, frozen, eq)

    return wrap if cls is None else wrap(cls)


_HAS_FACTORY: Any = type("_HasFactory", (), {"__repr__": lambda self: "<factory>"})()


def _build(cls: type[_T], frozen: bool, eq: bool) -> type[_T]:  # noqa: C901 - one step per method, as dataclasses'
    names: list[str] = []
    compared: list[str] = []
    defaults: dict[str, Any] = {}
    factories: dict[str, Any] = {}
    own = cls.__dict__
    # what the class was made of (for tests/test_records.py's dataclass twins)
    spec: dict[str, Any] = {"frozen": frozen, "eq": eq, "fields": [], "defined": {method: own[method] for method in _METHODS if method in own}}
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if text.startswith(("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar")):
            raise TypeError(f"{cls.__qualname__}.{name}: a record has no ClassVar or InitVar fields")
        value = cls.__dict__.get(name, _MISSING)
        compare = True
        if isinstance(value, Field):
            compare = value.compare
            if value.default_factory is not _MISSING:
                factories[name] = value.default_factory
            elif value.default is not _MISSING:
                defaults[name] = value.default
            if value.default is _MISSING:
                delattr(cls, name)  # as dataclasses do: no class attribute without a default
            else:
                setattr(cls, name, value.default)
        elif value is not _MISSING:
            defaults[name] = value
        if names and (names[-1] in defaults or names[-1] in factories) and not (name in defaults or
                                                                                 name in factories):
            raise TypeError(f"non-default argument {name!r} follows default argument")
        names.append(name)
        if compare:
            compared.append(name)
        spec["fields"].append((name, defaults.get(name, _MISSING), factories.get(name, _MISSING), compare))

    if "__init__" not in own:
        cls.__init__ = _init(cls, names, defaults, factories, frozen)  # type: ignore[method-assign]  # made here
    if "__repr__" not in own:
        cls.__repr__ = _repr(operator.attrgetter(*names) if names else None, names)  # type: ignore[method-assign]
    if eq and "__eq__" not in own:
        cls.__eq__ = _eq(_fields_tuple(compared))  # type: ignore[method-assign]  # made here
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    if eq and not explicit_hash:
        cls.__hash__ = _hash(_fields_tuple(compared)) if frozen else None  # type: ignore[assignment,method-assign]
    if frozen:
        for method in ("__setattr__", "__delattr__"):
            if method in own:
                raise TypeError(f"cannot overwrite attribute {method} in class {cls.__name__}")
        cls.__setattr__ = _frozen_setattr(cls, frozenset(names))  # type: ignore[method-assign]
        cls.__delattr__ = _frozen_delattr(cls, frozenset(names))  # type: ignore[method-assign]
    if "__match_args__" not in own:
        cls.__match_args__ = tuple(names)  # type: ignore[attr-defined,misc]  # as dataclasses set it
    cls.__record__ = spec  # type: ignore[attr-defined]  # ours
    return cls


_METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__post_init__")


def _init(cls: type, names: list[str], defaults: dict[str, Any], factories: dict[str, Any],
          frozen: bool) -> Callable[..., None]:
    namespace: dict[str, Any] = {"_object_setattr": object.__setattr__, "_HAS_FACTORY": _HAS_FACTORY}
    parameters, lines = [], []
    for name in names:
        if name in factories:
            namespace[f"_factory_{name}"] = factories[name]
            parameters.append(f"{name}=_HAS_FACTORY")
            value = f"_factory_{name}() if {name} is _HAS_FACTORY else {name}"
        elif name in defaults:
            namespace[f"_default_{name}"] = defaults[name]
            parameters.append(f"{name}=_default_{name}")
            value = name
        else:
            parameters.append(name)
            value = name
        lines.append(f"    _object_setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    source = f"def __init__({', '.join(['self', *parameters])}) -> None:\n" + ("\n".join(lines) or "    pass") + "\n"
    exec(compile(source, f"<record {cls.__module__}.{cls.__qualname__}>", "exec"), namespace)  # noqa: S102 - our own text
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _fields_tuple(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function of an object: the tuple of its fields `names` (of one field too, as
    dataclasses compare and hash `(self.x,)`)."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return operator.attrgetter(*names)


def _repr(get: Callable[[Any], Any] | None, names: list[str]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()
    single = len(names) == 1

    def __repr__(self: Any) -> str:
        key = id(self), _thread.get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            if get is None:
                return f"{self.__class__.__qualname__}()"
            values = (get(self),) if single else get(self)
            return f"{self.__class__.__qualname__}({', '.join([f'{n}={v!r}' for n, v in zip(names, values)])})"
        finally:
            running.discard(key)

    return __repr__


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _frozen_setattr(cls: type, names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]  # as dataclasses call it

    return __setattr__


def _frozen_delattr(cls: type, names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    return __delattr__


__all__ = ["Field", "FrozenInstanceError", "field", "record"]
