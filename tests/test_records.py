"""Every `@record` of the package behaves as the dataclass made of the same class body
(`analysis/records.py`): the same `__init__` parameters and defaults, `repr`, equality, hash,
frozen assignments, class attributes, `__match_args__` and pickling."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from typing import Any

import pytest

import pallas_lsp
from pallas_lsp.analysis import records

_SKIP = ("pallas_lsp.server", "pallas_lsp.__main__")


def _records() -> list[type]:
    found = {}
    for info in pkgutil.walk_packages(pallas_lsp.__path__, "pallas_lsp."):
        if info.name.startswith(_SKIP):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and "__record__" in vars(value) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


RECORDS = _records()


def _twin(cls: type) -> type:
    """The dataclass of `cls`'s class body."""
    spec = cls.__record__
    body: dict[str, Any] = {"__annotations__": {}, "__module__": cls.__module__, "__qualname__": cls.__qualname__}
    for name, default, factory, compare in spec["fields"]:
        body["__annotations__"][name] = "Any"
        if factory is not records._MISSING:
            body[name] = dataclasses.field(default_factory=factory, compare=compare)
        elif default is not records._MISSING:
            body[name] = dataclasses.field(default=default, compare=compare)
        elif not compare:
            body[name] = dataclasses.field(compare=False)
    body.update(spec["defined"])
    return dataclasses.dataclass(frozen=spec["frozen"], eq=spec["eq"])(type(cls.__name__, (), body))


def _parameters(function: Any) -> list[tuple[str, Any, Any]]:
    found = []
    for parameter in inspect.signature(function).parameters.values():
        default = parameter.default
        if repr(default) == "<factory>":  # each module's own sentinel for a default factory
            default = "<factory>"
        found.append((parameter.name, parameter.kind, default))
    return found


def _arguments(cls: type, offset: int = 0) -> list[int]:
    """Distinct, hashable, picklable values for the fields without defaults."""
    return [1000 + offset + index for index, (_, default, factory, _) in enumerate(cls.__record__["fields"])
            if default is records._MISSING and factory is records._MISSING]


def _assigns(obj: Any, name: str) -> bool:
    """Can `name` be assigned on `obj` (frozen or not)?"""
    try:
        setattr(obj, name, 1)
    except AttributeError:
        return False
    return getattr(obj, name) == 1


def test_the_package_has_records():
    assert len(RECORDS) > 40


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_a_record_behaves_as_its_dataclass(cls):
    twin = _twin(cls)
    assert _parameters(cls.__init__) == _parameters(twin.__init__)
    assert cls.__match_args__ == twin.__match_args__
    names = [name for name, *_ in cls.__record__["fields"]]
    for name in names:
        assert (name in vars(cls)) == (name in vars(twin)), name
        if name in vars(twin):
            assert vars(cls)[name] == vars(twin)[name], name
    assert (cls.__hash__ is None) == (twin.__hash__ is None)

    args = _arguments(cls)
    ours, theirs = cls(*args), twin(*args)
    assert repr(ours) == repr(theirs)
    assert vars(ours) == vars(theirs)
    assert (ours == cls(*args)) == (theirs == twin(*args))
    assert (ours != cls(*args)) == (theirs != twin(*args))
    assert ours.__eq__(object()) is NotImplemented or not cls.__record__["eq"]
    for index, name in enumerate(names):  # each field changed in turn (the rest as they were)
        kwargs = dict(zip(names, args))
        kwargs[name] = f"changed {index}"
        assert (ours == cls(**kwargs)) == (theirs == twin(**kwargs)), name
    if twin.__hash__ is not None and cls.__record__["eq"]:
        assert hash(ours) == hash(theirs)
    for name in [*names, "not_a_field"]:
        assert _assigns(ours, name) == _assigns(theirs, name), name
    if not cls.__record__["frozen"] or not names:
        return
    with pytest.raises(AttributeError):
        delattr(ours, names[0])
    copy = pickle.loads(pickle.dumps(cls(*args)))  # a -j worker's results come back pickled
    assert vars(copy) == vars(cls(*args)) and type(copy) is cls


def test_factories_make_a_new_value_each_time():
    cls = next(cls for cls in RECORDS if any(factory is not records._MISSING
                                             for _, _, factory, _ in cls.__record__["fields"]))
    name = next(name for name, _, factory, _ in cls.__record__["fields"] if factory is not records._MISSING)
    args = _arguments(cls)
    assert getattr(cls(*args), name) is not getattr(cls(*args), name)


def test_recursive_repr():
    @records.record
    class Box:
        content: Any

    box = Box(None)
    box.content = [box]
    assert repr(box) == "test_recursive_repr.<locals>.Box(content=[...])"
