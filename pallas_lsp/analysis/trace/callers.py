"""Who else in the project uses a name: a helper is judged by its callers.

A function nobody in the analysed file calls is an entry point, and its parameters are inputs
(`Free`) -- unless another module of the project uses it: then its callers decide what it
receives, their own analyses follow it with their arguments, and here its parameters are
simply unknown. The index is the identifiers of each project file, read once per process and
kept while the file's size and modification time are unchanged (checked again at most every
RECHECK_AFTER seconds).
"""

from __future__ import annotations

import os
import re
import time

MAX_FILES = 4000
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist"})
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")

# path -> (stamp, identifiers, when the stamp was last checked). A file is checked again
# RECHECK_AFTER seconds later at the earliest: analyses in a row (a CLI run, typing in the
# editor) would otherwise stat every file of a large project each time. Who calls a helper
# is not a dependency the server re-analyses on anyway.
_words: dict[str, tuple[tuple[int, int], frozenset[bytes], float]] = {}
RECHECK_AFTER = 2.0
_files: dict[str, list[str]] = {}  # project directory -> its Python files (once per process)


class Callers:
    """One analysis's view of the index: each project file is checked (stat, read if it
    changed) once, when the first name is asked about."""

    def __init__(self, path: str | None, root: str | None) -> None:
        self.here = os.path.abspath(path) if path and root else None
        self.root = root
        self._others: list[frozenset[bytes]] | None = None
        self._answers: dict[str, bool] = {}  # a test class's methods all ask about the class

    def used_elsewhere(self, name: str) -> bool:
        """Does a project file other than the analysed one mention `name` as an identifier?"""
        if self.here is None or self.root is None:
            return False
        found = self._answers.get(name)
        if found is not None:
            return found
        if self._others is None:
            self._others = [_identifiers(other) for other in _project_files(_scope(self.here, self.root))
                            if other != self.here]
        wanted = name.encode()
        found = self._answers[name] = any(wanted in words for words in self._others)
        return found


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


def _identifiers(path: str) -> frozenset[bytes]:
    cached = _words.get(path)
    now = time.monotonic()
    if cached is not None and now - cached[2] < RECHECK_AFTER:
        return cached[1]
    try:
        status = os.stat(path)
    except OSError:
        return frozenset()
    stamp = (status.st_size, status.st_mtime_ns)
    if cached is not None and cached[0] == stamp:
        _words[path] = (stamp, cached[1], now)
        return cached[1]
    try:
        with open(path, "rb") as file:
            words = frozenset(_WORD.findall(file.read()))
    except OSError:
        words = frozenset()
    _words[path] = (stamp, words, now)
    return words
