"""Which rules could find something in a file, decided without astroid.

Most Python files never reach astroid, and the analysis proper is ten times the cost of
parsing. In order:

1. bytes: does the file contain a trigger word of some rule (`tcgen05`, `TMEM`, ...), or do
   the project modules it imports (not read when neither the file nor they name `pallas`)?
2. words: does it contain one of a rule's identifiers as a whole word?
3. the text's import statements: can the trace meet an object of the Pallas API at all (step 5),
   told from the imports found in the text and the names they bind, without parsing the
   file (`cannot_reach_api_from_text`)? Half of the jax package's files with words settle here;
   a name read in a comment or a plain string literal is no use of it (`_Literals`).
   Where the text cannot tell, the walk of step 4 answers (step 5): the rules kept need it
   anyway. When every rule asked about has identifiers (the checks do), a text that cannot
   meet the API drops them all whatever steps 1 and 2 say: it is asked first, and the words
   of those files are not searched. (A third verdict, from the tree's import statements and
   the statements around each occurrence, was asked before the walk until the twenty-third
   session: it told nothing the walk did not, on 845 files with words, and cost about what
   the walk costs.)
4. stdlib AST: does it use an identifier where the analysis would see an API call? That is,
   as the name of a called function, a keyword argument of a call, the function given to
   `functools.partial`, a decorator, an import, or an attribute read anywhere (an alias such
   as `mma = plgpu.tcgen05_mma` is called later), and only where it may be the Pallas API. A callee reached through a `jax` module the brain does not model (say
   `gpu_core.SMEM(...)` with `gpu_core` imported from `jax._src.pallas.mosaic_gpu`) infers
   to nothing in the analysis either, so it does not count. Whatever the walk cannot pin
   down (a name bound twice, a relative import above the file's package, a call's result)
   counts.
5. the API at all: can the trace meet an object of the Pallas API (`reaches_api`)? A file
   that only defines the API (JAX's implementation of `plgpu.TMEM` and `tcgen05_mma`, its
   lowering rules) mentions every identifier and calls none of the API: nothing fires there.
   Nor in a file whose project imports, followed to any depth, never mention jax (the trace
   runs the project's modules, and every object of the API comes from jax): most files of a
   project that does not use JAX (`_ProjectTops.reach_jax`). Nor where neither the text nor
   those modules name `pallas` (every module that holds the API is `jax...pallas...`): the
   file's own `jax`, however it is handed around, leads to none (`_pallas_named_nowhere`:
   flax's modules).

Every step only ever drops a rule that could not have fired.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import contextvars
import functools
import operator
import os
import re
import stat
import time
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Protocol, TypeAlias, TypeVar

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
# Where every object a finding is about comes from (see "can the trace meet the API at all?")
API_SOURCES = (api.MOSAIC_GPU, api.PALLAS + ".ops.gpu")
# A file that names JAX's GPU kernel building blocks (`jax.experimental.pallas.ops.gpu`, whose
# source the trace reads when the file calls into it: `trace.stubs.LIBRARY_PACKAGES`) may reach
# every API call there: `blackwell_ragged_dot_mgpu.do_matmul(**refs)` issues the `tcgen05_mma`
# that judges the file's barrier, a file that never names `tcgen05` itself. Such a file keeps
# every rule through the word steps (1, 2, 4); whether it reaches the API at all (step 5) is
# still asked. The package is named `ops.gpu` in a dotted path or an attribute chain
# (`from jax.experimental.pallas.ops.gpu import ...`, `pl.ops.gpu`), or imported as `gpu` from
# `...ops` (`from jax.experimental.pallas.ops import gpu`).
_LIBRARY = re.compile(rb"ops(?:[ \t]*\.[ \t]*gpu|[ \t]+import[\s(\\]+[\w\s,\\]*?(?<![\w])gpu)(?![\w])")


def names_library(data: bytes) -> bool:
    """Does the text name JAX's GPU kernel building blocks, which the trace reads (see
    `_LIBRARY`)? (The word `ops` must start a word; the search starts from the literal `ops`,
    a pattern that begins with a look-behind is tried at every byte.)"""
    for match in _LIBRARY.finditer(data):
        at = match.start()
        if not at or (data[at - 1] not in _WORD_BYTES and data[at - 1] < 0x80):
            return True
    return False


def mentions_pallas(text: str | bytes, rules: Iterable[Prefiltered] = CHECKS, path: str | None = None,
                    probed: set[str] | None = None) -> bool:
    """The byte prefilter: does the file contain any word a selected rule starts from, or does
    one of the project modules it imports (a helper may build the union or issue the MMA)?
    `probed` gets every path the answer depends on, there or not (the result cache's
    dependencies of a file the prefilter settles)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    words = _CHECK_TRIGGERS if rules is CHECKS else _triggers(rules)
    if any(word in data for word in words) or (words and names_library(data)):
        return True
    if path is None:
        return False
    if not _imports_may_meet_the_api(data, path, probed):
        return False  # (before the walk of its imports)
    reached = imported_data(data, path, probed=probed)  # once: it reads and follows the imports
    return any(word in reached for word in words) or (bool(words) and names_library(reached))


def _imports_may_meet_the_api(data: bytes, path: str, probed: set[str] | None) -> bool:
    """Every object of the API comes from a module of jax named `...pallas...`: can the trace of
    a file whose text does not say `jax`, or `pallas`, meet one through the project modules
    it imports (`_ProjectTops.reach_jax`, `name_pallas`), or an import of its own (a relative
    one inside `jax.experimental.pallas`)? True: it may, or that is not known."""
    says_jax, says_pallas = b"jax" in data, b"pallas" in data
    if says_jax and says_pallas:
        return True
    tops = _ProjectTops(path)
    # (jax's own module: `imported_data` follows none of its imports, no walk to spare)
    says_pallas = says_pallas or tops.own == "jax"
    if says_jax and says_pallas:
        return True
    imported = _imported_modules(data, package_of(path, module_name(path)), parse=False)
    if imported is None:
        return True
    project = []
    for module, relative in imported:
        if module is None:
            return True
        if _is_jax(module):
            says_pallas = says_pallas or "pallas" in module
            continue  # (served by the brain, never run: jax's own modules import each other)
        if relative or tops.holds(module, probed):
            project.append(module)
    if not project:
        return says_jax and says_pallas
    return (says_jax or tops.reach_jax(project, probed, _mentions(data))) and (
        says_pallas or tops.name_pallas(project, probed))


def _triggers(rules: Iterable[Prefiltered]) -> tuple[bytes, ...]:
    """The rules' trigger words, each once, without those that contain another (a text with
    `collective_axis` has `collective`): any of these is in a text when any of theirs is."""
    words = tuple(dict.fromkeys(word for rule in rules for word in rule.triggers))
    return tuple(word for word in words if not any(other != word and other in word for other in words))


_CHECK_TRIGGERS = _triggers(CHECKS)


def _present(data: bytes, rules: Iterable[Prefiltered]) -> set[bytes]:
    """The rules' trigger words that `data` contains, each looked for once, the shorter first:
    a word that holds one found absent is absent too (`collective_axis`, `collective`)."""
    absent: list[bytes] = []
    present = set()
    for word in sorted({word for rule in rules for word in rule.triggers}, key=len):
        if any(short in word for short in absent) or word not in data:
            absent.append(word)
        else:
            present.add(word)
    return present


def applicable(rules: list[R], text: str, bindings: Callable[[], Bindings], path: str | None = None,
               package: str = "", probed: set[str] | None = None, walk_first: bool = False) -> list[R]:
    """The rules of `rules` that could fire in `text`; `bindings()` (the stdlib tree, of the
    module in `package`, walked once) is asked for only when the words are there. A rule
    whose words only the file's project imports contain is kept: what it judges happens in
    there.  So is a rule whose trigger the file mentions but whose identifiers only its
    project imports use (a helper module makes the `TMEM`, a docstring says "collective").
    Either way, none is kept in a file whose trace cannot meet the API: told from the text
    when it can be, else from the walk, which the rules kept need anyway (`walk_first`: the
    walk first, where it is kept from the last analysis: an editor's session). `probed` gets
    the files of the project modules the verdict read (`_ProjectTops.reach_jax`)."""
    data = text.encode("utf-8", "surrogatepass")
    text_verdict = functools.cache(lambda: _text_verdict(data, package, path, probed))
    if not walk_first and all(rule.identifiers for rule in rules) and text_verdict() is True:
        # (every rule below is dropped then: one the words keep, by `cannot_reach`; one they do
        # not, by the imports' verdict. Asked first, it spares the words' search of the files a
        # parallel run's parent settles.)
        return []
    present = _present(data, rules)
    library = names_library(data)  # every API call may happen in the library's code
    own = [rule for rule in rules if library or not rule.triggers or not present.isdisjoint(rule.triggers)]
    kept = own
    reaches = functools.cache(lambda: reaches_api(bindings(), path, probed, data))

    @functools.cache
    def cannot_reach() -> bool:
        verdict = None if walk_first else text_verdict()
        return verdict if verdict is not None else not reaches()

    if own and all(rule.identifiers for rule in own):
        words = _whole_words(text, frozenset().union(*(rule.identifiers for rule in own)))
        kept = [rule for rule in own if library or rule.identifiers & words]
        if kept and cannot_reach():
            return []
        if kept and not library:
            identifiers = [rule.identifiers for rule in kept]
            used = api_uses(bindings(), frozenset().union(*identifiers), identifiers)
            kept = [rule for rule in kept if rule.identifiers & used]
    if kept and not reaches():
        return []
    if path is not None and len(kept) < len(rules):
        if not kept and (not reaches() if walk_first else text_verdict() is True):
            return []  # (told before the imports' text is searched: a large project's is long)
        reached = imported_data(data, path, probed=probed)
        reached_library = names_library(reached)
        others = [rule for rule in rules if rule not in kept]
        there = _present(reached, others)
        through_imports = [rule for rule in others
                           if reached_library or not there.isdisjoint(rule.triggers)
                           or rule in own and any(w.encode() in reached for w in rule.identifiers)]
        if through_imports and not kept and (cannot_reach() or not reaches()):
            return []  # (`from .fusion import f` in jax: jax's own modules are served empty)
    else:
        through_imports = []
    return kept + through_imports


class _NeedsTheTree(Exception):
    pass


def _needs_the_tree() -> Any:
    raise _NeedsTheTree


def settled_from_text(text: str, path: str | None, probed: set[str] | None = None) -> bool:
    """Does the prefilter tell from the text alone (its words and import statements) that no
    rule could fire in the file? The parent of a parallel run asks, so that its workers get
    only files whose tree is needed."""
    try:
        return not applicable(list(CHECKS), text, _needs_the_tree, path, package_of(path, module_name(path)), probed)
    except _NeedsTheTree:
        return False


def settled_from_tree(text: str, path: str | None, tree: ast.Module | None = None,
                      probed: set[str] | None = None) -> bool:
    """`settled_from_text`, reading the stdlib tree (`tree`, else parsed here) where the text
    alone does not tell: the engine's first step, without loading the engine (astroid, our
    stubs and the tracer: 0.12 s of a run whose files all settle so, such as a project that
    imports modules by name and never meets jax). False for a text that does not parse: the
    engine says why."""
    package = package_of(path, module_name(path))
    try:
        parsed = tree if tree is not None else ast.parse(text)
    except (SyntaxError, ValueError):  # (null bytes before Python 3.12)
        return False
    bindings = functools.cache(lambda: Bindings.of(parsed, package))
    return not applicable(list(CHECKS), text, bindings, path, package, probed)


# -- project imports ---------------------------------------------------------------------------

_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]+(?P<names>[\w., \t()*]+)"
    rb"|import[ \t]+(?P<plain>[\w.]+))", re.M)
MAX_IMPORTED_FILES = 40
# a project's case imports its package, whose api wraps the kernel module, whose TMEM comes
# from a helper module: four levels
IMPORT_DEPTH = 4


def imported_data(data: bytes, path: str, depth: int = IMPORT_DEPTH, probed: set[str] | None = None) -> bytes:
    """The bytes of the project modules `data` (the file at `path`) imports, and of theirs,
    `depth` levels down (jax's own modules are not the project's; a package's `__init__.py`,
    which re-exports what its modules define, is no level). `probed` gets every path
    looked at (a package's `__init__.py`, each candidate module file), found or not.

    The answer is kept for the same file, import statements and depth while every directory
    the walk looked into and every file it read are unchanged (a directory's modification
    time changes whenever an entry is added, removed or renamed): then the walk would find
    the same, since it reads nothing else of `data` (its import statements, the names it
    imports by name, whether it hands out its package's modules lazily). Each analysis of a small tokamax kernel
    spent 1.5 ms trying 150 candidate paths of its imports; checking the 60 stamps takes a
    tenth of that, and an editor's keystroke that changes no import keeps the answer."""
    key = (os.path.abspath(path), depth, tuple(match.group() for match in _imports(data))
           + tuple(match.group() for match in _dynamic_imports(data))
           + ((b"def __getattr__(",) if _lazy_exports(data) else ()))
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
            if os.path.basename(module) == "__init__.py":  # (a package re-exporting its modules' names: no level of its own)
                pending.append((text, module, level))
            elif level > 1:
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

    def listed(self, directory: str) -> frozenset[str]:
        """The names in a directory (one listing, as `is_file` takes them)."""
        self.is_file(os.path.join(directory, "__init__.py"))
        names = self.directories[directory][1]
        if names is None:
            try:
                return frozenset(os.listdir(directory or os.curdir))
            except OSError:
                return frozenset()
        return names

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
        return all(_file_stamp(file) == known for file, known in self.files.items())


# (file, depth, its import statements as `_imports` finds them) -> the last walk
_imported: dict[tuple[str, int, tuple[bytes, ...]], _Walk] = {}

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


def project_root(path: str | None, is_file: Callable[[str], bool] = os.path.isfile) -> str | None:
    """The directory above the file's top-level package: where its imports start from."""
    if not path:
        return None
    root = os.path.dirname(os.path.abspath(path))
    while is_file(os.path.join(root, "__init__.py")):
        root = os.path.dirname(root)
    return root


def package_of(path: str | None, name: str) -> str:
    """The package a module's relative imports start from."""
    return name if path and os.path.basename(path) in ("__init__.py", "__init__.pyi") else name.rpartition(".")[0]


def module_name(path: str | None) -> str:
    """The dotted name a file would be imported as (packages found by their `__init__.py`)."""
    if not path:
        return "__pallas_lsp_buffer__"
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    parts = [os.path.splitext(filename)[0]]
    if parts[0] == "__init__":
        parts = []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return ".".join(parts) or "__init__"


def _project_files(data: bytes, path: str, walk: _Walk) -> Iterator[str]:
    exists = walk.is_file
    directory = os.path.dirname(path)
    root = project_root(path, exists)
    assert root is not None
    installed = os.path.basename(root) in ("site-packages", "dist-packages")
    own_top = os.path.relpath(path, root).split(os.sep)[0]
    if installed and own_top == "jax":
        return  # each import is passed over below: jax's own, or another installed package
    for match in _imports(data):
        if match["dots"] and own_top == "jax":
            continue  # a module of jax's own, as an absolute import of it is
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
        yield from _found(candidates, root, installed, own_top, exists)
    for match in _dynamic_imports(data):  # `importlib.import_module("pkg.ops")`, `(".ops", __name__)`
        base, module = directory if match["dots"] else root, match["module"].decode()
        if match["dots"] and match["package"]:  # (`import_module(".ops", "pkg")`)
            base, module = root, match["package"].decode().rsplit(".", len(match["dots"]) - 1)[0] + "." + module
        else:
            for _ in range(len(match["dots"]) - 1):
                base = os.path.dirname(base)
        yield from _found([(base, module)], root, installed, own_top, exists)
    if os.path.basename(path) == "__init__.py" and _lazy_exports(data):
        # (PEP 562: a package's `__getattr__` may hand out any of its modules)
        names = sorted(walk.listed(directory))
        yield from _found([(directory, name[:-3]) for name in names if name.endswith(".py") and name != "__init__.py"],
                          root, installed, own_top, exists)


_DYNAMIC_IMPORT = re.compile(rb"\b(?:import_module|__import__)\(\s*(?:name\s*=\s*)?[\"'](?P<dots>\.*)(?P<module>[\w.]+)[\"']"
                             rb"(?:\s*,\s*(?:package\s*=\s*)?[\"'](?P<package>[\w.]+)[\"'])?")
_LAZY_EXPORTS = re.compile(rb"^def __getattr__\(", re.M)


# Both expressions would be tried at every byte (one starts with `\b`, the other with `^`):
# 0.16 s over the jax package's 12 MB, where a search for their words takes a tenth of that.
def _dynamic_imports(data: bytes) -> Iterator[re.Match[bytes]]:
    """`_DYNAMIC_IMPORT.finditer(data)`, searched only in a text with one of its words."""
    if b"import_module" in data or b"__import__" in data:
        yield from _DYNAMIC_IMPORT.finditer(data)


def _lazy_exports(data: bytes) -> bool:
    """Does the text define a module-level `__getattr__` (PEP 562)?"""
    return b"def __getattr__(" in data and _LAZY_EXPORTS.search(data) is not None


def _found(candidates: list[tuple[str, str]], root: str, installed: bool, own_top: str,
           exists: Callable[[str], bool]) -> Iterator[str]:
    """The files of the candidate modules (directory, dotted name) that exist in the project."""
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


def _whole_words(text: str, names: frozenset[str]) -> set[str]:
    """The names (identifiers) that occur in `text` as whole words, as `\\bname\\b` finds
    them (a word character is alphanumeric, `str.isalnum()`, or `_`): one `find` loop per
    name, where one alternation of them all was tried at every character (13 ms on a
    200 kB file)."""
    found = set()
    for name in names:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            before = text[at - 1] if at else " "
            after = text[end] if end < len(text) else " "
            if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
                found.add(name)
                break
            at = text.find(name, at + 1)
    return found


def api_uses(bindings: Bindings, wanted: frozenset[str] | None = None,
             groups: Iterable[frozenset[str]] = ()) -> set[str]:
    """Names (of `wanted`, or all) used where the analysis could see a Pallas API call (see
    the module's doc). With `groups` (each rule's identifiers), the search of the calls stops
    once a name of each group is found: a kernel file uses them early, and its calls are many
    (10 ms of each keystroke in JAX's `mosaic_gpu_test.py`)."""
    used: set[str] = set()
    imports = bindings.imports
    unmet = list(groups)
    for call in bindings.calls:
        callee = call.func
        name = _name_of(callee)
        if name == "getattr" and len(call.args) >= 2 and bindings.may_be_api(call.args[0]):
            named = call.args[1]  # `getattr(plgpu, "SMEM")(...)`: the name in a string (any, when not written)
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                if wanted is None or named.value in wanted:
                    used.add(named.value)
            elif wanted is not None:
                used |= wanted
            continue
        if (name == "partial" or type(callee) is ast.Name and callee.id in imports) and bindings.is_partial(callee):
            if not call.args:  # (`functools.partial(plgpu.kernel, scratch_types=...)`)
                continue
            callee = call.args[0]
            name = _name_of(callee)
        if wanted is not None and name not in wanted:  # (most calls: no set made for them)
            for keyword in call.keywords:
                if keyword.arg in wanted:
                    break
            else:
                continue
        names = {name, *(keyword.arg for keyword in call.keywords if keyword.arg)}
        if wanted is not None:
            names &= wanted
        if names and bindings.may_be_api(callee):
            used |= names
            if unmet:
                unmet = [group for group in unmet if group.isdisjoint(used)]
                if not unmet:
                    return used
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
# Every finding of every rule is about an object a Mosaic GPU function made: an allocation,
# a union or a barrier (`plgpu.TMEM`, `plgpu.RefUnion`, `plgpu.Barrier`), an MMA, a commit or
# a copy (`plgpu.tcgen05_mma`), or a `plgpu.kernel` (PLS008 and the kernel rules judge its
# sites; the sites of `pl.pallas_call`, `pl.kernel` and `pl.run_scoped` only for the Mosaic
# GPU allocations passed to them). The trace makes those only when it calls a name of
# `jax.experimental.pallas.mosaic_gpu` (`trace.stubs.NATIVE`; the stub of
# `jax.experimental.pallas` names none of them), or runs JAX's GPU kernel building blocks
# under `jax.experimental.pallas.ops.gpu` (read from source when called; its TPU ones import
# no Mosaic GPU module, as a test checks of the installed jax), or something a project module
# gave it (`API_SOURCES`). The tracer gets such an object in three ways only, and nothing else
# in a file can make one:
#
# - a name an import binds to a `jax` path that is one of `API_SOURCES`, inside one, or above
#   one (`jax`, `jax.experimental`, `jax.experimental.pallas`), read as such or through
#   attributes that lead there (`plgpu.TMEM`, `pl.mosaic_gpu`; not `pl.pallas_call` or
#   `pltpu.SMEM`): every other `jax` module is served empty or holds no such function, and
#   what is read from it is an opaque library value (`gpu_core.SMEM`, `jax.numpy.float32`);
# - an import of a project module, which the tracer runs (its top level may call the API at
#   import time, its functions may return or call it): relative imports, and absolute ones
#   whose top-level name is the analysed file's project (`project_root`, as
#   `Project.from_project` decides); other libraries (numpy, an installed package) are opaque;
# - a star import of either kind.
#
# Values made in the file (its classes, functions, a local `tcgen05_mma`, `x.scratch_types`)
# hold API objects only when one of those put them there. So a file without any of the three
# records no site, whatever its words: JAX's own Pallas implementation, which defines the API
# and its lowering rules and imports its pieces from `jax._src`. What the tracer does not model
# (`__import__`, `importlib`, `sys.modules`, a module's `__dict__`) gives it an unknown value,
# not an API object; `getattr(plgpu, "TMEM")` reads `plgpu` as a value, which counts.


def reaches_api(bindings: Bindings, path: str | None, probed: set[str] | None = None,
                text: bytes | None = None) -> bool:
    """Could the trace of this module meet an object of the Pallas API (see above)? False
    means that no rule can find anything in it. `text`: the module's (whether it names
    `pallas`, which a project module that uses jax may be handed, `_ProjectTops.reach_jax`,
    and the modules it gives `importlib.import_module`); None: not known."""
    imported = _imported_project_modules(bindings, path, probed, text)
    if _imports_reach_api(imported, probed, text):
        return True
    near = {name for name, paths in bindings.imports.items() if name in bindings.loaded and _near_paths(paths)}
    if near and _pallas_named_nowhere(imported, probed, text):
        near = {name for name in near if _paths_may_name_pallas(bindings.imports[name])}
    if not near:
        return False
    return _uses_reach_api(bindings, near, bindings.imports)


def _pallas_named_nowhere(imported: _Imported | None, probed: set[str] | None, text: bytes | None) -> bool:
    """Does no code the trace runs name a module whose name holds `pallas`: neither the text
    nor a file of the project modules it imports (`imported`: `_imported_project_modules`; to
    any depth: `_ProjectTops.name_pallas`)? Every module that holds the API is one
    (`API_SOURCES`): a name bound to `jax` or `jax.experimental` then leads to none, however
    it is read, passed or stored (flax's modules hand `jax` around and never name `pallas`).
    False: they may, or that is not known."""
    if text is None or imported is None or _mentions(text) & _MENTIONS_PALLAS:
        return False
    tops, project = imported
    return not project or not tops.name_pallas(project, probed)


def _paths_may_name_pallas(paths: Iterable[str | None]) -> bool:
    """Is one of a name's import paths not known, or one whose name holds `pallas` (`from .
    import mosaic_gpu` inside `jax.experimental.pallas`: the text need not say it)?"""
    return any(path is None or "pallas" in path for path in paths)


def _uses_reach_api(found: Bindings, near: set[str], imports: dict[str, set[str | None]]) -> bool:
    """Does `found` read a name of `near` (bound by `imports`) as itself, or through
    attributes that lead near the API?"""
    if near & found.bare:
        return True  # the module or API object itself is passed, returned, stored
    inner = {id(attribute.value) for attribute in found.attributes}
    for attribute in found.attributes:
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
        if any(path is None or _is_jax(path) and _near_api(path + suffix) for path in imports[root.id]):
            return True
    return False


def _imports_reach_api(imported: _Imported | None, probed: set[str] | None, text: bytes | None) -> bool:
    """Does an import itself bring in what may hold the API: a project module (which runs)
    that may meet jax, or what `_imported_project_modules` leaves not known (`imported`:
    its answer; `text`: the module's, None: not known)?"""
    if imported is None:
        return True
    tops, project = imported
    return bool(project) and tops.reach_jax(project, probed, _MENTIONS_ALL if text is None else _mentions(text))


_Imported: TypeAlias = "tuple[_ProjectTops, list[str]]"


def _imported_project_modules(bindings: Bindings, path: str | None, probed: set[str] | None,
                              text: bytes | None) -> _Imported | None:
    """The project modules the imports run (with the file's project); None when an import
    itself may bring in the API: a module not known, a star import of the API, a module
    `importlib.import_module` may get (see `_imports_reach_api`)."""
    tops = _ProjectTops(path)
    project = []
    by_name = False
    for module, relative in bindings.modules:
        if module is None:
            return None  # a relative import above the top-level package: not known
        if module == "importlib" or module.startswith("importlib."):
            by_name = True
            continue
        if _is_jax(module):
            continue  # served by the brain: what is read from it is judged by the names it binds
        if relative or tops.holds(module, probed):
            project.append(module)
    for module in bindings.star_paths:
        if module is None or (_is_jax(module) and _near_api(module)):
            return None
        if not _is_jax(module) and tops.holds(module, probed):
            project.append(module)
    if by_name:
        named = _imported_by_name(text, path, tops, probed)
        if named is None:
            return None
        project += named
    # a name imported from a project module may be a module of its package
    project += [name for names in bindings.imports.values() for name in names
                if name is not None and any(name.startswith(module + ".") for module in project)]
    return tops, project


def _imported_by_name(text: bytes | None, path: str | None, tops: _ProjectTops, probed: set[str] | None
                      ) -> list[str] | None:
    """The project modules a module that imports `importlib` gets from `import_module` by a
    literal name; None when it may get the API (one of jax's modules near it, a name not
    known, or a computed one: any module of the project, or one the strings of the text and
    the project's files name: the API's when they say `jax` and `pallas`)."""
    if text is None or tops.root is None:
        return None
    if _computes_a_module_name(text):
        if _buffers_differ.get():
            return None  # (the project's files are read from the disk)
        mentions, paths = _JaxReach.of(tops).whole_project()
        if _all_named(mentions | _mentions(text)):
            return None
        if probed is not None:
            probed.update(paths)
        return []
    named = []
    for name, relative in _modules_named(text, package_of(path, module_name(path))):
        if name is None or _is_jax(name) and _near_api(name):
            return None
        if not _is_jax(name) and (relative or tops.holds(name, probed)):
            named.append(name)
    return named


def _near_paths(paths: set[str | None]) -> bool:
    return any(path is None or _is_jax(path) and _near_api(path) for path in paths)


def cannot_reach_api_from_text(data: bytes, package: str, path: str | None) -> bool:
    """`not reaches_api(...)`, told from the text: the import statements are found in the text,
    and an occurrence of a name they bind near the API, in code, that may be such a name read
    is not known (False). Every real import statement has the word `import` where a statement
    or its `from` clause starts a line (`_import_at`); text that only looks like one (in a
    docstring) binds more names, which can only keep the file."""
    return _text_verdict(data, package, path) is True


def _text_verdict(data: bytes, package: str, path: str | None, probed: set[str] | None = None) -> bool | None:
    """`cannot_reach_api_from_text`, and False where the import statements found bring in
    what may hold the API (None: not known)."""
    literals = _Literals(data)
    statements = _import_statements_in_text(data, literals)
    if statements is None:
        return None

    def may_be_code(at: int) -> bool:
        inside = literals.inside(at)
        return not _in_comment(data, at) if inside is None else not inside

    return _settled(data, statements, package, path, may_be_code, probed)


def _import_statements_in_text(data: bytes, literals: _Literals | None = None
                                ) -> list[tuple[ast.Import | ast.ImportFrom, tuple[int, int]]] | None:
    """Every import statement of the text, with its span (`_import_at`); None: not known. A
    word `import` that `_import_at` cannot tell is no statement inside a plain string or a
    comment (`raise ImportError("Can't compile: import torch failed")`), nor is a line there
    that reads as no import statement (a docstring's `import .lib.scimath as emath`);
    `literals` reads them (the caller's, when it asks too)."""
    literals = literals or _Literals(data)
    spans = []
    at = data.find(b"import")
    while at >= 0:
        end = at + 6
        if not (at and data[at - 1] in _WORD_BYTES or end < len(data) and data[end] in _WORD_BYTES):
            span = _import_at(data, at)
            if span is None:
                if not literals.inside(at):
                    return None
                span = _NOT_A_STATEMENT
            if span is not _NOT_A_STATEMENT:
                spans.append(span)
        at = data.find(b"import", end)
    found = _parsed(data, spans)
    if found is not None:
        return found
    # (one of them is not one statement: where each is read alone, those in literals go)
    kept = [span for span in spans if _parsed(data, [span]) is not None or not literals.inside(span[0])]
    return None if len(kept) == len(spans) else _parsed(data, kept)


# A comment, a string literal (its prefix letters are looked at apart), or a quote that opens no
# string the line (or, for `"""`, the file) closes: then the text is not one a scan can read.
_LITERAL = re.compile(
    rb"#[^\r\n]*"
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'"
    rb'|"[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"'
    rb"|(?P<open>['\"])", re.S)
# The prefixes of a string literal that holds no code, and of one whose fields are code.
_PLAIN_PREFIXES = frozenset({b"", b"r", b"u", b"b", b"br", b"rb"})
_FORMAT_PREFIXES = frozenset({b"f", b"fr", b"rf", b"t", b"tr", b"rt"})
# Where an f-string's text or a replacement field may change what is read next.
_IN_TEXT = re.compile(rb"['\"\\{}\r\n]")
_IN_FIELD = re.compile(rb"[()\[\]{}'\"#\\:]")
MAX_FIELD_DEPTH = 8


class _Literals:
    """The comments and plain string literals of the text, found by one scan from its start,
    as the tokenizer reads them (a `#` or a quote outside them starts one), as far as an
    offset asked about: a kernel file names the API early, and the search for its first use
    ends there (the scan of all of JAX's `mosaic_gpu_test.py` took 8 ms). An f- or t-string
    is no span (its fields are code) but is read to its true end (from Python 3.12 on, a
    field may hold quotes of the string's own kind). The scan cannot be trusted from a quote
    that opens no string, or an f-string it does not read, on."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.spans: list[tuple[int, int]] = []
        self.read = 0  # the text is read up to here
        self.stop: int | None = None  # where the scan cannot be trusted from

    def inside(self, at: int) -> bool | None:
        """Is offset `at` inside a comment or a plain string literal? None: not known."""
        data = self.data
        while self.stop is None and self.read <= at:
            match = _LITERAL.search(data, self.read)
            if match is None:
                self.read = len(data) + 1
                break
            start, end = match.span()
            if match["open"] is not None:
                self.stop = start
                break
            if data[start] != ord("#"):
                prefix = _prefix(data, start)
                if prefix in _FORMAT_PREFIXES:
                    formatted = _formatted_end(data, start, 1)
                    if formatted is None:
                        self.stop = start
                        break
                    self.read = formatted
                    continue
                if prefix not in _PLAIN_PREFIXES:
                    self.stop = start  # (`if"a"else"b"`: not worth reading)
                    break
            self.spans.append((start, end))
            self.read = end
        if self.stop is not None and self.stop - len(_prefix(data, self.stop)) <= at:
            return None
        return _inside(self.spans, at)


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    """Is offset `at` inside one of these sorted spans (`_Literals`)?"""
    index = bisect.bisect_right(spans, at, key=lambda span: span[0]) - 1
    return index >= 0 and at < spans[index][1]


def _prefix(data: bytes, quote: int) -> bytes:
    """The letters (and digits, underscores) right before the quote at `quote`, lowercased."""
    start = quote
    while start and data[start - 1] in _WORD_BYTES:
        start -= 1
    return data[start:quote].lower()


def _formatted_end(data: bytes, start: int, depth: int) -> int | None:
    """Where the f-string whose opening quote is at `start` ends (None: not read)."""
    quote = data[start:start + 3] if data[start:start + 3] in (b"'''", b'"""') else data[start:start + 1]
    return _text_end(data, start + len(quote), quote, False, depth)


def _text_end(data: bytes, at: int, quote: bytes, in_spec: bool, depth: int) -> int | None:
    """Read an f-string's text from `at`: the offset after its closing quote or, in a format
    spec (`in_spec`), that of the `}` closing the field (None: not read)."""
    while (found := _IN_TEXT.search(data, at)) is not None:
        at = found.start()
        byte = data[at]
        if data.startswith(quote, at):
            return None if in_spec else at + len(quote)
        if byte == ord("\\"):
            at += 2
        elif byte in b"\r\n":
            if len(quote) == 1:
                return None
            at += 1
        elif byte == ord("{"):
            if not in_spec and data.startswith(b"{{", at):
                at += 2
                continue
            end = _field_end(data, at + 1, quote, depth)
            if end is None:
                return None
            at = end
        elif byte == ord("}"):
            if in_spec:
                return at
            at += 2 if data.startswith(b"}}", at) else 1
        else:
            at += 1  # the other kind of quote
    return None


def _field_end(data: bytes, at: int, quote: bytes, depth: int) -> int | None:
    """Read a replacement field from after its `{`: the offset after its `}` (None: not read)."""
    if depth > MAX_FIELD_DEPTH:
        return None
    brackets = 0
    while (found := _IN_FIELD.search(data, at)) is not None:
        at = found.start()
        byte = data[at]
        if byte in b"([{":
            brackets += 1
        elif byte in b")]":
            brackets -= 1
            if brackets < 0:
                return None
        elif byte == ord("}"):
            if not brackets:
                return at + 1
            brackets -= 1
        elif byte == ord(":"):
            if not brackets:  # the format spec: text, with fields of its own, up to the `}`
                end = _text_end(data, at + 1, quote, True, depth + 1)
                return None if end is None else end + 1
        elif byte in b"'\"":
            end = _nested_end(data, at, depth)
            if end is None:
                return None
            at = end
            continue
        else:
            return None  # a comment or a backslash in a field
        at += 1
    return None


def _nested_end(data: bytes, at: int, depth: int) -> int | None:
    """Where a string inside a replacement field, its quote at `at`, ends (None: not read)."""
    prefix = _prefix(data, at)
    if prefix in _FORMAT_PREFIXES:
        return _formatted_end(data, at, depth + 1)
    nested = _LITERAL.match(data, at) if prefix in _PLAIN_PREFIXES else None
    return None if nested is None or nested["open"] is not None else nested.end()


def _parsed(data: bytes, spans: list[tuple[int, int]]) -> list[tuple[ast.Import | ast.ImportFrom, tuple[int, int]]] | None:
    """The import statements at these spans, parsed at once; each must be one (None: not known).
    A comment inside parentheses is not an import's spelling: occurrences in it are judged."""
    if not spans:
        return []
    snippets = [data[start:end] for start, end in spans]
    lines = [1]
    for snippet in snippets[:-1]:  # (`\r\n`, `\r` and `\n` each end a line)
        lines.append(lines[-1] + snippet.count(b"\n") + snippet.count(b"\r") - snippet.count(b"\r\n") + 1)
    try:
        body = ast.parse(b"\n".join(snippets).decode("ascii")).body
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    if [getattr(node, "lineno", 0) for node in body] != lines or any(
            type(node) is not ast.Import and type(node) is not ast.ImportFrom for node in body):
        return None
    return [(node, span if b"#" not in snippet else (span[0], span[0]))  # type: ignore[misc]
            for node, span, snippet in zip(body, spans, snippets)]


def _in_comment(data: bytes, at: int) -> bool:
    """Is offset `at` in a comment or a string, told from its line alone? So it is when a `#`
    is before it on its line and no quote: if the line starts in code, the `#` starts a
    comment; if it starts inside a string, nothing on the line before `at` can close it."""
    start = _line_start(data, at)
    return data.find(b"#", start, at) >= 0 and not _QUOTE.search(data, start, at)


def _line_start(data: bytes, at: int) -> int:
    """Where the physical line holding offset `at` starts (`\r\n`, `\r` and `\n` end lines)."""
    return max(data.rfind(b"\n", 0, at), data.rfind(b"\r", 0, at)) + 1


_NOT_A_STATEMENT: Any = object()
_FROM_CLAUSE = re.compile(rb"from(?=[ \t\f.])[ \t\f.\w]*")
_LINE_END = re.compile(rb"[\r\n#;]|$")
_JOINED = re.compile(rb"\\(?:\r\n|\r|\n)")  # a backslash joining two lines
_QUOTE_OR_COMMENT = re.compile(rb"[#'\"]")
_QUOTE = re.compile(rb"['\"]")


def _import_at(data: bytes, at: int) -> Any:
    """The span of the import statement whose keyword `import` is at `at`;
    `_NOT_A_STATEMENT` when that word cannot be the keyword of one; None: not known.
    A statement starts a logical line or follows a `;` or a compound header's `:`. The word
    is not the keyword where the text before it on its logical line (the physical lines a
    backslash joins to its own) is neither blank nor a `from` clause and holds no `;` or `:` (a
    comment, a docstring's prose, `x.import`); a `;`, a `:`, non-ASCII text before it, and a
    quote or a `#` on the lines joined to its own are not known. Its names may go on over lines
    a backslash joins (numpy's and scipy's `from ... import a, \\`): `_parsed` holds the span
    to one statement."""
    start = line = _line_start(data, at)
    while True:  # (to the first of the lines a backslash joins to this one)
        before = start - 1
        if before > 0 and data[before] == ord("\n") and data[before - 1] == ord("\r"):
            before -= 1
        if not (before > 0 and data[before - 1] == ord("\\")):
            break
        start = _line_start(data, before)
    if start != line and _QUOTE_OR_COMMENT.search(data, start, line):
        return None  # (a comment's backslash joins no line; one in a string may end it)
    prefix = _JOINED.sub(b" ", data[start:at]).strip(b" \t\f")
    if prefix and _in_comment(data, at):
        return _NOT_A_STATEMENT  # `import numpy  # pyrefly: ignore[missing-import]`
    if prefix and not _FROM_CLAUSE.fullmatch(prefix):
        if not prefix.isascii() or b";" in prefix or b":" in prefix:
            return None
        return _NOT_A_STATEMENT
    first = start + len(data[start:at]) - len(data[start:at].lstrip(b" \t\f"))
    end = at + 6
    while end < len(data) and data[end] in b" \t\f":
        end += 1
    if data.startswith(b"(", end):
        end = data.find(b")", end)
        if end < 0:
            return None
        end += 1
    else:
        end = _LINE_END.search(data, end).start()  # type: ignore[union-attr]  # `$` always matches
        while data[first:end].rstrip(b" \t\f").endswith(b"\\"):  # it goes on on the next line
            if data.startswith(b"\r\n", end):
                end += 2
            elif data.startswith((b"\n", b"\r"), end):
                end += 1
            else:
                return None  # (a `#`, a `;` after the backslash: `_parsed` would refuse it too)
            end = _LINE_END.search(data, end).start()  # type: ignore[union-attr]
    return first, end


def _settled(data: bytes, imports: list[tuple[ast.Import | ast.ImportFrom, tuple[int, int]]], package: str,
             path: str | None, may_be_code: Callable[[int], bool],
             probed: set[str] | None = None) -> bool | None:
    """Can the trace not meet the API, judged from the file's import statements (with their
    spans) and the occurrences of the names they bind near it? An occurrence that may be such
    a name read reaches it where `may_be_code(at)`. False: the imports bring in what may hold
    it; None: an occurrence may reach it, or the text is not known."""
    found = Bindings()
    for statement, _ in imports:
        found._note(statement, package)
    imported = _imported_project_modules(found, path, probed, data)
    if _imports_reach_api(imported, probed, data):
        return False
    near = {name: paths for name, paths in found.imports.items() if _near_paths(paths)}
    if near and _pallas_named_nowhere(imported, probed, data):
        near = {name: paths for name, paths in near.items() if _paths_may_name_pallas(paths)}
    if not near:
        return True
    spans = sorted(span for _, span in imports)
    span_starts = [start for start, _ in spans]
    # (the names bound to the API itself first: where one is read in code, the file may reach
    # it, and the search ends there, before the thousands of `jax.numpy` a test file reads)
    for name, paths in sorted(near.items(), key=lambda item: not all(map(_in_api, item[1]))):
        word = name.encode()
        at = data.find(word)
        while at >= 0:
            end = at + len(word)
            if _occurrence_may_reach(data, at, end, paths, spans, span_starts) and may_be_code(at):
                return None
            at = data.find(word, end)
    # (after the occurrences, which end the search in a file that reads the API: the runs of
    # other characters are searched for byte by byte, 5 ms of JAX's `mosaic_gpu_test.py`)
    return None if not data.isascii() and _normalizes_to(data, near) else True


def _normalizes_to(data: bytes, names: Iterable[str]) -> bool:
    """Does a run of non-ASCII characters (with the identifier characters around it) read as
    text holding one of `names` once NFKC-normalized, as Python reads identifiers (`ｊａｘ` is
    `jax`)? True too where the text does not decode."""
    for run in _NON_ASCII.finditer(data):
        start, end = run.span()
        while start and (data[start - 1] in _WORD_BYTES or data[start - 1] >= 0x80):
            start -= 1
        while end < len(data) and (data[end] in _WORD_BYTES or data[end] >= 0x80):
            end += 1
        try:
            normalized = unicodedata.normalize("NFKC", data[start:end].decode("utf-8"))
        except UnicodeDecodeError:
            return True
        if any(name in normalized for name in names):
            return True
    return False


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789")
_LETTERS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
_ATTRIBUTE = re.compile(rb"[ \t]*\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
_DOT = re.compile(rb"[ \t]*\.")


def _occurrence_may_reach(data: bytes, at: int, end: int, paths: set[str | None], spans: list[tuple[int, int]],
                          span_starts: list[int]) -> bool:
    """May this occurrence of an imported name be the name, read near the API? (True: the
    statement around it is walked.)"""
    if at and (data[at - 1] in _LETTERS or data[at - 1] >= 0x80):
        return False  # a longer identifier (a digit before it is not: `1if` reads `if`)
    if end < len(data) and (data[end] in _WORD_BYTES or data[end] >= 0x80):
        return False
    index = bisect.bisect_right(span_starts, at) - 1
    if index >= 0 and at < spans[index][1]:
        return False  # in an import statement: a module's or a bound name's spelling
    before = at
    while before and data[before - 1] in b" \t":
        before -= 1
    if before and data[before - 1] == ord("."):
        return False  # an attribute of something else
    suffix = ""
    while True:
        match = _ATTRIBUTE.match(data, end)
        if match is None:
            break
        suffix += "." + match.group(1).decode()
        end = match.end()
        if end < len(data) and data[end] >= 0x80:
            return True  # the attribute goes on in characters this does not read
    if _DOT.match(data, end):
        return True  # `jax.` and something this does not read (a line break)
    return any(path is None or _near_api(path + suffix) for path in paths)


def _in_api(path: str | None) -> bool:
    """Is the `jax` path one of `API_SOURCES`, or inside one?"""
    return path is not None and any(path == module or path.startswith(module + ".") for module in API_SOURCES)


def _near_api(path: str) -> bool:
    """Is the `jax` path one of `API_SOURCES`, inside one, or a package above one?"""
    return any(path == module or path.startswith(module + ".") or module.startswith(path + ".")
               for module in API_SOURCES)


# What a file may bring in (`_JaxReach`): jax, a module whose name holds `pallas` (both when
# what it imports is not known), and a module named by a computed name (`import_module(name)`:
# any module of the project, or one the analysed text names)
_MENTIONS_JAX, _MENTIONS_PALLAS, _COMPUTED = 1, 2, 4
_MENTIONS_ALL = _MENTIONS_JAX | _MENTIONS_PALLAS


def _mentions(data: bytes) -> int:
    return (_MENTIONS_JAX if b"jax" in data else 0) | (_MENTIONS_PALLAS if b"pallas" in data else 0)


def _all_named(mentions: int) -> bool:
    """Both `jax` and `pallas`: the API's module may be named (or what is imported is not known)."""
    return mentions & _MENTIONS_ALL == _MENTIONS_ALL


class _ProjectTops:
    """Which absolute imports bring in a module of the file's project, as the analysis decides
    (`project_root`, `Project.from_project`): in an installed package, the package
    itself; elsewhere, what lies beside the project root; without a path, nothing."""

    def __init__(self, path: str | None) -> None:
        self.root = root = project_root(path)
        self.own = ""
        if path and root is not None and os.path.basename(root) in ("site-packages", "dist-packages"):
            self.own = os.path.splitext(os.path.relpath(os.path.abspath(path), root).split(os.sep)[0])[0]
        self._known: dict[str, bool] = {}

    def holds(self, module: str, probed: set[str] | None = None) -> bool:
        """Is `module` of the project? `probed` gets the paths that tell (there or not: a
        module of that name may appear)."""
        top = module.split(".")[0]
        if not top or self.root is None:
            return False
        if self.own:
            return top == self.own
        if probed is not None:
            probed.update((os.path.join(self.root, top), os.path.join(self.root, top) + ".py"))
        known = self._known.get(top)
        if known is None:
            base = os.path.join(self.root, top)
            known = self._known[top] = os.path.isdir(base) or os.path.isfile(base + ".py")
        return known

    def reach_jax(self, modules: Iterable[str], probed: set[str] | None = None, mentioned: int = _MENTIONS_ALL) -> bool:
        """Can running these project modules meet the Pallas API, every object of which comes
        from a module of jax whose name holds `pallas` (`API_SOURCES`)? Not when no file of
        theirs, nor any file of a project module one of them imports (at its top or in a
        function, to any depth), holds the word `jax`: then what they make and import is the
        project's and other libraries' only, which the trace does not run. Nor when none of
        them names `pallas` and neither does the analysed text (`mentioned`: its `_mentions`): they use jax,
        but cannot name a module that holds the API (flax's and scipy's modules). True: it
        may, or that is not known (a file not read, an import not understood, a project too
        large). A module `import_module` gets by a literal name is imported; so are those a lazy
        `__getattr__` imports; one it gets by a computed name may be any module of the project
        (`_JaxReach.whole_project`). `probed` gets every path the answer read, there or not."""
        return self._named(modules, probed, mentioned, _MENTIONS_ALL)

    def name_pallas(self, modules: Iterable[str], probed: set[str] | None = None) -> bool:
        """May running these project modules name a module whose name holds `pallas`: does a
        file of theirs, or of a project module one of them imports (to any depth), hold the
        word (a file not read, an import not understood: it may)? `probed` gets every path
        the answer read, there or not."""
        return self._named(modules, probed, 0, _MENTIONS_PALLAS)

    def _named(self, modules: Iterable[str], probed: set[str] | None, mentioned: int, wanted: int) -> bool:
        """Do the files these project modules run name all of `wanted` (`_MENTIONS_*`), with
        the analysed text's `pallas` (`mentioned`, which one imported by a computed name may
        take whole)? True too where that is not known."""
        if self.root is None or _buffers_differ.get():
            return True
        reach = _JaxReach.of(self)
        found = mentioned & _MENTIONS_PALLAS  # (a name the text hands to `getattr(jax.experimental, name)`)
        read: dict[int, frozenset[str]] = {}  # (a strongly connected part's verdict is shared)
        for module in modules:
            for mentions, paths in reach.verdicts_of(module):
                found |= mentions | (mentioned if mentions & _COMPUTED else 0)  # (or to `import_module`)
                if found & wanted == wanted:
                    return True
                read[id(paths)] = paths
        if probed is not None:
            probed.update(*read.values())
        return False

    def files(self, module: str) -> tuple[list[str], dict[str, Stamp | None]]:
        """The files Python runs to import `module` from the project root (the `__init__.py`
        of each package on its path, then the module's own; a directory without one is a
        namespace package), and every path looked at with its stamp (`_file_stamp`; a
        package in a directory not there is not looked for: the directory's stamp tells)."""
        assert self.root is not None
        found: list[str] = []
        looked: dict[str, Stamp | None] = {}
        directory = self.root
        for part in module.split("."):
            directory = os.path.join(directory, part)
            package, plain = os.path.join(directory, "__init__.py"), directory + ".py"
            looked[directory] = there = _file_stamp(directory)
            looked[package] = _file_stamp(package) if there is not None else None
            if _is_file(looked[package]):
                found.append(package)
                continue
            looked[plain] = _file_stamp(plain)
            if _is_file(looked[plain]):
                found.append(plain)
                break
            if there is None:
                break
        return found, looked


class _JaxReach:
    """Which files of one project may meet jax (`_ProjectTops.reach_jax`), each decided once:
    the graph of the project's files, each leading to the files its imports run, is explored
    from the files asked about, and a strongly connected part of it (files that import each
    other) gets one verdict when it is complete (Tarjan's algorithm, without recursion). Files
    analysed in a row ask about the same modules: the verdicts are kept while every path they
    read is as it was, checked again RECHECK_AFTER_S seconds after the last check at the
    earliest (`forget_project_imports`: at once, when a host learns of a change)."""

    def __init__(self, tops: _ProjectTops) -> None:
        self.tops = tops
        self.checked = time.monotonic()
        self.verdicts: dict[str, tuple[int, frozenset[str]]] = {}  # file -> (`_MENTIONS_*` it may run, paths read)
        self.stamps: dict[str, Stamp | None] = {}  # every path read -> `_file_stamp` (None: absent)
        self._files: dict[str, tuple[list[str], frozenset[str]]] = {}  # module -> `files`
        self._whole: tuple[int, frozenset[str]] | None = None  # `whole_project`

    @classmethod
    def of(cls, tops: _ProjectTops) -> _JaxReach:
        key = (tops.root, tops.own)
        kept = _reaches.get(key)
        if kept is not None and time.monotonic() - kept.checked > RECHECK_AFTER_S:
            kept = kept if kept.unchanged() else None
        if kept is None:
            if len(_reaches) >= MAX_LISTINGS:
                _reaches.clear()
            kept = _reaches[key] = cls(tops)
        return kept

    def unchanged(self) -> bool:
        """Is every path read as it was (and was it not changed so lately that a change to
        come may keep its time)?"""
        self.checked = time.monotonic()
        racy = time.time_ns() - RACY_NS
        return all(_file_stamp(path) == stamp and (stamp is None or stamp[1] < racy)
                   for path, stamp in self.stamps.items())

    def verdicts_of(self, module: str) -> Iterator[tuple[int, frozenset[str]]]:
        """The verdicts of the files importing `module` runs (a name that is no file runs none)."""
        files, looked = self.files(module)
        yield 0, looked
        for file in files:
            if file not in self.verdicts:
                self._explore(file)
            yield self.verdicts[file]

    def files(self, module: str) -> tuple[list[str], frozenset[str]]:
        """`_ProjectTops.files`, once per module; the paths looked at, stamped."""
        found = self._files.get(module)
        if found is None:
            files, looked = self.tops.files(module)
            self.stamps.update(looked)
            found = self._files[module] = (files, frozenset(looked))
        return found

    def _explore(self, start: str) -> None:
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        nodes: dict[str, tuple[int, frozenset[str], list[str]]] = {}  # file -> (mentions, paths, files it runs)
        stack: list[str] = []
        work: list[tuple[str, Iterator[str]]] = []

        def visit(file: str) -> None:
            index[file] = low[file] = len(index)
            stack.append(file)
            nodes[file] = node = self._node(file, len(index) > MAX_PROJECT_FILES)
            work.append((file, iter(node[2])))

        visit(start)
        while work:
            file, runs = work[-1]
            for other in runs:
                if other in self.verdicts:
                    continue
                if other not in index:
                    visit(other)
                    break
                if other in nodes:  # on the stack: the same strongly connected part
                    low[file] = min(low[file], index[other])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[file])
                if low[file] == index[file]:
                    self._decide(file, stack, nodes)

    def _decide(self, first: str, stack: list[str], nodes: dict[str, tuple[int, frozenset[str], list[str]]]) -> None:
        """One verdict for the strongly connected part whose first file is `first`."""
        part = []
        while True:
            file = stack.pop()
            part.append(file)
            if file == first:
                break
        outside = {id(verdict[1]): verdict for verdict in (
            self.verdicts.get(other) for file in part for other in nodes[file][2]) if verdict is not None}
        mentions = functools.reduce(operator.or_, [nodes[file][0] for file in part]
                                    + [verdict[0] for verdict in outside.values()])
        paths = frozenset() if _all_named(mentions) else frozenset().union(
            *(nodes[file][1] for file in part), *(verdict[1] for verdict in outside.values()))
        for file in part:
            self.verdicts[file] = (mentions, paths)
            del nodes[file]

    def whole_project(self) -> tuple[int, frozenset[str]]:
        """What the project's modules mention, all of them (`_MENTIONS_*`), and the paths read:
        every module Python can import from the project root by a dotted name (in an installed
        package, the package's), each directory on the way (its stamp changes with its
        entries). Read once."""
        if self._whole is None:
            self._whole = self._read_whole_project()
        return self._whole

    def _read_whole_project(self) -> tuple[int, frozenset[str]]:
        assert self.tops.root is not None
        mentions, paths = 0, set()
        own = self.tops.own
        pending = [self.tops.root]
        while pending:
            directory = pending.pop()
            self.stamps[directory] = _file_stamp(directory)
            paths.add(directory)
            if len(paths) > MAX_PROJECT_FILES:
                return _MENTIONS_ALL, frozenset()  # (a link back up the tree, too)
            try:
                entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
            except OSError:
                return _MENTIONS_ALL, frozenset()
            for entry in entries:
                stem, suffix = os.path.splitext(entry.name)
                if directory == self.tops.root and own and stem != own:
                    continue  # (an installed package's project is itself)
                if entry.is_dir() and entry.name.isidentifier():
                    pending.append(entry.path)
                elif suffix == ".py" and stem.isidentifier() and entry.is_file():
                    stamp = self.stamps[entry.path] = _file_stamp(entry.path)
                    paths.add(entry.path)
                    if stamp is None or stamp[0] > MAX_SCANNED_BYTES:
                        return _MENTIONS_ALL, frozenset()
                    try:
                        with open(entry.path, "rb") as handle:
                            data = handle.read()
                    except OSError:
                        return _MENTIONS_ALL, frozenset()
                    mentions |= _mentions(data)
                    if _all_named(mentions):
                        return _MENTIONS_ALL, frozenset()
        return mentions, frozenset(paths)

    def _package(self, file: str) -> str:
        """The package of a file reached from the project root (`files`): the directories
        between them, a namespace package's among them (its relative imports start there)."""
        assert self.tops.root is not None
        parts = os.path.relpath(os.path.dirname(file), self.tops.root).split(os.sep)
        return ".".join(parts) if parts != ["."] and os.pardir not in parts else package_of(file, module_name(file))

    def _node(self, file: str, too_many: bool) -> tuple[int, frozenset[str], list[str]]:
        """What the file itself mentions (`_MENTIONS_*`), the paths read, and the files its
        imports run (every file here was found by `files`, which stamped it)."""
        stamp = self.stamps.get(file)
        mentions, imported = (_MENTIONS_ALL, None) if too_many or stamp is None else \
            _project_imports(file, self._package(file), stamp)
        if imported is None or _all_named(mentions):
            return _MENTIONS_ALL, frozenset(), []
        looked = {file}
        if mentions & _COMPUTED:  # (it may import any module of the project)
            anywhere, paths = self.whole_project()
            mentions |= anywhere
            if _all_named(mentions):
                return _MENTIONS_ALL, frozenset(), []
            looked.update(paths)
        runs: list[str] = []
        for name, relative in imported:
            if name is None:
                return _MENTIONS_ALL, frozenset(), []
            if relative or self.tops.holds(name, looked):
                files, paths = self.files(name)
                runs += files
                looked.update(paths)
        for path in looked - self.stamps.keys():  # (where a module not of the project may appear)
            self.stamps[path] = _file_stamp(path)
        return mentions, frozenset(looked), runs


# (project root, installed package) -> which of its files may meet jax
_reaches: dict[tuple[str | None, str], _JaxReach] = {}


# True while an analysis reads unsaved editor buffers of other files: their text is not the disk's,
# which `reach_jax` reads (`buffers_differ`)
_buffers_differ: contextvars.ContextVar[bool] = contextvars.ContextVar("pallas_buffers_differ", default=False)


@contextlib.contextmanager
def buffers_differ(differ: bool) -> Iterator[None]:
    """While `differ` (an editor's unsaved buffers are analysed instead of their files), every
    project module may meet jax: its text may not be the file's."""
    token = _buffers_differ.set(differ)
    try:
        yield
    finally:
        _buffers_differ.reset(token)


def forget_project_imports() -> None:
    """Forget which project modules may meet jax (a file changed: the server is told)."""
    _reaches.clear()


Stamp: TypeAlias = "tuple[int, int]"  # a file's size (-1: a directory) and modification time


def _file_stamp(path: str) -> Stamp | None:
    """A file's size and modification time; a directory's time (it changes with its entries).
    None: not there."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (-1 if stat.S_ISDIR(status.st_mode) else status.st_size, status.st_mtime_ns)


def _is_file(stamp: Stamp | None) -> bool:
    return stamp is not None and stamp[0] >= 0


RECHECK_AFTER_S = 2.0
# More files than this explored from one, or in a whole project: the rest may meet jax.
MAX_PROJECT_FILES = 4096
_Imports: TypeAlias = "tuple[int, tuple[tuple[str | None, bool], ...] | None]"
# (file, its package) -> (its size and modification time, what it mentions and the modules it imports)
_imports_by_file: dict[tuple[str, str], tuple[Stamp, _Imports]] = {}
MAX_FILES_KEPT = 8192


def _project_imports(file: str, package: str, stamp: Stamp) -> _Imports:
    """Whether the file (as `_file_stamp` found it) mentions `jax` and `pallas` (`_MENTIONS_*`),
    and the modules it imports as a module of `package` (absolute names, each with whether the
    import was relative; a name imported from a module may be one of its package's), kept while
    its size and modification time are (`_COMPUTED` too when it imports a module by a computed
    name); both mentions and None when it cannot be read."""
    kept = _imports_by_file.get((file, package))
    if kept is not None and kept[0] == stamp:
        return kept[1]
    found = _read_project_imports(file, package) if stamp[0] <= MAX_SCANNED_BYTES else (_MENTIONS_ALL, None)
    if time.time_ns() - stamp[1] >= RACY_NS:
        if len(_imports_by_file) >= MAX_FILES_KEPT:
            _imports_by_file.clear()
        _imports_by_file[file, package] = (stamp, found)
    return found


MAX_SCANNED_BYTES = 4 << 20


def _read_project_imports(file: str, package: str) -> _Imports:
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError:
        return _MENTIONS_ALL, None
    mentions = _mentions(data)
    if mentions == _MENTIONS_ALL:
        return _MENTIONS_ALL, None
    if _computes_a_module_name(data):
        mentions |= _COMPUTED
    imported = _imported_modules(data, package, parse=True)
    return (_MENTIONS_ALL, None) if imported is None else (mentions, imported + _modules_named(data, package))


def _computes_a_module_name(data: bytes) -> bool:
    """Does the code call `import_module` with a name that is not a string literal (a lazy
    `__getattr__`'s `import_module(f".{name}", __name__)`), or use it otherwise than by calling
    it (passed on, imported under another name)? The trace imports what such a name comes
    to, which may be any module. True too for a text that does not parse. (`__import__`,
    which the trace does not model, imports nothing there; a lazy `__getattr__` alone runs
    the import statements it holds.)"""
    return b"import_module" in data and _computes_in_tree(data)


@functools.lru_cache(maxsize=32)  # (the analysed text is asked again by each of the prefilter's steps)
def _computes_in_tree(data: bytes) -> bool:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    called = set()  # (`ast.walk` meets a call before its function)
    for node in ast.walk(tree):
        if type(node) is ast.Call and _name_of(node.func) == "import_module":
            called.add(id(node.func))
            if not node.args or type(node.args[0]) is not ast.Constant or not isinstance(node.args[0].value, str):
                return True
        elif type(node) is ast.alias and node.name == "import_module" and node.asname \
                or type(node) in (ast.Name, ast.Attribute) and _name_of(node) == "import_module" \
                and id(node) not in called:
            return True
    return False


def _modules_named(data: bytes, package: str) -> tuple[tuple[str | None, bool], ...]:
    """The modules the text imports by a literal name (`import_module("pkg.ops")`, a relative
    one from the file's package, as `_project_files` finds their files)."""
    named: list[tuple[str | None, bool]] = []
    for match in _dynamic_imports(data):
        dots, module = len(match["dots"]), match["module"].decode()
        base = match["package"].decode() if match["package"] else package
        named.append((_resolved(dots, module, base), bool(dots)))
    return tuple(named)


def _imported_modules(data: bytes, package: str, parse: bool) -> tuple[tuple[str | None, bool], ...] | None:
    """The modules the text's import statements name (see `_project_imports`); where the text
    alone does not tell them (an import after a `;`, ...), those of the tree if `parse`, else
    None."""
    found = _import_statements_in_text(data)
    statements: list[Any]
    if found is not None:
        statements = [statement for statement, _ in found]
    elif not parse:
        return None
    else:  # every import of the tree, in functions too
        try:
            statements = [node for node in ast.walk(ast.parse(data)) if type(node) in (ast.Import, ast.ImportFrom)]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    imported: list[tuple[str | None, bool]] = []
    for statement in statements:
        if type(statement) is ast.Import:
            imported += [(alias.name, False) for alias in statement.names]
            continue
        base = _absolute(statement, package)
        relative = bool(statement.level)
        imported.append((base, relative))
        if base is not None:
            imported += [(f"{base}.{alias.name}", relative) for alias in statement.names if alias.name != "*"]
    return tuple(imported)


@dataclass(frozen=True)
class ReadNames:
    """The names a module reads, as the prefilter's walk of its stdlib tree found them."""

    referenced: frozenset[str]  # read anywhere, as a name or as an attribute
    called: frozenset[str]  # called by name (`Builder(True)`)


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
        found.walk([tree], package)
        return found

    def walk(self, stack: list[ast.AST], package: str) -> None:
        """Note these nodes and every node below them (the list is used up)."""
        note, push, node_type, noted, fields = self._note, stack.append, ast.AST, _NOTED, _FIELDS
        name_type, load, loaded, bare, rooted, rebound = ast.Name, ast.Load, self.loaded, self.bare, self._rooted, self.rebound
        while stack:
            node: Any = stack.pop()  # (an ast.AST; mypy cannot narrow through `kind`)
            kind = type(node)
            if kind is name_type:  # `_note`'s, inline: a third of the nodes (and nothing below them)
                if type(node.ctx) is load:
                    loaded.add(node.id)
                    if id(node) not in rooted:
                        bare.add(node.id)
                else:
                    rebound.add(node.id)
                continue
            if kind in noted:  # the others (constants, operators, ...) bind and call nothing
                note(node, package)
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

    def _note(self, node: Any, package: str) -> None:  # an ast.AST; mypy cannot narrow through `kind`
        """What a node other than a name binds, calls or imports (a name: `walk` notes it)."""
        kind = type(node)  # exact type tests: this runs on every node of every candidate file
        if kind is ast.Call:
            self.calls.append(node)
        elif kind is ast.Attribute:
            if type(node.ctx) is ast.Load:
                self.attributes.append(node)
            if type(node.value) is ast.Name:  # noted before its child: the walk is top-down
                self._rooted.add(id(node.value))
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

    def merge(self, other: Bindings) -> None:
        """Add what the walk of other nodes found (walked after these: lists keep the walk's
        order, and `imports` the order names were first bound in)."""
        self.calls += other.calls
        self.attributes += other.attributes
        self.decorators += other.decorators
        for name, paths in other.imports.items():
            self.imports.setdefault(name, set()).update(paths)
        self.aliased_imports += other.aliased_imports
        self.rebound |= other.rebound
        self.loaded |= other.loaded
        self.star_import = self.star_import or other.star_import
        self.star_paths += other.star_paths
        self.modules += other.modules
        self.bare |= other.bare

    def referenced(self) -> set[str]:
        """Names read anywhere in the module, as a name or as an attribute."""
        return self.loaded | {attribute.attr for attribute in self.attributes}

    def read_names(self) -> ReadNames:
        """What the trace asks of the walk (`Trace`): the names read, the names called."""
        return ReadNames(frozenset(self.referenced()),
                         frozenset(call.func.id for call in self.calls if type(call.func) is ast.Name))

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


class WalkMemo:
    """What `Bindings.walk` found in each statement of the last stdlib tree of each file:
    the module's statements, and those of the definitions there. An editor's next tree of
    the file (`reparse.ParseMemo`) holds the same statement objects, with the same contents,
    wherever the edit did not reach, and the walk goes into the others only. The result is
    the walk's of the whole tree, in its order (`Bindings.of`: statements last to first,
    a definition's header before its body)."""

    def __init__(self, max_files: int = 64) -> None:
        # path -> the package the walk was told, and what it found per statement (by id)
        self._files: dict[str | None, tuple[str, dict[int, tuple[ast.stmt, Bindings]]]] = {}
        self._max_files = max_files
        self.walked = 0  # statements the last `bindings` walked into (for tests and benchmarks)

    def forget(self, path: str | None) -> None:
        self._files.pop(path, None)

    def bindings(self, tree: ast.Module, package: str, path: str | None) -> Bindings:
        """`Bindings.of(tree, package)`, for the file at `path`."""
        walked_in, before = self._files.pop(path, ("", {}))
        if walked_in != package:
            before = {}
        now: dict[int, tuple[ast.stmt, Bindings]] = {}
        self.walked = 0
        found = Bindings()
        for statement in reversed(tree.body):  # (a module's `type_ignores` hold nothing the walk notes)
            found.merge(self._of(statement, package, before, now, inner=True))
        while len(self._files) >= self._max_files:
            del self._files[next(iter(self._files))]
        self._files[path] = (package, now)
        return found

    def _of(self, statement: ast.stmt, package: str, before: dict[int, tuple[ast.stmt, Bindings]],
            now: dict[int, tuple[ast.stmt, Bindings]], inner: bool) -> Bindings:
        """What the walk finds in `statement` (`inner`: and a definition's body statements
        are kept one by one)."""
        kept = before.get(id(statement))
        if kept is not None and kept[0] is statement:
            now[id(statement)] = kept
            return kept[1]
        found = Bindings()
        kind = type(statement)
        if inner and (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef):
            found._note(statement, package)
            for name in reversed(_child_fields(kind)):  # (as the walk's stack pops them)
                if name == "body":
                    for inner_statement in reversed(statement.body):  # type: ignore[attr-defined]
                        found.merge(self._of(inner_statement, package, before, now, inner=False))
                    continue
                value = getattr(statement, name, None)
                for item in reversed(value) if type(value) is list else (value,):
                    if isinstance(item, ast.AST):
                        found.walk([item], package)
        else:
            self.walked += 1
            found.walk([statement], package)
        now[id(statement)] = (statement, found)
        return found


def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields that may hold nodes the walk notes or goes into: not those of Python's
    grammar that hold an identifier, a string, a number or a flag, nor an operator or a
    context (a node with nothing below it that binds or calls nothing)."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(name for name in kind._fields if name not in _LEAF_FIELDS
                                      and (kind.__name__, name) not in _LEAF_FIELDS_OF)
    return found


_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
# (In every node class of the grammar: `name` and `arg` are identifiers wherever they occur.)
_LEAF_FIELDS = frozenset({
    "ctx", "op", "ops", "id", "attr", "name", "arg", "asname", "module", "level", "conversion", "is_async",
    "kind", "simple", "type_comment", "tag", "lineno", "rest", "kwd_attrs", "n", "s",
})
_LEAF_FIELDS_OF = frozenset({("Constant", "value"), ("MatchSingleton", "value"), ("Global", "names"),
                             ("Nonlocal", "names")})
# The node kinds `Bindings._note` reads (exact types: the parser makes no subclasses; a name,
# `walk` reads itself).
_NOTED = frozenset({
    ast.Call, ast.Attribute, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
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
    return _resolved(node.level, node.module, package)


def _resolved(level: int, module: str | None, package: str) -> str | None:
    """The absolute name of `module` imported `level` dots up from `package` (0: absolute)."""
    if not level:
        return module
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):
        return None  # above the top-level package: not known
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _name_of(node: ast.AST) -> str:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return node.attr
    if type(node) is ast.Starred:
        return _name_of(node.value)
    return ""
