"""Who else in the project uses a name: a helper is judged by its callers.

A function nobody in the analysed file calls is an entry point, and its parameters are inputs
(`Free`) -- unless another module of the project uses it: then its callers decide what it
receives, their own analyses follow it with their arguments, and here its parameters are
simply unknown. Each project file's bytes are read once per process and kept while its size
and modification time are unchanged (checked again at most every RECHECK_AFTER seconds); a
name is looked for in them when first asked about, and the answer kept with the file. (An
index of every identifier of every file cost 0.4 s for the jax package's 616 files, where an
analysis asks about a few names: a search of all of them for one name takes 4 ms.)
"""

from __future__ import annotations

import os
import re
import time

MAX_FILES = 4000
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist"})
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")

# path -> (stamp, bytes, when the stamp was last checked, what was found in it by name). A file
# is checked again RECHECK_AFTER seconds later at the earliest: analyses in a row (a CLI run,
# typing in the editor) would otherwise stat every file of a large project each time. Who calls
# a helper is not a dependency the server re-analyses on anyway.
_texts: dict[str, tuple[tuple[int, int], bytes, float, dict[bytes, bool]]] = {}
RECHECK_AFTER = 2.0
_files: dict[str, list[str]] = {}  # project directory -> its Python files (once per process)


class Callers:
    """One analysis's view of the project: each project file is checked (stat, read if it
    changed) once, when the first name is asked about."""

    def __init__(self, path: str | None, root: str | None) -> None:
        self.here = os.path.abspath(path) if path and root else None
        self.root = root
        self._others: list[tuple[bytes, dict[bytes, bool]]] | None = None
        self._answers: dict[str, bool] = {}  # a test class's methods all ask about the class

    def used_elsewhere(self, name: str) -> bool:
        """Does a project file other than the analysed one mention `name` as an identifier?"""
        if self.here is None or self.root is None:
            return False
        found = self._answers.get(name)
        if found is not None:
            return found
        if self._others is None:
            self._others = [_text(other) for other in _project_files(_scope(self.here, self.root))
                            if other != self.here]
        wanted = name.encode()
        found = self._answers[name] = wanted.isascii() and any(  # identifiers `_WORD` reads are ASCII
            _mentions(data, answers, wanted) for data, answers in self._others)
        return found


def _mentions(data: bytes, answers: dict[bytes, bool], wanted: bytes) -> bool:
    """`has_identifier`, its answer kept with the file's text."""
    known = answers.get(wanted)
    if known is None:
        known = answers[wanted] = has_identifier(data, wanted)
    return known


def has_identifier(data: bytes, wanted: bytes) -> bool:
    """Is `wanted` (an ASCII identifier) one of the identifiers `_WORD.findall(data)` reads?
    Those start at a letter or `_` that no letter, digit or `_` of the same identifier comes
    before (digits alone begin none: `9foo` reads `foo`) and take every such character after."""
    at = data.find(wanted)
    while at >= 0:
        end = at + len(wanted)
        if end == len(data) or data[end] not in _WORD_BYTES:
            start = at
            while start and data[start - 1] in _DIGITS:
                start -= 1
            if not start or data[start - 1] not in _WORD_BYTES:
                return True
        at = data.find(wanted, at + 1)
    return False


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


def _text(path: str) -> tuple[bytes, dict[bytes, bool]]:
    """The file's bytes and what was found in them, read again when its stamp changed."""
    cached = _texts.get(path)
    now = time.monotonic()
    if cached is not None and now - cached[2] < RECHECK_AFTER:
        return cached[1], cached[3]
    try:
        status = os.stat(path)
    except OSError:
        return b"", {}
    stamp = (status.st_size, status.st_mtime_ns)
    if cached is not None and cached[0] == stamp:
        _texts[path] = (stamp, cached[1], now, cached[3])
        return cached[1], cached[3]
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        data = b""
    _texts[path] = (stamp, data, now, {})
    return data, _texts[path][3]
