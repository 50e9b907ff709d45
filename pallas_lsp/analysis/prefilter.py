"""Which rules could find something in a file, decided without astroid.

Most Python files never reach astroid, and the analysis proper is ten times the cost of
parsing. In order:

1. bytes: does the file contain a trigger word of some rule (`tcgen05`, `TMEM`, ...)?
2. words: does it contain one of a rule's identifiers as a whole word?
3. stdlib AST: does it use an identifier where the analysis would see an API call? That is,
   as the name of a called function, a keyword argument of a call, the function given to
   `functools.partial`, a decorator, an import, or an attribute read anywhere (an alias such
   as `mma = plgpu.tcgen05_mma` is called later), and only where it may be the Pallas API. A callee reached through a `jax` module the brain does not model (say
   `gpu_core.SMEM(...)` with `gpu_core` imported from `jax._src.pallas.mosaic_gpu`) infers
   to nothing in the analysis either, so it does not count. Whatever the walk cannot pin
   down (a name bound twice, a relative import above the file's package, a call's result)
   counts.
4. the API at all: can the trace meet an object of the Pallas API (`reaches_api`)? A file
   that only defines the API (JAX's implementation of `plgpu.TMEM` and `tcgen05_mma`, its
   lowering rules) mentions every identifier and calls none of the API: nothing fires there.

Every step only ever drops a rule that could not have fired.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from typing import Any, Callable, Iterable, Iterator, Protocol, TypeVar

from . import api
from .catalog import CHECKS


class Prefiltered(Protocol):
    """What the prefilter reads of a rule: a `rules.base.Rule` or its `catalog.RuleInfo`."""

    @property
    def triggers(self) -> tuple[bytes, ...]: ...

    @property
    def identifiers(self) -> frozenset[str]: ...


R = TypeVar("R", bound=Prefiltered)

# The jax modules whose stubs hold the primitives the rules judge (`jax.lax` and `jax` have
# stubs too, but only higher-order functions that call back into the user's code).
MODELLED = tuple(sorted({qname.rpartition(".")[0] for qname in api.MODELLED if qname.startswith("jax.")}))


def mentions_pallas(text: str | bytes, rules: Iterable[Prefiltered] = CHECKS, path: str | None = None,
                    probed: set[str] | None = None) -> bool:
    """The byte prefilter: does the file contain any word a selected rule starts from, or does
    one of the project modules it imports (a helper may build the union or issue the MMA)?
    `probed` gets every path the answer depends on, there or not (the result cache's
    dependencies of a file the prefilter settles)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    words = _CHECK_TRIGGERS if rules is CHECKS else _triggers(rules)
    if any(word in data for word in words):
        return True
    if path is None:
        return False
    reached = imported_data(data, path, probed=probed)  # once: it reads and follows the imports
    return any(word in reached for word in words)


def _triggers(rules: Iterable[Prefiltered]) -> tuple[bytes, ...]:
    """The rules' trigger words, each once, without those that contain another (a text with
    `collective_axis` has `collective`): any of these is in a text when any of theirs is."""
    words = tuple(dict.fromkeys(word for rule in rules for word in rule.triggers))
    return tuple(word for word in words if not any(other != word and other in word for other in words))


_CHECK_TRIGGERS = _triggers(CHECKS)


def applicable(rules: list[R], text: str, bindings: Callable[[], Bindings], path: str | None = None) -> list[R]:
    """The rules of `rules` that could fire in `text`; `bindings()` (the stdlib tree walked
    once) is asked for only when the words are there. A rule whose words only the file's
    project imports contain is kept: what it judges happens in there.  So is a rule whose
    trigger the file mentions but whose identifiers only its project imports use (a helper
    module makes the `TMEM`, a docstring says "collective")."""
    data = text.encode("utf-8", "surrogatepass")
    own = [rule for rule in rules if not rule.triggers or any(word in data for word in rule.triggers)]
    kept = own
    if own and all(rule.identifiers for rule in own):
        words = set(_identifier_pattern(frozenset().union(*(rule.identifiers for rule in own))).findall(text))
        kept = [rule for rule in own if rule.identifiers & words]
        if kept:
            used = api_uses(bindings(), frozenset().union(*(rule.identifiers for rule in kept)))
            kept = [rule for rule in kept if rule.identifiers & used]
    if kept and not reaches_api(bindings(), path):
        return []
    if path is not None and len(kept) < len(rules):
        reached = imported_data(data, path)
        through_imports = [rule for rule in rules if rule not in kept
                           and (any(w in reached for w in rule.triggers)
                                or rule in own and any(w.encode() in reached for w in rule.identifiers))]
    else:
        through_imports = []
    return kept + through_imports


# -- project imports ---------------------------------------------------------------------------

_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]+(?P<names>[\w., \t()]+)"
    rb"|import[ \t]+(?P<plain>[\w.]+))", re.M)
MAX_IMPORTED_FILES = 24


def imported_data(data: bytes, path: str, depth: int = 2, probed: set[str] | None = None) -> bytes:
    """The bytes of the project modules `data` (the file at `path`) imports, and of theirs,
    `depth` levels down (jax's own modules are not the project's). `probed` gets every path
    looked at (a package's `__init__.py`, each candidate module file), found or not."""
    found: list[bytes] = []
    seen = {os.path.abspath(path)}
    pending = [(data, os.path.abspath(path), depth)]
    while pending and len(seen) <= MAX_IMPORTED_FILES:
        source, where, level = pending.pop()
        for module in _project_files(source, where, probed):
            if module in seen:
                continue
            seen.add(module)
            text = _file_bytes(module)
            found.append(text)
            if level > 1:
                pending.append((text, module, level - 1))
    return b"\n".join(found)


def _imports(data: bytes) -> Iterator[re.Match[bytes]]:
    """`_IMPORT.finditer(data)`, trying only the lines that contain `import` (every match does,
    and starts a line): the regular expression alone would be tried at every byte."""
    at = data.find(b"import")
    while at >= 0:
        match = _IMPORT.match(data, data.rfind(b"\n", 0, at) + 1)
        if match is not None:
            yield match
        end = data.find(b"\n", at)
        if end < 0:
            return
        at = data.find(b"import", end)


def _project_files(data: bytes, path: str, probed: set[str] | None = None) -> Iterator[str]:
    def exists(file: str) -> bool:
        if probed is not None:
            probed.add(os.path.abspath(file))
        return os.path.isfile(file)

    directory = os.path.dirname(path)
    root = directory
    while exists(os.path.join(root, "__init__.py")):
        root = os.path.dirname(root)
    installed = os.path.basename(root) in ("site-packages", "dist-packages")
    own_top = os.path.relpath(path, root).split(os.sep)[0]
    for match in _imports(data):
        if match["plain"]:
            candidates = [(root, match["plain"].decode())]
        else:
            module = match["module"].decode()
            base = root
            if match["dots"]:
                base = directory
                for _ in range(len(match["dots"]) - 1):
                    base = os.path.dirname(base)
            names = [n.strip() for n in re.split(r"[,()\s]+", match["names"].decode()) if n.strip()]
            candidates = [(base, module)] + [(base, f"{module}.{name}" if module else name)
                                             for name in names if name.isidentifier()]
        for base, module in candidates:
            top = module.split(".")[0] if module else ""
            if not module or top == "jax" or (installed and base == root and top != own_top):
                continue  # jax is served by the stubs; an installed package's project is itself
            stem = os.path.join(base, *module.split("."))
            for file in (stem + ".py", os.path.join(stem, "__init__.py")):
                if exists(file):
                    yield os.path.abspath(file)
                    break


@functools.lru_cache(maxsize=256)
def _cached_bytes(path: str, stamp: tuple[int, int]) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read(1 << 20)
    except OSError:
        return b""


def _file_bytes(path: str) -> bytes:
    try:
        status = os.stat(path)
    except OSError:
        return b""
    return _cached_bytes(path, (status.st_size, status.st_mtime_ns))


@functools.lru_cache(maxsize=32)
def _identifier_pattern(names: frozenset[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")


def api_uses(bindings: Bindings, wanted: frozenset[str] | None = None) -> set[str]:
    """Names (of `wanted`, or all) used where the analysis could see a Pallas API call (see
    the module's doc)."""
    used: set[str] = set()
    for call in bindings.calls:
        callee = call.func
        if bindings.is_partial(callee):  # functools.partial(plgpu.kernel, scratch_types=...)
            if not call.args:
                continue
            callee = call.args[0]
        names = {_name_of(callee), *(keyword.arg for keyword in call.keywords if keyword.arg)}
        if wanted is not None:
            names &= wanted
        if names and bindings.may_be_api(callee):
            used |= names
    used.update(_name_of(decorator) for decorator in bindings.decorators if bindings.may_be_api(decorator))
    for attribute in bindings.attributes:  # `mma = plgpu.tcgen05_mma`: an alias is called later
        if (wanted is None or attribute.attr in wanted) and bindings.may_be_api(attribute):
            used.add(attribute.attr)
    for name, paths in bindings.imports.items():  # `from ...mosaic_gpu import RefUnion`, used as a value
        if (wanted is None or name in wanted) and any(path is None or _may_be_api_path(path) for path in paths):
            used.add(name)
    for name, path in bindings.aliased_imports:  # from ...mosaic_gpu import kernel as gpu_kernel
        if path is None or _may_be_api_path(path):
            used.add(name)
    return used


# -- can the trace meet the API at all? ----------------------------------------------------------
#
# Every site a rule judges is recorded when the trace calls an object of the modelled modules
# (`plgpu.TMEM`, `pl.run_scoped`, JAX's kernel building blocks under `jax.experimental.pallas`,
# read when called), or something a project module gave it. The tracer gets such an object in
# three ways only, and nothing else in a file can make one:
#
# - a name an import binds to a `jax` path that is a modelled module, inside one, or above one
#   (`jax`, `jax.experimental`), read as such or through attributes (`plgpu.TMEM`,
#   `jax.experimental.pallas.mosaic_gpu`): every other `jax` module is served empty, and what
#   is read from it is an opaque library value (`gpu_core.SMEM`, `jax.numpy.float32`);
# - an import of a project module, which the tracer runs (its top level may call the API at
#   import time, its functions may return or call it): relative imports, and absolute ones
#   whose top-level name is the analysed file's project (`engine.project_root`, as
#   `Project.from_project` decides); other libraries (numpy, an installed package) are opaque;
# - a star import of either kind.
#
# Values made in the file (its classes, functions, a local `tcgen05_mma`, `x.scratch_types`)
# hold API objects only when one of those put them there. So a file without any of the three
# records no site, whatever its words: JAX's own Pallas implementation, which defines the API
# and its lowering rules and imports its pieces from `jax._src`. What the tracer does not model
# (`__import__`, `importlib`, `sys.modules`, a module's `__dict__`) gives it an unknown value,
# not an API object; `getattr(plgpu, "TMEM")` reads `plgpu` as a value, which counts.


def reaches_api(bindings: Bindings, path: str | None) -> bool:
    """Could the trace of this module meet an object of the Pallas API (see above)? False
    means that no rule can find anything in it."""
    tops = _ProjectTops(path)
    for module, relative in bindings.modules:
        if module is None:
            return True  # a relative import above the top-level package: not known
        if _is_jax(module):
            continue  # served by the brain: what is read from it is judged below
        if relative or tops.holds(module):
            return True
    for module in bindings.star_paths:
        if module is None or (_is_jax(module) and _near_api(module)) or (not _is_jax(module) and tops.holds(module)):
            return True
    near = {name for name, paths in bindings.imports.items()
            if name in bindings.loaded and any(path is None or _is_jax(path) and _near_api(path) for path in paths)}
    if not near:
        return False
    if near & bindings.bare:
        return True  # the module or API object itself is passed, returned, stored
    inner = {id(attribute.value) for attribute in bindings.attributes}
    for attribute in bindings.attributes:
        if id(attribute) in inner:
            continue  # a part of a longer chain: the chain is judged as a whole
        names = []
        root: ast.expr = attribute
        while type(root) is ast.Attribute:
            names.append(root.attr)
            root = root.value
        if type(root) is not ast.Name or root.id not in near:
            continue
        suffix = "".join("." + name for name in reversed(names))
        if any(path is None or _is_jax(path) and _near_api(path + suffix)
               for path in bindings.imports[root.id]):
            return True
    return False


def _near_api(path: str) -> bool:
    """Is the `jax` path a modelled module, inside one, or a package above one?"""
    return any(path == module or path.startswith(module + ".") or module.startswith(path + ".")
               for module in MODELLED)


class _ProjectTops:
    """Which absolute imports bring in a module of the file's project, as the analysis decides
    (`engine.project_root`, `Project.from_project`): in an installed package, the package
    itself; elsewhere, what lies beside the project root; without a path, nothing."""

    def __init__(self, path: str | None) -> None:
        self.root: str | None = None
        self.own = ""
        if path:
            root = os.path.dirname(os.path.abspath(path))
            while os.path.isfile(os.path.join(root, "__init__.py")):
                root = os.path.dirname(root)
            self.root = root
            if os.path.basename(root) in ("site-packages", "dist-packages"):
                self.own = os.path.relpath(os.path.abspath(path), root).split(os.sep)[0]
                self.own = os.path.splitext(self.own)[0]
        self._known: dict[str, bool] = {}

    def holds(self, module: str) -> bool:
        top = module.split(".")[0]
        if not top or self.root is None:
            return False
        if self.own:
            return top == self.own
        known = self._known.get(top)
        if known is None:
            base = os.path.join(self.root, top)
            known = self._known[top] = os.path.isdir(base) or os.path.isfile(base + ".py")
        return known


class Bindings:
    """What one walk of a module's stdlib tree learns: its calls and decorators, the dotted
    paths its imports bind names to, and the names bound in any other way. The analysis asks
    it too, before costlier astroid lookups (`may_be_imported`, `only_from_jax`)."""

    def __init__(self) -> None:
        self.calls: list[ast.Call] = []
        self.attributes: list[ast.Attribute] = []  # read attributes (`plgpu.RefUnion` as a value)
        self.decorators: list[ast.expr] = []
        self.imports: dict[str, set[str | None]] = {}  # name -> paths (None: not known)
        self.aliased_imports: list[tuple[str, str | None]] = []  # (imported name, its path)
        self.rebound: set[str] = set()
        self.loaded: set[str] = set()  # names read
        self.star_import = False  # `from m import *`: any name may be imported
        self.star_paths: list[str | None] = []  # the modules star imports read (None: not known)
        self.modules: list[tuple[str | None, bool]] = []  # each import's module, and whether relative
        self.bare: set[str] = set()  # names read other than as the object of an attribute
        self._rooted: set[int] = set()  # ids of the Name nodes that are an attribute's object

    @classmethod
    def of(cls, tree: ast.AST, package: str = "") -> Bindings:
        """`package` is the module's package, for its relative imports."""
        found = cls()
        stack: list[ast.AST] = [tree]
        push, node_type = stack.append, ast.AST
        while stack:
            node = stack.pop()
            found._note(node, package)
            for name in _child_fields(type(node)):  # type: ignore[arg-type]  # mypy: a class is Hashable
                child = getattr(node, name, None)
                if type(child) is list:
                    for item in child:
                        if isinstance(item, node_type):
                            push(item)
                elif isinstance(child, node_type):
                    push(child)
        return found

    def _note(self, node: Any, package: str) -> None:  # an ast.AST; mypy cannot narrow through `kind`
        kind = type(node)  # exact type tests: this runs on every node of every candidate file
        if kind is ast.Call:
            self.calls.append(node)
        elif kind is ast.Attribute:
            if type(node.ctx) is ast.Load:
                self.attributes.append(node)
            if type(node.value) is ast.Name:  # noted before its child: the walk is top-down
                self._rooted.add(id(node.value))
        elif kind is ast.Name:
            if type(node.ctx) is ast.Load:
                self.loaded.add(node.id)
                if id(node) not in self._rooted:
                    self.bare.add(node.id)
            else:
                self.rebound.add(node.id)
        elif kind is ast.arg:
            self.rebound.add(node.arg)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            self.rebound.add(node.name)
            self.decorators.extend(node.decorator_list)
        elif kind is ast.Import:
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                self.imports.setdefault(bound, set()).add(alias.name if alias.asname else bound)
                self.modules.append((alias.name, False))
        elif kind is ast.ImportFrom:
            base = _absolute(node, package)
            self.modules.append((base, bool(node.level)))
            for alias in node.names:
                path = None if base is None else f"{base}.{alias.name}"
                if alias.name == "*":
                    self.star_import = True
                    self.star_paths.append(base)
                else:
                    self.imports.setdefault(alias.asname or alias.name, set()).add(path)
                if alias.asname and alias.asname != alias.name:
                    self.aliased_imports.append((alias.name, path))
        elif kind is ast.Global or kind is ast.Nonlocal:
            self.rebound.update(node.names)
        elif kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:
                self.rebound.add(node.name)
        elif kind is ast.MatchMapping and node.rest:
            self.rebound.add(node.rest)

    def referenced(self) -> set[str]:
        """Names read anywhere in the module, as a name or as an attribute."""
        return self.loaded | {attribute.attr for attribute in self.attributes}

    def may_be_imported(self, name: str) -> bool:
        """Could an import bind `name`? (Else it is local, a builtin, or undefined.)"""
        return self.star_import or name in self.imports

    def only_from_jax(self, name: str) -> bool:
        """Is `name` bound by imports of `jax` modules and nothing else? The brain serves
        those: they hold no project function to follow."""
        paths = self.imports.get(name)
        if paths is None:
            return False
        return (not self.star_import and bool(paths) and name not in self.rebound
                and all(path is not None and _is_jax(path) for path in paths))

    def paths(self, expr: ast.AST) -> set[str | None] | None:
        """The dotted paths `expr` (`mod.attr.name`) may refer to through imports; None when
        its root is not bound by imports alone."""
        attributes = []
        while type(expr) is ast.Attribute:
            attributes.append(expr.attr)
            expr = expr.value
        if type(expr) is not ast.Name or expr.id in self.rebound or expr.id not in self.imports:
            return None
        suffix = "".join("." + attribute for attribute in reversed(attributes))
        return {None if path is None else path + suffix for path in self.imports[expr.id]}

    def may_be_api(self, expr: ast.AST) -> bool:
        paths = self.paths(expr)
        return paths is None or any(path is None or _may_be_api_path(path) for path in paths)

    def is_partial(self, expr: ast.AST) -> bool:
        """`partial`, `functools.partial`, or `p` of `from functools import partial as p`."""
        if _name_of(expr) == "partial":
            return True
        if type(expr) is not ast.Name or expr.id not in self.imports:
            return False
        return any(path is not None and path.rpartition(".")[2] == "partial" for path in self.imports[expr.id])


@functools.lru_cache(maxsize=None)
def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields that may hold nodes (`ctx` holds only Load/Store/Del)."""
    return tuple(name for name in kind._fields if name != "ctx")


def _may_be_api_path(path: str) -> bool:
    """False only for names inside `jax` modules the brain serves empty."""
    if not _is_jax(path):
        return True
    owner = path.rpartition(".")[0]
    return any(owner == module or owner.startswith(module + ".") for module in MODELLED)


def _is_jax(path: str) -> bool:
    return path == "jax" or path.startswith("jax.")


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 >= len(parts):
        return None  # above the top-level package: not known
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _name_of(node: ast.AST) -> str:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return node.attr
    if type(node) is ast.Starred:
        return _name_of(node.value)
    return ""
