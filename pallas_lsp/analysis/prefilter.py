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

Every step only ever drops a rule that could not have fired.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import time
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
    looked at (a package's `__init__.py`, each candidate module file), found or not.

    The answer is kept for the same file, text and depth while every directory the walk
    looked into and every file it read are unchanged (a directory's modification time
    changes whenever an entry is added, removed or renamed): then the walk would find the
    same. Each analysis of a small tokamax kernel spent 1.5 ms trying 150 candidate paths
    of its imports; checking the 60 stamps takes a tenth of that."""
    key = (os.path.abspath(path), depth, data)
    kept = _imported.get(key)
    if kept is not None and kept.unchanged():
        if probed is not None:
            probed |= kept.probed
        return kept.data
    walk = _Walk()
    found: list[bytes] = []
    seen = {os.path.abspath(path)}
    pending = [(data, os.path.abspath(path), depth)]
    while pending and len(seen) <= MAX_IMPORTED_FILES:
        source, where, level = pending.pop()
        for module in _project_files(source, where, walk):
            if module in seen:
                continue
            seen.add(module)
            text = walk.read(module)
            found.append(text)
            if level > 1:
                pending.append((text, module, level - 1))
    walk.data = b"\n".join(found)
    if probed is not None:
        probed |= walk.probed
    _imported.pop(key, None)
    if walk.cacheable:
        if len(_imported) >= MAX_KEPT_WALKS:
            del _imported[next(iter(_imported))]  # the oldest
        _imported[key] = walk
    return walk.data


MAX_KEPT_WALKS = 64


class _Walk:
    """One walk of a file's project imports: what it found, and the state of what it looked
    at (each directory's modification time, each file's size and time; None: absent)."""

    def __init__(self) -> None:
        self.data = b""
        self.probed: set[str] = set()
        self.directories: dict[str, tuple[int | None, frozenset[str] | None]] = {}
        self.files: dict[str, tuple[int, int] | None] = {}
        self.cacheable = True  # False: a directory could not be listed (see `_listings`)

    def is_file(self, file: str) -> bool:
        """`os.path.isfile(file)`, from one listing of its directory."""
        self.probed.add(os.path.abspath(file))
        directory, name = os.path.split(file)
        listed = self.directories.get(directory)
        if listed is None:
            listed = self.directories[directory] = self._list(directory)
        if listed[1] is None:  # a directory we may not list, or one with symbolic links
            self.cacheable = False
            return os.path.isfile(file)
        return name in listed[1]

    def _list(self, directory: str) -> tuple[int | None, frozenset[str] | None]:
        try:
            stamp = os.stat(directory or os.curdir).st_mtime_ns
        except OSError:
            return None, frozenset()
        listed = _listings.get(directory)
        if listed is None or listed[0] != stamp:
            listed = _list_files(directory, stamp)
        if time.time_ns() - stamp < RACY_NS:
            self.cacheable = False  # changed so lately that a change to come may keep the time
        return stamp, listed[1]

    def read(self, file: str) -> bytes:
        try:
            status = os.stat(file)
        except OSError:
            self.files[file] = None
            return b""
        stamp = self.files[file] = (status.st_size, status.st_mtime_ns)
        if time.time_ns() - status.st_mtime_ns < RACY_NS:
            self.cacheable = False
        return _cached_bytes(file, stamp)

    def unchanged(self) -> bool:
        for directory, (stamp, _) in self.directories.items():
            try:
                now: int | None = os.stat(directory or os.curdir).st_mtime_ns
            except OSError:
                now = None
            if now != stamp:
                return False
        for file, known in self.files.items():
            try:
                status = os.stat(file)
            except OSError:
                if known is not None:
                    return False
                continue
            if known != (status.st_size, status.st_mtime_ns):
                return False
        return True


_imported: dict[tuple[str, int, bytes], _Walk] = {}  # (file, depth, its bytes) -> the last walk

# directory -> (its modification time then, the names of its files; None when it cannot be
# listed or holds symbolic links, whose targets may change while the directory does not):
# each directory is read once while it is unchanged (site-packages, a project's root)
_listings: dict[str, tuple[int, frozenset[str] | None]] = {}
MAX_LISTINGS = 1024
# A directory changed less than this long ago is listed again each time: file systems keep
# times in coarse ticks (milliseconds, two seconds on FAT), and an entry added within the tick
# of the last change would leave the time as it was.
RACY_NS = 2_000_000_000


def _list_files(directory: str, stamp: int) -> tuple[int, frozenset[str] | None]:
    names = []
    try:
        with os.scandir(directory or os.curdir) as entries:
            for entry in entries:
                if entry.is_symlink():
                    return stamp, None
                if entry.is_file(follow_symlinks=False):
                    names.append(entry.name)
    except OSError:
        return stamp, None
    listed = (stamp, frozenset(names))
    if time.time_ns() - stamp >= RACY_NS:
        if len(_listings) >= MAX_LISTINGS:
            _listings.clear()
        _listings[directory] = listed
    return listed


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


def _project_files(data: bytes, path: str, walk: _Walk) -> Iterator[str]:
    exists = walk.is_file

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

    @classmethod
    def of(cls, tree: ast.AST, package: str = "") -> Bindings:
        """`package` is the module's package, for its relative imports."""
        found = cls()
        stack: list[ast.AST] = [tree]
        push, node_type, noted, fields = stack.append, ast.AST, _NOTED, _FIELDS
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind in noted:  # the others (constants, operators, ...) bind and call nothing
                found._note(node, package)
            names = fields.get(kind)
            if names is None:
                names = _child_fields(kind)
            for name in names:
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
        elif kind is ast.Name:
            if type(node.ctx) is ast.Load:
                self.loaded.add(node.id)
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
        elif kind is ast.ImportFrom:
            base = _absolute(node, package)
            for alias in node.names:
                path = None if base is None else f"{base}.{alias.name}"
                if alias.name == "*":
                    self.star_import = True
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


def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields that may hold nodes (`ctx` holds only Load/Store/Del)."""
    found = _FIELDS[kind] = tuple(name for name in kind._fields if name != "ctx")
    return found


_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
# The node kinds `Bindings._note` reads (exact types: the parser makes no subclasses).
_NOTED = frozenset({
    ast.Call, ast.Attribute, ast.Name, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
    ast.ImportFrom, ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
})


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
