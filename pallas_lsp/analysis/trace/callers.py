"""Who else in the project uses a name: a helper is judged by its callers.

A function nobody in the analysed file calls is an entry point, and its parameters are inputs
(`Free`) -- unless another module of the project uses it: then its callers decide what it
receives, their own analyses follow it with their arguments, and here its parameters are
simply unknown. (When the functions the project's modules hand to code we do not read call
it, as tokamax's ops' `_fwd` calls their kernels, that run is its run: `Trace._run`.)

A possible caller is a project file that mentions the name (as an identifier, anywhere: in
code, a string or a comment) and can reach the analysed module `pkg.sub.mod`. Python reaches
a module's function only through an import that names the module or a package on its dotted
path: `import mod`, `from mod import f`, `from . import mod`, `from .mod import f`,
`import pkg.sub.mod as m`, `importlib.import_module("pkg.sub.mod")`, and `from pkg import f`
once `pkg/__init__.py` re-exports it. So a file counts only if it also mentions `mod`, `sub`
or `pkg` (`_Reach.words`); a sibling module that merely defines or calls its own `f` does not
make the analysed `f` a helper. What stays conservative:
- a file with a relative import (`from . import f`, `from .. import f`: a package named by
  dots) inside the analysed module's top-level package;
- a package `__init__.py` that can reach the module and mentions the name or star-imports
  (`from .mod import *`) re-exports it: its package's names reach the module too, for files
  elsewhere (`from other_pkg import f`), to a fixed point;
- a module whose file name is no identifier (`my-kernel.py`, loaded by path): any mention.
A plain module that re-exports (`api.py`: `from mod import f`, then `from api import f`) is not
followed.

The project's files are read once per process into one `_Corpus` (their bytes joined), read
again when a file's size or modification time changes (checked at most every RECHECK_AFTER
seconds); a name is looked for in it when first asked about, and the files that mention it
kept. One search of the joined bytes finds a name that no file holds in 2 ms for the jax
package's 616 files, where a search file by file cost three times that in calls (an index of
every identifier of every file cost 0.4 s, for the few names an analysis asks about). The
files that reach the module are found first, by its names (searched for the same way, once
per corpus) and their relative imports, and a name is then looked for in those files only: a
short name (`f`, `x`) that most files hold, searched for in the whole corpus, cost up to 70 ms
in that package (a module no file there names: eleven names in 1.3 ms). Once most files
are known to reach the module (a module of the jax package: nearly every file there names
`jax`), the other way round is cheaper: the name is searched for (as far as the first file
that reaches), not the module's own name, which only its importers hold and which cost a
search of the whole corpus (5 ms there) in each file's analysis.
"""

from __future__ import annotations

import bisect
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

MAX_FILES = 4000
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist"})
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")

# A file's stamp is checked again RECHECK_AFTER seconds later at the earliest: analyses in a
# row (a CLI run, typing in the editor) would otherwise stat every file of a large project
# each time. Who calls a helper is not a dependency the server re-analyses on anyway.
RECHECK_AFTER = 2.0
_stamps: dict[str, tuple[object, float]] = {}  # path -> (size and mtime, when last checked)
_files: dict[str, list[str]] = {}  # project directory -> its Python files (once per process)
_corpora: dict[str, _Corpus] = {}  # project directory -> its files' bytes


class Callers:
    """One analysis's view of the project: its files are checked (stat, read again if one
    changed) once, when the first name is asked about."""

    def __init__(self, path: str | None, root: str | None) -> None:
        self.here = os.path.abspath(path) if path and root else None
        self.root = root
        self._reach: _Reach | None = None
        self._answers: dict[str, bool] = {}  # a test class's methods all ask about the class

    def warm(self) -> None:
        """Read the project's files and find those that name the analysed module, as the first
        question about a name does (a process whose children analyse its files asks first)."""
        if self.here is not None and self.root is not None and self._reach is None:
            self._reach = _Reach(_corpus(_scope(self.here, self.root)), self.here, os.path.abspath(self.root))
            if self._reach.words is not None:
                self._reach._reaching(self._reach.words)

    def used_elsewhere(self, name: str) -> bool:
        """Does a project file other than the analysed one mention `name` as an identifier,
        and name the analysed module as an import would (the module's docstring)?"""
        if self.here is None or self.root is None:
            return False
        found = self._answers.get(name)
        if found is not None:
            return found
        if self._reach is None:
            self._reach = _Reach(_corpus(_scope(self.here, self.root)), self.here, os.path.abspath(self.root))
        wanted = name.encode()
        found = self._answers[name] = wanted.isascii() and self._reach.used(wanted)  # `_WORD` reads ASCII
        return found


class _Reach:
    """How other files can reach the analysed module: by `words`, its own name and its
    packages' (None: a file name no import spells), or by a relative import inside `tree`, its
    top-level package's directory (None: it is in none)."""

    def __init__(self, corpus: _Corpus, here: str, root: str) -> None:
        self.corpus, self.here, self.root = corpus, here, root
        words = _names(here, root)
        self.words = frozenset(words) if all(map(_is_identifier, words)) else None
        # each name's place on the module's dotted path (the top-level package first)
        self._order = {name: place for place, name in reversed(list(enumerate(words)))}
        parts = os.path.relpath(here, root).split(os.sep)
        self.tree = os.path.join(root, parts[0]) + os.sep if len(parts) > 1 and parts[0] != os.pardir else None
        self._reachers: set[int] | None = None  # the files other than the analysed one that reach it
        self._exporters: list[tuple[int, frozenset[bytes]]] | None = None  # packages' `__init__`s, their names
        self._name_first: bool | None = None  # None: not decided yet (`_reached_by_most`)

    def used(self, wanted: bytes) -> bool:
        """Does a file other than the analysed one reach the module and mention `wanted`? The
        files that reach it are found first (their names are longer, and the same for every
        name asked about): a short name (`f`, `x`) is then looked for in those files only."""
        corpus = self.corpus
        if self.words is None:
            return any(corpus.paths[index] != self.here for index in corpus.holders(wanted))
        if self._name_first is None:
            self._name_first = self._reached_by_most()
        if self._name_first:
            return self._held_by_a_reacher(wanted)
        if self._reachers is None:
            self._reachers = self._reaching(self.words)
            if self.tree is not None:  # a relative import in the top-level package
                self._reachers |= {index for index, path in enumerate(corpus.paths) if index not in self._reachers
                                   and path.startswith(self.tree) and corpus.imports(index, b".")}
            self._reachers -= {index for index, path in enumerate(corpus.paths) if path == self.here}
        reachers = self._reachers
        if self._mentioned(reachers, wanted):
            return True
        more = self._exported_names(wanted) - self.words
        if not more:
            return False
        more_reachers = self._reaching(more) - reachers
        more_reachers -= {index for index, path in enumerate(corpus.paths) if path == self.here}
        return self._mentioned(more_reachers, wanted)

    def _reached_by_most(self) -> bool:
        """Do most of the project's files mention a name of the module already searched for
        (`jax` for a module of the jax package: a sibling's analysis searched for it)? Then
        the files that reach it are nearly all, and finding them would search the whole
        corpus for its own name (`all_gather_mgpu`) to little end: a name asked about is
        searched for first, and the few files that hold it are asked whether they reach."""
        corpus, known = self.corpus, set()
        for word in self.words or ():
            search = corpus.found.get(word)
            if search is not None and search.at < 0:
                known.update(search.files)
        return len(known) * 2 > len(corpus.paths)

    def _held_by_a_reacher(self, wanted: bytes) -> bool:
        """`used`, from the files that hold `wanted`: does one of them reach the module, by its
        names or by those of the packages that re-export it?"""
        corpus, words = self.corpus, set(self.words or ())
        holders = []  # (searched for as far as the first that reaches)
        for index in corpus.holders(wanted):
            if corpus.paths[index] != self.here:
                if self._reaches(index, words):
                    return True
                holders.append(index)
        if not holders:
            return False
        grown = self._exported_names(wanted)
        return grown != words and any(self._reaches(index, grown) for index in holders)

    def _exported_names(self, wanted: bytes) -> set[bytes]:
        """The names that reach the module: its own, and to a fixed point those of each package
        whose `__init__` reaches it and mentions `wanted` (re-exports it) or star-imports, for
        files elsewhere (`from other_pkg import f`)."""
        corpus = self.corpus
        if self._exporters is None:
            self._exporters = [(index, frozenset(_names(corpus.paths[index], self.root)))
                               for index in corpus.inits() if corpus.paths[index] != self.here]
        grown, changed = set(self.words or ()), True
        while changed:
            changed = False
            for index, names in self._exporters:
                more = names - grown
                if more and self._reaches(index, grown) and (
                        corpus.mentions(index, wanted) or corpus.imports(index, b"*")):
                    grown |= more
                    changed = True
        return grown

    def _reaches(self, index: int, words: Iterable[bytes]) -> bool:
        """Can file `index` reach the module: does it mention one of `words`, or import
        relatively inside the module's top-level package?"""
        corpus = self.corpus
        return any(corpus.mentions(index, word) for word in words) or (
            self.tree is not None and corpus.paths[index].startswith(self.tree) and corpus.imports(index, b"."))

    def _reaching(self, words: Iterable[bytes]) -> set[int]:
        """The files that mention one of `words`, the top-level package's name first (a module
        of jax: nearly every file of the package names `jax`). Once few files are left, each
        other word is looked for in those files, not in the whole corpus (six searches of the
        jax package's 12 MB took 34 ms of the first analysis)."""
        corpus, count = self.corpus, len(self.corpus.paths)
        found: set[int] = set()
        order = self._order
        for word in sorted(words, key=lambda word: order.get(word, len(order))):  # (a re-exporting package's: last)
            if (count - len(found)) * FEW_LEFT < count:
                found.update(index for index in range(count) if index not in found and corpus.mentions(index, word))
            else:
                found.update(corpus.holders(word))
        return found

    def _mentioned(self, files: set[int], wanted: bytes) -> bool:
        search = self.corpus.found.get(wanted)
        if search is not None and search.at < 0:  # searched for already
            return not files.isdisjoint(search.files)
        return any(self.corpus.mentions(index, wanted) for index in sorted(files))


# Below this share of the project's files left unfound (a quarter), `_reaching` looks for a
# word file by file
FEW_LEFT = 4


def _names(path: str, root: str) -> list[bytes]:
    """The names an import of the file spells: the module's own (none for a package's
    `__init__`) and those of the directories between the project root and it."""
    parts = os.path.relpath(path, root).split(os.sep)
    if parts[0] == os.pardir:  # outside the project: its own name only
        parts = parts[-1:]
    stem = os.path.splitext(parts[-1])[0]
    return [name.encode() for name in parts[:-1] + ([] if stem == "__init__" else [stem])]


def _is_identifier(word: bytes) -> bool:
    return _WORD.fullmatch(word) is not None


@dataclass
class _Corpus:
    """The project's files' bytes joined by newlines (no identifier crosses one)."""

    paths: list[str]
    stamps: list[object]
    blob: bytes
    starts: list[int]  # where each file begins in `blob`
    found: dict[bytes, _Search] = field(default_factory=dict)  # name -> the files found mentioning it
    _mentions: dict[tuple[int, bytes], bool] = field(default_factory=dict)  # (file, name) -> whether it does
    _inits: frozenset[int] | None = None

    def holders(self, wanted: bytes) -> Iterator[int]:
        """The files that mention `wanted`, in order, searched for as they are asked for (a
        search stops at the first file that settles a question)."""
        search = self.found.get(wanted)
        if search is None:
            search = self.found[wanted] = _Search(wanted)
        at = 0
        while True:
            while at < len(search.files):
                yield search.files[at]
                at += 1
            if search.at < 0:
                return
            self._next(search)

    def mentions(self, index: int, wanted: bytes) -> bool:
        """Does file `index` mention `wanted` as an identifier?"""
        known = self._mentions.get((index, wanted))
        if known is None:
            blob, end = self.blob, self._end(index)
            at = blob.find(wanted, self.starts[index], end)
            while at >= 0 and not _identifier_at(blob, at, len(wanted)):
                at = blob.find(wanted, at + 1, end)
            known = self._mentions[index, wanted] = at >= 0
        return known

    def imports(self, index: int, what: bytes) -> bool:
        """Does file `index` hold `from .` (what `.`: a relative import) or `import *` (what
        `*`)? Anywhere a word may start, a comment's included: the answer errs to yes."""
        key = (index, b" " + what)
        known = self._mentions.get(key)
        if known is None:
            keyword = b"from" if what == b"." else b"import"
            blob, end = self.blob, self._end(index)
            at, known = blob.find(keyword, self.starts[index], end), False
            while at >= 0 and not known:
                after = at + len(keyword)
                gap = len(blob[after:after + 16]) - len(blob[after:after + 16].lstrip(b" \t"))  # `from.m` counts
                known = blob[after + gap:after + gap + 1] == what and (
                    at == 0 or blob[at - 1] not in _WORD_BYTES and blob[at - 1] != ord("."))
                at = blob.find(keyword, after, end)
            self._mentions[key] = known
        return known

    def inits(self) -> frozenset[int]:
        """The packages' `__init__.py` files."""
        if self._inits is None:
            self._inits = frozenset(
                index for index, path in enumerate(self.paths) if os.path.basename(path) == "__init__.py")
        return self._inits

    def _end(self, index: int) -> int:
        return self.starts[index + 1] - 1 if index + 1 < len(self.starts) else len(self.blob)

    def _next(self, search: _Search) -> None:
        """Find the next file that mentions `search.wanted`, or end the search."""
        blob, starts, wanted = self.blob, self.starts, search.wanted
        at = blob.find(wanted, search.at)
        while at >= 0 and not _identifier_at(blob, at, len(wanted)):
            at = blob.find(wanted, at + 1)
        if at < 0:
            search.at = -1
            return
        index = bisect.bisect_right(starts, at) - 1
        search.files.append(index)
        search.at = starts[index + 1] if index + 1 < len(starts) else -1  # the next file


@dataclass
class _Search:
    """A name's search of the corpus: the files found so far, and where it goes on (-1: done)."""

    wanted: bytes
    files: list[int] = field(default_factory=list)
    at: int = 0


def _corpus(directory: str) -> _Corpus:
    paths = _project_files(directory)
    stamps = [_stamp(path) for path in paths]
    kept = _corpora.get(directory)
    if kept is not None and kept.paths == paths and kept.stamps == stamps:
        return kept
    texts = [_read(path) for path in paths]
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + 1
    _corpora[directory] = made = _Corpus(paths, stamps, b"\n".join(texts), starts)
    return made


def _identifier_at(data: bytes, at: int, length: int) -> bool:
    """Is the match at `at` a whole identifier `_WORD` reads? Those start at a letter or `_`
    that no letter, digit or `_` of the same identifier comes before (digits alone begin none:
    `9foo` reads `foo`) and take every such character after."""
    end = at + length
    if end != len(data) and data[end] in _WORD_BYTES:
        return False
    start = at
    while start and data[start - 1] in _DIGITS:
        start -= 1
    return not start or data[start - 1] not in _WORD_BYTES


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_DIGITS = frozenset(b"0123456789")


def _scope(path: str, root: str) -> str:
    """The directory whose files make the project: an installed package is only itself."""
    root = os.path.abspath(root)
    if os.path.basename(root) in ("site-packages", "dist-packages"):
        relative = os.path.relpath(path, root)
        return os.path.join(root, relative.split(os.sep)[0])
    return root


def _project_files(directory: str) -> list[str]:
    found = _files.get(directory)
    if found is not None:
        return found
    found = []
    for current, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                   and not os.path.isfile(os.path.join(current, d, "pyvenv.cfg"))]
        found.extend(os.path.join(current, f) for f in files if f.endswith(".py"))
        if len(found) > MAX_FILES:
            break
    _files[directory] = found
    return found


def _stamp(path: str) -> object:
    """The file's size and modification time, as last checked (at most RECHECK_AFTER ago)."""
    now = time.monotonic()
    cached = _stamps.get(path)
    if cached is not None and now - cached[1] < RECHECK_AFTER:
        return cached[0]
    try:
        status = os.stat(path)
        stamp: object = (status.st_size, status.st_mtime_ns)
    except OSError:
        stamp = None
    _stamps[path] = (stamp, now)
    return stamp


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return b""
