"""An astroid brain for jax: the Pallas API stand-ins of `api.STUBS`, and nothing else of jax.

astroid normally finds `jax` on `sys.path` and parses it: several hundred files, slow, and
pointless, since the behaviour we model lives in lowering code no inference could follow. Where
jax is not installed the import simply fails. Either way we want the same answer, so every
`jax.*` module is served from here: the modelled ones from their stub source, all others as
empty modules (names in them infer to nothing, and the analysis stays silent about them).

astroid offers failed-import hooks but no hook that runs *before* the file-system search, so
`install` wraps `AstroidManager.ast_from_module_name` for the `jax` namespace only.

An editor knows texts that are not on disk yet: `overlaid({path: text})` makes astroid build
those files from the given text (`AstroidBuilder.file_build` is wrapped for that).

The analysed file is parsed once: `build` hands astroid the stdlib tree the prefilter read,
which `Rebuilder` turns into astroid's tree. Every module astroid reads from a file is built
without astroid's transforms (`_without_transforms`), as the analysed file is: the trace runs
their code itself. For the same reason astroid records no attribute assignment of a module it
builds (`_unrecorded_attributes`).

While `memoized_lookups()` is active, `node.lookup(name)` answers are remembered: rules and
astroid's inference ask the same names of the same nodes again and again.

Building a huge module can take longer than the analysis budget, so `TreeRebuilder.visit` is
wrapped too: under `deadline(...)` it stops the build once the budget is spent.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import copy
import functools
import inspect
import os
import threading
import warnings
from typing import Any, Callable, Iterator, Mapping, TypeGuard, TypeVar

from astroid import nodes, raw_building
from astroid.builder import AstroidBuilder
from astroid.context import _invalidate_cache as _forget_inference_contexts
from astroid.exceptions import AstroidSyntaxError
from astroid.inference_tip import clear_inference_tip_cache
from astroid.interpreter.objectmodel import ObjectModel
from astroid.manager import AstroidManager
from astroid.nodes._base_nodes import LookupMixIn
from astroid.nodes.scoped_nodes import ClassDef, LocalsDictNodeNG
from astroid.rebuilder import TreeRebuilder

from . import api
from .project import BudgetExceeded, Cancelled, budget_clock

_STUB_DIR = "<pallas-lsp stubs>"
_lock = threading.Lock()
_installed = False


def is_jax_module(modname: str | None) -> TypeGuard[str]:
    return modname is not None and (modname == "jax" or modname.startswith("jax."))


def stub_module(modname: str) -> nodes.Module:
    """The stand-in for `modname` (a `jax.*` name), built once and cached by astroid."""
    manager = AstroidManager()
    cached = manager.astroid_cache.get(modname)
    if cached is not None and getattr(cached, "pallas_stub", False):
        return cached
    source = api.STUBS.get(modname, "")
    filename = "__init__.py" if modname in api.PACKAGES else modname.rsplit(".", 1)[-1] + ".py"
    path = f"{_STUB_DIR}/{modname.replace('.', '/')}/{filename}"
    module = AstroidBuilder(manager).string_build(source, modname, path)
    module.pallas_stub = True  # type: ignore[attr-defined]  # our marker on astroid's tree; read by getattr
    manager.astroid_cache[modname] = module
    return module


_overlays: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("pallas_overlays", default={})


@contextlib.contextmanager
def overlaid(texts: Mapping[str, str] | None) -> Iterator[None]:
    """While active, files named in `texts` are read from there instead of the disk."""
    token = _overlays.set({os.path.abspath(path): text for path, text in (texts or {}).items()})
    try:
        yield
    finally:
        _overlays.reset(token)


def overlay_text(path: str) -> str | None:
    overlays = _overlays.get()
    return overlays.get(os.path.abspath(path)) if overlays else None


_deadline: contextvars.ContextVar[tuple[float, Callable[[], bool]] | None] = contextvars.ContextVar(
    "pallas_deadline", default=None)
_visits = 0


@contextlib.contextmanager
def deadline(until: float, cancelled: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """While active, building astroid trees raises BudgetExceeded past `until` (a
    `budget_clock()` value) and Cancelled once `cancelled()` is true."""
    token = _deadline.set((until, cancelled))
    try:
        yield
    finally:
        _deadline.reset(token)


def _check_deadline() -> None:
    limit = _deadline.get()
    if limit is None:
        return
    if limit[1]():
        raise Cancelled()
    if budget_clock() > limit[0]:
        raise BudgetExceeded()


_Visit = Callable[[TreeRebuilder, ast.AST, nodes.NodeNG], nodes.NodeNG]


def _bounded_build(original: _Visit) -> _Visit:
    def visit(self: TreeRebuilder, node: ast.AST, parent: nodes.NodeNG) -> nodes.NodeNG:
        global _visits
        _visits += 1
        if not _visits & 1023:  # the clock is read once per 1024 nodes
            _check_deadline()
        return original(self, node, parent)

    return visit


_Found = tuple[LocalsDictNodeNG, list[nodes.NodeNG]]  # what `LookupMixIn.lookup` answers
_Lookup = Callable[[LookupMixIn, str], _Found]
_lookups: contextvars.ContextVar[dict[tuple[LookupMixIn, str], _Found] | None] = contextvars.ContextVar(
    "pallas_lookups", default=None)


@contextlib.contextmanager
def memoized_lookups() -> Iterator[None]:
    """For one analysis: its trees do not change, so neither do the answers of `lookup`
    (2.6 asks per name and node on JAX's kernels; astroid filters every binding each time)."""
    token = _lookups.set({})
    try:
        yield
    finally:
        _lookups.reset(token)


def _memoized_lookup(original: _Lookup) -> _Lookup:
    uncached: _Lookup = getattr(original, "__wrapped__", original)  # past astroid's own 128-entry cache

    def lookup(self: LookupMixIn, name: str) -> _Found:
        memo = _lookups.get()
        if memo is None:
            return original(self, name)
        found = memo.get((self, name))
        if found is None:
            found = memo[(self, name)] = uncached(self, name)
        return found[0], list(found[1])  # a copy: callers may change their list

    return lookup


def forget_inferences() -> None:
    """Let go of the analysed module once an analysis is over. astroid's inference caches are
    bounded, not per module, and each class's object model (`ClassDef.special_attributes`)
    remembers the last node it served: both would keep the module's whole tree alive, and
    the collector would then find it in an older generation (a pause of 0.4 s every dozen
    analyses of a large file, instead of 30 ms after each)."""
    _forget_inference_contexts()
    clear_inference_tip_cache()
    for cache in (LookupMixIn.lookup, ClassDef._metaclass_lookup_attribute, ObjectModel.attributes):
        if not hasattr(cache, "cache_clear"):
            cache = getattr(cache, "__wrapped__", cache)  # `lookup` is wrapped by `memoized_lookups`
        if hasattr(cache, "cache_clear"):
            cache.cache_clear()
    for model in _object_models():
        model._instance = None
        if "context" in vars(model):
            model.context = None  # type: ignore[attr-defined]  # set by some models only (ClassModel)


def forget_module_lookups(manager: AstroidManager) -> None:
    """Forget where astroid found modules: a package that gained an `__init__.py` (or lost
    one) is looked for again. astroid keeps those answers for the process (`clear_cache`
    drops them with every tree); these are the same caches without the trees."""
    from astroid import modutils
    from astroid.interpreter._import import spec, util

    caches = [getattr(modutils, name, None) for name in ("_cache_normalize_path_", "_has_init", "cached_os_path_isfile")]
    caches += [getattr(util, "is_namespace", None), getattr(spec, "_find_spec", None),
               getattr(spec, "_is_setuptools_namespace", None)]
    caches += [getattr(finder, "find_module", None) for finder in getattr(spec, "_SPEC_FINDERS", ())]
    for cache in caches:
        clear = getattr(cache, "cache_clear", None)
        if clear is not None:
            clear()
    getattr(manager, "_mod_file_cache", {}).clear()


@functools.cache  # astroid's classes are all defined once it is imported
def _object_models() -> tuple[ObjectModel, ...]:
    """The object models astroid's node and proxy classes hold as `special_attributes`."""
    from astroid import bases, objects  # noqa: F401 - their classes hold models too

    found: dict[int, ObjectModel] = {}
    pending = [nodes.NodeNG, bases.Proxy]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        model = vars(cls).get("special_attributes")
        if isinstance(model, ObjectModel):
            found[id(model)] = model
    return tuple(found.values())


def _wrap(owner: type, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    original = getattr(owner, name)
    if getattr(original, "pallas_guard", False):
        original = original.__wrapped__
    wrapper = functools.wraps(original)(make(original))
    wrapper.pallas_guard = True  # type: ignore[attr-defined]  # our marker on the wrapper; read by getattr
    setattr(owner, name, wrapper)


_requested: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("pallas_requested", default=None)


@contextlib.contextmanager
def requested_modules() -> Iterator[set[str]]:
    """While active, the names of the modules astroid is asked for (cached or not) are
    added to the set this yields: what an analysis read."""
    names: set[str] = set()
    token = _requested.set(names)
    try:
        yield names
    finally:
        _requested.reset(token)


# (sets of the module top levels being kept now, `trace.world`: the modules each asked for)
_recording: contextvars.ContextVar[tuple[set[str], ...]] = contextvars.ContextVar("pallas_recording", default=())


def record_requests() -> set[str]:
    """Start collecting, into the set returned, the names of the modules astroid is asked for
    (as `requested_modules` does), until `stop_recording`."""
    names: set[str] = set()
    _recording.set((*_recording.get(), names))
    return names


def stop_recording(names: set[str]) -> None:
    _recording.set(tuple(found for found in _recording.get() if found is not names))


def requested(names: set[str]) -> None:
    """What a kept module run asked astroid for, as if asked again (what the analysis read)."""
    found = _requested.get()
    if found is not None:
        found |= names
    for recording in _recording.get():
        recording |= names


_ModuleFromName = Callable[[AstroidManager, str | None, str | None, bool], nodes.Module]


def _stub_imports(original: _ModuleFromName) -> _ModuleFromName:
    def ast_from_module_name(self: AstroidManager, modname: str | None, context_file: str | None = None,
                             use_cache: bool = True) -> nodes.Module:
        if is_jax_module(modname):
            return stub_module(modname)
        module = original(self, modname, context_file, use_cache)
        requested = _requested.get()
        if requested is not None:
            requested.add(module.name)
        for recording in _recording.get():
            recording.add(module.name)
        return module

    return ast_from_module_name


def _cached_namespace(original: Callable[[AstroidManager, str, Any], nodes.Module]) -> Callable[..., nodes.Module]:
    """astroid builds a namespace package (a directory without `__init__.py`) anew at every
    import of it, where it caches every module it reads from a file: each analysis then saw a
    different package node, and the trace's kept runs (keyed by the modules they saw) never
    matched again. It is cached like the others (`engine` drops it when an `__init__.py`
    appears in one of its directories)."""
    def build(self: AstroidManager, modname: str, path: Any) -> nodes.Module:
        module = original(self, modname, path)
        self.astroid_cache[modname] = module
        return module

    return build


_FileBuild = Callable[[AstroidBuilder, str, str | None], nodes.Module]


def _without_transforms(builder: AstroidBuilder) -> None:
    """Build a module astroid reads from a file (a project module the trace imports, a stdlib
    module astroid's own lookups reach) without astroid's transforms, as the analysed file is.
    The trace runs a module's code itself (its classes, dataclasses and enums by its own
    rules) and reads none of what the transforms add; their predicates, though, infer every
    class's bases and decorators, and so build the modules those come from: a tokamax kernel
    whose project module is decorated with `pydantic.dataclasses.dataclass` had astroid build
    pydantic, typing, enum, re and 40 more in its first analysis (2.2 s of 2.3 s)."""
    if hasattr(builder, "_apply_transforms"):  # astroid 4's flag; another astroid only builds slower
        builder._apply_transforms = False


def _unrecorded_attributes(original: Callable[..., None]) -> Callable[..., None]:
    """astroid's last step in building a module records each `target.name = value` in it on
    what it infers `target` to be (the instance attributes of a class or function, the locals
    of a class or module), and that inference builds the modules those names come from: a
    third of the first analysis of a file of tokamax's ops (2.6 -> 1.6 s). The trace runs the
    assignments itself (a module's global set from outside, `mod.X = v`, included) and reads
    none of what astroid records; the rules read the names a scope's own statements bind (a
    `def`, an import, an assignment to a name), which those records never are."""
    def delayed_assattr(self: AstroidBuilder, node: nodes.AssignAttr) -> None:
        return None

    return delayed_assattr


def _overlay_files(original: _FileBuild) -> _FileBuild:
    def file_build(self: AstroidBuilder, path: str, modname: str | None = None) -> nodes.Module:
        _without_transforms(self)
        text = overlay_text(path) if path else None
        stamp = ("overlay", hash(text)) if text is not None else _file_stamp(path)
        failed = _unbuildable.get((path, modname))
        if failed is not None and failed[0] == stamp and stamp is not None:
            raise failed[1].with_traceback(None)  # astroid would parse it again, and fail again
        try:
            if text is not None:
                return self.string_build(text, modname or os.path.splitext(os.path.basename(path))[0], path)
            return original(self, path, modname)
        except AstroidSyntaxError as error:
            if len(_unbuildable) >= 256:
                _unbuildable.clear()
            _unbuildable[(path, modname)] = (stamp, error)
            raise

    return file_build


class _NoWarningsChange:
    """What `raw_building` sees of `warnings` during the bootstrap: the filter `bootstrap`
    sets once (warnings ignored) holds for the whole of it."""

    catch_warnings = contextlib.nullcontext

    @staticmethod
    def simplefilter(*args: object, **kwargs: object) -> None:
        pass


def _lighter_bootstrap(original: Callable[[AstroidManager], None]) -> Callable[[AstroidManager], None]:
    """While astroid builds its `builtins` module from the living one (once per process, about
    0.2 s), every method of a class is given its own copy of a class node for its `__class__`
    (`method_descriptor`, `builtin_function_or_method`: some 3,000 of them, 40 % of the
    bootstrap). The methods of one class now share one: the same node (same name, bases and
    parent), where only its identity differed. Nothing of ours asks for a builtin's `__class__`.

    astroid also reads each of the 4,000 attributes of the living builtins inside its own
    `warnings.catch_warnings()` with `simplefilter("ignore")` (10 to 15 ms of a process's
    start); the bootstrap now runs inside one such block, and those of `raw_building` change
    nothing: the same attributes are read with warnings ignored, and the filters are the same
    afterwards."""
    def bootstrap(self: AstroidManager) -> None:
        add = raw_building._add_dunder_class
        shared: dict[tuple[int, type], nodes.NodeNG] = {}
        parents: list[nodes.NodeNG] = []  # held, so that no id is reused while the dict lives

        def add_shared(func: Any, parent: nodes.NodeNG, member: Any) -> None:
            key = (id(parent), member.__class__)  # what the class node is built from
            known = shared.get(key)
            if known is not None:
                func.instance_attrs["__class__"] = [known]
                return
            add(func, parent, member)
            if func.instance_attrs.get("__class__"):
                shared[key] = func.instance_attrs["__class__"][0]
                parents.append(parent)

        raw_building._add_dunder_class = add_shared
        raw_building.warnings = _NoWarningsChange  # type: ignore[assignment]  # what it calls of the module
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                original(self)
        finally:
            raw_building._add_dunder_class = add
            raw_building.warnings = warnings

    return bootstrap


# Files astroid could not build (a syntax error: newer syntax than this Python, or a file being
# edited), with the state of their source then: an import of them fails at once while that
# state lasts (each analysis of a tokamax kernel on Python 3.11 parsed five such modules again).
_unbuildable: dict[tuple[str, str | None], tuple[object, AstroidSyntaxError]] = {}


def _file_stamp(path: str) -> object:
    try:
        status = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    return (status.st_size, status.st_mtime_ns)


def build(manager: AstroidManager, text: str, modname: str, path: str | None, tree: ast.Module) -> nodes.Module:
    """`AstroidBuilder.string_build` (without astroid's transforms) from an already parsed tree."""
    return _Preparsed(tree, manager, apply_transforms=False).string_build(text, modname, path)


class Rebuilder(TreeRebuilder):
    """astroid's rebuilder of the analysed file's tree, without the `position` of each
    definition (where its keyword and name are: astroid tokenizes every `def` and `class`
    header again for it, about a tenth of the rebuild; pylint reads it for message ranges,
    and nothing of ours does), and with the commonest nodes (a name or an attribute read, a
    constant, a call and its keywords: two thirds of a kernel's nodes) made without their
    constructors' chain of keyword calls: their attributes set in the order astroid's
    constructors set them. The first build checks that astroid makes the same nodes of a
    sample (`_fast_nodes_agree`); where it does not (another astroid), astroid makes them."""

    _fast: bool | None = None  # None: not checked yet

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if Rebuilder._fast is None:
            Rebuilder._fast = False  # (the check builds with this class too)
            Rebuilder._fast = _fast_nodes_agree()

    def _get_position_info(self, node: Any, parent: nodes.NodeNG) -> None:
        return None

    def _get_doc(self, node: Any) -> tuple[Any, ast.Constant | None]:
        """astroid's, which takes a docstring out of the stdlib node's body by giving the node
        a new body. An editor's session keeps the stdlib tree for the next parse of the file
        (`reparse`): the node is left as parsed, and a copy of it goes without its docstring."""
        first = node.body[0] if node.body else None
        if type(first) is not ast.Expr or type(first.value) is not ast.Constant:
            return node, None
        return super()._get_doc(copy.copy(node))

    def visit(self, node: Any, parent: nodes.NodeNG) -> Any:
        """`TreeRebuilder.visit` with the budget's count (`_bounded_build`) in the same frame:
        one call per node fewer. The first node of a class goes through astroid's, which
        finds its visitor and keeps it."""
        visitor = self._visit_meths.get(node.__class__) if node is not None else None
        if visitor is None:
            return super().visit(node, parent)
        global _visits
        _visits += 1
        if not _visits & 1023:  # as `_bounded_build`
            _check_deadline()
        return visitor(node, parent)

    def visit_name(self, node: ast.Name, parent: nodes.NodeNG) -> Any:
        if not self._fast or type(node.ctx) is not ast.Load:
            return super().visit_name(node, parent)
        made = _new(nodes.Name)
        made.name = node.id
        return _placed(made, node, parent)

    def visit_constant(self, node: ast.Constant, parent: nodes.NodeNG) -> nodes.Const:
        if not self._fast:
            return super().visit_constant(node, parent)
        made = _new(nodes.Const)
        made.value, made.kind = node.value, node.kind
        return _placed(made, node, parent)

    def visit_attribute(self, node: ast.Attribute, parent: nodes.NodeNG) -> Any:
        if not self._fast or type(node.ctx) is not ast.Load:
            return super().visit_attribute(node, parent)
        made = _new(nodes.Attribute)
        made.attrname = node.attr
        _placed(made, node, parent)  # (placed before its child is built: a walrus in it looks up its scope)
        made.expr = self.visit(node.value, made)
        return made

    def visit_call(self, node: ast.Call, parent: nodes.NodeNG) -> nodes.Call:
        if not self._fast:
            return super().visit_call(node, parent)
        made = _placed(_new(nodes.Call), node, parent)
        visit = self.visit
        made.func = visit(node.func, made)
        made.args = [visit(child, made) for child in node.args]
        made.keywords = [visit(child, made) for child in node.keywords]
        return made

    def visit_keyword(self, node: ast.keyword, parent: nodes.NodeNG) -> nodes.Keyword:
        if not self._fast:
            return super().visit_keyword(node, parent)
        made = _new(nodes.Keyword)
        made.arg = node.arg
        _placed(made, node, parent)  # (as in `visit_attribute`)
        made.value = self.visit(node.value, made)
        return made


_N = TypeVar("_N", bound=nodes.NodeNG)


def _placed(made: _N, node: Any, parent: nodes.NodeNG) -> _N:
    """`made` (its own attributes set) given what `NodeNG.__init__` sets, in its order: the
    place of the stdlib `node`, and `parent`. Its children are the caller's to add. Set one by
    one, as the constructor does: asking for `made.__dict__` would give each node a dict object
    of its own in place of the values Python keeps inline (a third more objects for the
    collector to walk, and a slower build)."""
    made.lineno = node.lineno
    made.col_offset = node.col_offset
    made.parent = parent
    made.end_lineno = node.end_lineno
    made.end_col_offset = node.end_col_offset
    made.position = None
    return made


_new = object.__new__
_SAMPLE = "f(a.b, 1, *c, k='s', **d)\nx = u'u' + b'b' + None + ... + 1.5 + 2j + g()(h).i\n"


def _fast_nodes_agree() -> bool:
    """Does `Rebuilder` make the nodes of a sample that astroid's own rebuilder makes?"""
    tree = ast.parse(_SAMPLE)
    theirs = TreeRebuilder(AstroidManager()).visit_module(tree, "sample", "<sample>", False)
    ours = Rebuilder(AstroidManager()).visit_module(ast.parse(_SAMPLE), "sample", "<sample>", False)
    return _shape(theirs) == _shape(ours)


def _shape(node: nodes.NodeNG) -> list[Any]:
    """A node and those below it: their types, attributes (children by shape) and order."""
    found: list[Any] = []
    pending = [node]
    while pending:
        current = pending.pop()
        state = [(key, _described(value)) for key, value in vars(current).items() if key != "parent"]
        found.append((type(current).__name__, type(current.parent).__name__, state))
        pending.extend(reversed(list(current.get_children())))
    return found


def _described(value: Any) -> Any:
    if isinstance(value, nodes.NodeNG):
        return type(value).__name__
    if isinstance(value, dict):
        return {key: _described(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_described(item) for item in value]
    return value


class _Preparsed(AstroidBuilder):
    """astroid parses inside `_data_build`; this builder rebuilds the tree it was given instead.
    The rest mirrors astroid 4's `_data_build` (module file and package flag)."""

    def __init__(self, tree: ast.Module, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tree = tree

    def _data_build(self, data: str, modname: str, path: str | None,
                    is_stub: bool | None = None) -> tuple[nodes.Module, TreeRebuilder]:
        rebuilder = Rebuilder(self._manager, data, **stub_flag(path, is_stub))
        return module_of_tree(rebuilder, self._tree, modname, path), rebuilder

    def _post_build(self, module: nodes.Module, rebuilder: TreeRebuilder, encoding: str) -> nodes.Module:
        try:
            return super()._post_build(module, rebuilder, encoding)
        finally:
            release(rebuilder)


def release(rebuilder: TreeRebuilder) -> None:
    """Let a rebuilder go as soon as its module is built. astroid's keeps its bound visit
    methods in itself, a reference cycle, so it and what it holds (the text; the incremental
    build's map of the stdlib tree's statements, and through it most of that tree) waited for
    the cyclic collector."""
    meths = getattr(rebuilder, "_visit_meths", None)
    if isinstance(meths, dict):
        meths.clear()


# astroid 4.4 builds `.pyi` files as stubs: its `_data_build` takes `is_stub` (None: told from
# the path) and hands it to the rebuilder, which older astroid 4 releases do not take.
_REBUILDER_TAKES_STUB = "is_stub" in inspect.signature(TreeRebuilder.__init__).parameters


def stub_flag(path: str | None, is_stub: bool | None) -> dict[str, bool]:
    """The rebuilder's `is_stub` keyword as astroid's `_data_build` gives it, where it takes one."""
    if not _REBUILDER_TAKES_STUB:
        return {}
    return {"is_stub": is_stub if is_stub is not None else path is not None and path.endswith(".pyi")}


def module_of_tree(rebuilder: TreeRebuilder, tree: ast.Module, modname: str, path: str | None) -> nodes.Module:
    """The astroid module `rebuilder` makes of `tree`, with astroid's module file and package
    flag."""
    node_file = os.path.abspath(path) if path is not None else "<?>"
    package = path is not None and os.path.splitext(os.path.basename(path))[0] == "__init__"
    if modname.endswith(".__init__"):
        modname, package = modname[: -len(".__init__")], True
    return rebuilder.visit_module(tree, modname, node_file, package)


def install() -> None:
    """Register the brain with astroid's manager (idempotent; safe after `clear_cache`)."""
    global _installed
    with _lock:
        wrapped = (AstroidManager.ast_from_module_name, LookupMixIn.lookup)
        if _installed and all(getattr(method, "pallas_guard", False) for method in wrapped):
            return
        _wrap(AstroidManager, "ast_from_module_name", _stub_imports)
        _wrap(AstroidBuilder, "file_build", _overlay_files)
        _wrap(AstroidBuilder, "delayed_assattr", _unrecorded_attributes)
        _wrap(TreeRebuilder, "visit", _bounded_build)
        _wrap(LookupMixIn, "lookup", _memoized_lookup)
        _wrap(AstroidManager, "bootstrap", _lighter_bootstrap)
        _wrap(AstroidManager, "_build_namespace_module", _cached_namespace)
        _installed = True
