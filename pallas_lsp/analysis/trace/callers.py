"""Who else in the project uses a name: a helper is judged by its callers.

A function nobody in the analysed file calls is an entry point, and its parameters are inputs
(`Free`) -- unless another module of the project uses it: then its callers decide what it
receives, their own analyses follow it with their arguments, and here its parameters are
simply unknown. The project's files are read once per process into one `_Corpus` (their
bytes joined), read again when a file's size or modification time changes (checked at most
every RECHECK_AFTER seconds); a name is looked for in it when first asked about, and the
files that mention it kept. One search of the joined bytes finds a name that no file holds
in 2 ms for the jax package's 616 files, where a search file by file cost three times that in
calls (an index of every identifier of every file cost 0.4 s, for the few names an analysis
asks about).
"""

from __future__ import annotations

import bisect
import os
import re
import time
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
        self._corpus: _Corpus | None = None
        self._answers: dict[str, bool] = {}  # a test class's methods all ask about the class

    def used_elsewhere(self, name: str) -> bool:
        """Does a project file other than the analysed one mention `name` as an identifier?"""
        if self.here is None or self.root is None:
            return False
        found = self._answers.get(name)
        if found is not None:
            return found
        if self._corpus is None:
            self._corpus = _corpus(_scope(self.here, self.root))
        wanted = name.encode()
        corpus = self._corpus
        found = self._answers[name] = wanted.isascii() and any(  # identifiers `_WORD` reads are ASCII
            corpus.paths[index] != self.here for index in corpus.holders(wanted))
        return found


@dataclass
class _Corpus:
    """The project's files' bytes joined by newlines (no identifier crosses one)."""

    paths: list[str]
    stamps: list[object]
    blob: bytes
    starts: list[int]  # where each file begins in `blob`
    found: dict[bytes, tuple[int, ...]] = field(default_factory=dict)  # name -> the first files mentioning it

    def holders(self, wanted: bytes) -> tuple[int, ...]:
        """The first two files that mention `wanted`: enough to tell whether a file other than
        any one file does."""
        known = self.found.get(wanted)
        if known is None:
            known = self.found[wanted] = tuple(self._search(wanted))
        return known

    def _search(self, wanted: bytes) -> list[int]:
        blob, starts, found = self.blob, self.starts, []
        at = blob.find(wanted)
        while at >= 0:
            if _identifier_at(blob, at, len(wanted)):
                index = bisect.bisect_right(starts, at) - 1
                found.append(index)
                if len(found) == 2 or index + 1 == len(starts):
                    break
                at = blob.find(wanted, starts[index + 1])  # the next file
            else:
                at = blob.find(wanted, at + 1)
        return found


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
