"""Imports, as the tracer sees them: jax and the standard library by qualified name (the
stubs know what they mean), the project's own modules by running them."""

from __future__ import annotations

import functools
import importlib.machinery
import os
from typing import Any, Iterator, Protocol

import astroid
from astroid import modutils, nodes

from .. import api

from . import objects as o
from . import stubs

# Libraries whose names the stubs know; everything else outside the project is opaque.
_KNOWN_ROOTS = ("jax", "functools", "dataclasses", "builtins", "typing", "math", "types", "collections", "itertools",
                "operator", "enum", "contextlib", "inspect", "copy", "importlib",
                "pytest")


class _Project(Protocol):
    def from_project(self, statement: nodes.NodeNG, name: str) -> bool: ...


class _Interpreter(Protocol):
    failed_modules: set[nodes.Module]
    handling: list[o.Handler]

    def module(self, node: nodes.Module, read: bool = True) -> o.ModuleObj: ...

    def read_names_of(self, module: o.ModuleObj, name: str | None = None) -> None: ...

    def invoke(self, callee: Any, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG,
               preset: dict[str, Any] | None = None) -> Any: ...


class Resolver:
    def __init__(self, project: _Project) -> None:
        self.project = project  # knows what is the project (`Project.from_project`)
        self._library: dict[str, Any] = {}
        # (importing module, name, level) -> its tree: a module's imports run once per trace,
        # but the packages of each (`_run_packages`) are looked up at every import of them
        self._trees: dict[tuple[nodes.Module, str, int | None], nodes.Module | None] = {}

    def imported(self, interp: _Interpreter, node: nodes.Import | nodes.ImportFrom) -> Iterator[tuple[str, Any]]:
        if isinstance(node, nodes.Import):
            for modname, alias in node.names:
                if alias:
                    yield alias, self.module(interp, node, modname, alias)
                else:  # `import a.b.c` runs `a`, `a.b` and `a.b.c`, and binds `a`
                    top = modname.split(".")[0]
                    if modname != top:
                        self.module(interp, node, modname, top)
                    yield top, self.module(interp, node, top, top)
            return
        for name, alias in node.names:
            if name == "*":
                yield from self.star(interp, node)
                continue
            yield alias or name, self.member(interp, node, name, alias or name)

    def may_fail(self, node: nodes.NodeNG) -> bool:
        """Could this import raise ImportError where the code runs? So it could when it names a
        library we do not read: whether it is installed there is not ours to tell."""
        if isinstance(node, nodes.ImportFrom):
            modname = node.modname or ""
            return not node.level and not self._is_project(node, modname.split(".")[0]) and not _known(modname)
        if isinstance(node, nodes.Import):
            return any(not self._is_project(node, alias or modname.split(".")[0]) and not _known(modname)
                       for modname, alias in node.names)
        return False

    def star(self, interp: _Interpreter, node: nodes.ImportFrom) -> Iterator[tuple[str, Any]]:
        """`from m import *`: a project module's names (its `__all__`, else those without a
        leading underscore); a library module the stubs know gives each name it is asked for
        (`objects.STAR_IMPORTS`, read by the interpreter when a name is not otherwise bound)."""
        modname = node.modname or ""
        if not node.level and not self._is_project(node, modname.split(".")[0]):
            if _known(modname):
                yield o.STAR_IMPORTS, modname
            return
        if not node.level:
            self._run_packages(interp, node, modname)
        tree = self._import(node, modname)
        if tree is None:
            return
        module = interp.module(tree)
        interp.read_names_of(module)
        names = module.env.vars.get("__all__")
        if not (isinstance(names, (list, tuple)) and all(isinstance(name, str) for name in names)):
            names = [name for name in module.env.vars if not name.startswith("_")]
        for name in names:
            value = module.env.vars.get(name, _MISSING)
            yield name, value if value is not _MISSING else self.submodule(interp, module, name)

    def module(self, interp: _Interpreter, node: nodes.Import, modname: str, bound_as: str) -> Any:
        if not self._is_project(node, bound_as):
            return stubs.resolve(modname) if _known(modname) else o.Library(modname)
        self._run_packages(interp, node, modname)
        tree = self._import(node, modname)
        return _ran(interp, tree) if tree is not None else o.Library(modname)

    def member(self, interp: _Interpreter, node: nodes.ImportFrom, name: str, bound_as: str) -> Any:
        modname = node.modname or ""
        if not node.level and not self._is_project(node, bound_as):
            if api.surely_missing(modname, name) and o.caught(tuple(interp.handling), "ImportError") is True:
                raise o.ImportFails(name)  # (a version shim: `try: from ... import NewThing except ImportError:`)
            qname = f"{modname}.{name}"
            return stubs.resolve(qname) if _known(modname) else o.Library(qname)
        if not node.level:
            self._run_packages(interp, node, modname)
        tree = self._import(node, modname)
        if tree is None:
            if node.level and _absent(node, modname):
                raise o.ImportFails(modname)
            return o.Library(f"{modname}.{name}")
        module = _ran(interp, tree)
        interp.read_names_of(module, name)
        value = module.env.vars.get(name, _MISSING)
        if value is not _MISSING:
            return value
        starred = self.star_member(module, name)
        if starred is not None:
            return starred
        lazy = self.lazy_export(interp, module, name)
        if lazy is not None:
            return lazy[0]
        if _lacks(module, name):
            raise o.ImportFails(name)  # neither a name the module binds nor a module of its package
        return self.submodule(interp, module, name)

    @staticmethod
    def lazy_export(interp: _Interpreter, module: o.ModuleObj, name: str) -> tuple[Any] | None:
        """What a module's `__getattr__` gives for a name it does not bind (PEP 562: a
        package's lazy exports); None when it has none."""
        getter = module.env.vars.get("__getattr__")
        if not isinstance(getter, o.Closure) or name.startswith("__"):
            return None
        return (interp.invoke(getter, [name], {}, getter.node),)

    def star_member(self, module: o.ModuleObj, name: str) -> Any:
        """What `from <library> import *` at the module's top level bound to `name` (the
        library the stubs know, as the interpreter reads such a name inside the module: the
        last one imported), unless a module of its package has that name; else None.
        A project module that re-exports JAX's API this way (`gpu.TMEM`, `from gpu import
        TMEM`) gives JAX's."""
        starred = module.env.vars.get(o.STAR_IMPORTS)
        if not starred or _has_submodule(module, name):
            return None
        return stubs.resolve(f"{starred[-1]}.{name}")

    def submodule(self, interp: _Interpreter, module: o.ModuleObj, name: str) -> Any:
        try:
            tree = module.node.import_module(name, relative_only=True)
        except (astroid.AstroidError, ImportError, SyntaxError, RecursionError):
            return o.Library(f"{module.node.name}.{name}")
        if getattr(tree, "pallas_stub", False):
            return o.Library(tree.name)
        return _ran(interp, tree)

    def _run_packages(self, interp: _Interpreter, node: nodes.Import | nodes.ImportFrom, modname: str) -> None:
        """Python runs the packages a module is in before it (`a`, then `a.b`, for `a.b.c`):
        their `__init__` may change what the module holds."""
        parts = modname.split(".")
        for cut in range(1, len(parts)):
            tree = self._import(node, ".".join(parts[:cut]))
            if tree is not None and tree.package:
                interp.module(tree, read=False)

    def _is_project(self, node: nodes.NodeNG, name: str) -> bool:
        if isinstance(node, nodes.ImportFrom) and node.level:
            return True
        return bool(self.project.from_project(node, name))

    def _import(self, node: nodes.Import | nodes.ImportFrom, modname: str) -> nodes.Module | None:
        """The tree of the module `node` imports as `modname` (None: not found, not built, or
        one of our stubs), found once per trace (astroid's answer depends on the importing
        module, the name and the level only)."""
        key = (node.root(), modname, getattr(node, "level", None))
        if key not in self._trees:
            self._trees[key] = _tree_of(node, modname)
        return self._trees[key]


    @staticmethod
    def readable(qname: str) -> bool:
        return qname.startswith(_LIBRARY_ROOTS)

    def library_function(self, interp: _Interpreter, qname: str) -> Any:
        """A function of an installed library that a kernel hands its refs to (JAX's own
        `blackwell_ragged_dot_mgpu.do_matmul(..., **refs)`), read from its source, never
        imported; None when it cannot be found."""
        if qname in self._library:
            return self._library[qname]
        found = self._library[qname] = None
        parts = qname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            modname = ".".join(parts[:cut])
            if modname in api.STUBS:
                break  # the stubs say what these are
            tree = _library_module(modname)
            if tree is None:
                continue
            value: Any = interp.module(tree)
            for attribute in parts[cut:]:
                value = value.env.vars.get(attribute) if isinstance(value, o.ModuleObj) else None
            found = value if isinstance(value, (o.Closure, o.ClassObj)) else None
            break
        self._library[qname] = found
        return found


def _tree_of(node: nodes.Import | nodes.ImportFrom, modname: str) -> nodes.Module | None:
    try:
        tree = node.do_import_module(modname)
    except (astroid.AstroidError, ImportError, SyntaxError, RecursionError):
        return None
    if getattr(tree, "pallas_stub", False):
        return None
    return tree


_MISSING: Any = object()
_EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)  # a compiled module is there too
_LIBRARY_ROOTS = stubs.LIBRARY_PACKAGES  # kernel building blocks worth reading
_MAX_LIBRARY_BYTES = 400_000


@functools.lru_cache(maxsize=64)
def _library_module(modname: str) -> nodes.Module | None:
    if not modname.startswith(_LIBRARY_ROOTS):
        return None
    try:
        path = modutils.file_from_modpath(modname.split("."))
    except (ImportError, SyntaxError, AttributeError, astroid.AstroidError):
        return None
    if not path or not path.endswith(".py") or os.path.getsize(path) > _MAX_LIBRARY_BYTES:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        # (without astroid's transforms, as project modules are: `brain._without_transforms`)
        tree = astroid.parse(text, module_name=f"<pallas-lsp library {modname}>", path=path, apply_transforms=False)
    except (OSError, UnicodeDecodeError, SyntaxError, astroid.AstroidError, RecursionError, ValueError):
        return None
    tree.pallas_library = modname  # type: ignore[attr-defined]  # our marker on astroid's tree; read by getattr
    return tree


def _ran(interp: _Interpreter, tree: nodes.Module) -> o.ModuleObj:
    """A project module run (once per trace); its import raises where its top level did."""
    module = interp.module(tree)
    if tree in interp.failed_modules:
        raise o.ImportFails(tree.name)
    return module


def _lacks(module: o.ModuleObj, name: str) -> bool:
    """Does `from module import name` certainly fail: the module binds no such name, cannot make
    one up (a module `__getattr__`, a star import of a library we do not read), and its package
    holds no module of that name?"""
    names = module.env.vars
    if "__getattr__" in names or o.STAR_IMPORTS in names or not module.node.file:
        return False
    return not _has_submodule(module, name)


def _has_submodule(module: o.ModuleObj, name: str) -> bool:
    """Is the module a package with a module (or package) `name`? (Unknown: no.)"""
    file = module.node.file
    if not file or os.path.basename(file) != "__init__.py":
        return False  # (a plain module has no submodules)
    return _module_at(os.path.join(os.path.dirname(os.path.abspath(file)), name))


def _module_at(path: str) -> bool:
    """Is there a module (or package) at `path`, less its suffix?"""
    return (os.path.isfile(path + ".py") or os.path.isdir(path) or os.path.isfile(path + ".pyi")
            or any(os.path.isfile(path + suffix) for suffix in _EXTENSION_SUFFIXES))


def _absent(node: nodes.ImportFrom, modname: str) -> bool:
    """Is the module a relative import names certainly not there: no file, no directory?"""
    file = node.root().file
    if not file:
        return False
    base = os.path.dirname(os.path.abspath(file))
    for _ in range((node.level or 1) - 1):
        base = os.path.dirname(base)
    return not _module_at(os.path.join(base, *[part for part in modname.split(".") if part]))


def _known(modname: str) -> bool:
    return modname.split(".")[0] in _KNOWN_ROOTS
