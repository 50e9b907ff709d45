"""The command line's result cache: a file analysed before, unchanged, with unchanged settings
and unchanged project modules it imports, is not analysed again (as ruff's `.ruff_cache`).

Entries are JSON, never pickle: a cache directory inside a repository is not trusted to run
code. An entry is keyed by the interpreter's version, the file's path, content, the settings that
apply to it and the pallas-lsp version; it records the size and modification time of every project module the
analysis read, and is used only while they are unchanged. A file the prefilter settles (no
trigger word in it or in the project modules it imports) has an entry too, whose dependencies
are every path the prefilter looked at, there or not. `Index` finds a file's entry from its
size and modification time, without reading the file, and holds a copy of the entry: an
unchanged tree is one read of the index (as ruff's cache keeps a package's entries in one file).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from pallas_lsp import __version__
from pallas_lsp.analysis import Applicability, Edit, Finding, Fix, Related, Settings, Severity, Span

DIRECTORY = ".pallas_lint_cache"

# Python 3.12 parses what 3.11 calls a syntax error (PEP 695, PEP 701): an entry is the
# verdict of one interpreter.
INTERPRETER = f"{sys.implementation.name} {sys.version}"


def directory_for(settings: Settings, override: str | None = None) -> Path:
    """Beside the pyproject.toml that configures the file, else in the working directory."""
    if override:
        return Path(override)
    return Path(settings.root or os.getcwd()) / DIRECTORY


def key(path: str, data: bytes, settings: Settings) -> str:
    """Everything that can change a verdict, but the project modules the analysis reads
    (their size and modification time are checked on load): the interpreter (its parser
    decides what a syntax error is), the pallas-lsp version, the settings that apply, the
    file's path and content."""
    chosen = (settings.select, settings.ignored_for(path), settings.budget)
    digest = hashlib.sha256()
    for part in (INTERPRETER, __version__, os.path.abspath(path), repr(chosen)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(data)
    return digest.hexdigest()


def load(directory: Path, entry: str) -> dict | None:
    """The cached report, or None (missing, unreadable, or a dependency has changed)."""
    try:
        return current(json.loads((directory / __version__ / entry[:2] / f"{entry}.json").read_text("utf-8")))
    except (OSError, ValueError):
        return None


def current(record: Any) -> dict | None:
    """The record, while every project module it depends on is as it was (else None)."""
    try:
        if all(_stamp(path) == stamp for path, stamp in record["dependencies"]):
            return record
    except (KeyError, TypeError, ValueError):
        pass
    return None


def store(directory: Path, entry: str, findings: list[Finding], error: str | None, silenced: int,
          dependencies: tuple[str, ...]) -> dict:
    """Write an entry (a cache that cannot be written is simply not used); the record written."""
    record = {
        "findings": [dataclasses.asdict(finding) for finding in findings],
        "error": error,
        "silenced": silenced,
        "dependencies": [[path, _stamp(path)] for path in dependencies],
    }
    target = directory / __version__ / entry[:2] / f"{entry}.json"
    try:
        _prepare(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record, default=_enum_value), "utf-8")
        os.replace(temporary, target)
    except OSError:
        pass
    return record


class Index:
    """One file per cache directory, read once per run and written once at its end: for each
    file (under the settings that apply to it), the size and modification time it had when its
    entry was stored, that entry's key and the entry itself. A file whose size and
    modification time are unchanged is then neither read nor hashed, nor is its entry (as
    ruff's cache, which trusts them too, and keeps a package's entries in one file); any other
    file is looked up by its content as before. A modification time within the last
    `RECENT` seconds is not trusted (git's "racy" entries: a second write in the same tick of a
    coarse clock keeps both), nor is an index written by another interpreter or version. Two runs
    writing at once lose some of each other's rows: a lookup by content then, never a wrong
    verdict."""

    RECENT = 2.0

    def __init__(self, directory: Path) -> None:
        self.file = directory / __version__ / "index.json"
        self.rows: dict[str, list] = {}
        self.changed = False
        try:
            document = json.loads(self.file.read_text("utf-8"))
            if document.get("interpreter") == INTERPRETER and isinstance(document.get("rows"), dict):
                self.rows = document["rows"]
        except (OSError, ValueError, AttributeError):
            pass

    def get(self, path: str, stamp: list[int] | None, settings: Settings) -> tuple[str, dict | None] | None:
        """The entry key recorded for `path` in this state (`stamp`, taken before reading it),
        and the entry if the row holds it."""
        row = self.rows.get(self._row(path, settings))
        if stamp is None or not isinstance(row, list) or len(row) not in (2, 3) or row[0] != stamp:
            return None
        if not isinstance(row[1], str):
            return None
        return row[1], row[2] if len(row) == 3 and isinstance(row[2], dict) else None

    def put(self, path: str, stamp: list[int] | None, settings: Settings, entry: str, record: dict) -> None:
        if stamp is None or stamp[1] / 1e9 > time.time() - self.RECENT:
            return
        row = self._row(path, settings)
        if self.rows.get(row) != [stamp, entry, record]:
            self.rows[row] = [stamp, entry, record]
            self.changed = True

    def save(self) -> None:
        """Write the index if it changed (atomically); an index that cannot be written is not used."""
        if not self.changed:
            return
        try:
            _prepare(self.file.parent.parent)
            self.file.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.file.with_suffix(f".{os.getpid()}.tmp")
            document = {"interpreter": INTERPRETER, "rows": self.rows}
            temporary.write_text(json.dumps(document, default=_enum_value), "utf-8")
            os.replace(temporary, self.file)
            self.changed = False
        except OSError:
            pass

    @staticmethod
    def _row(path: str, settings: Settings) -> str:
        chosen = (os.path.abspath(path), settings.select, settings.ignored_for(path), settings.budget)
        return hashlib.sha256(repr(chosen).encode("utf-8", "surrogatepass")).hexdigest()


def stamp(path: str) -> list[int] | None:
    """A file's size and modification time (None: it does not exist)."""
    return _stamp(path)


def findings(record: dict) -> list[Finding]:
    return [_finding(item) for item in record["findings"]]


def _prepare(directory: Path) -> None:
    """Mark the directory as a cache: git ignores it, backup tools may skip it."""
    if (directory / ".gitignore").exists():
        return
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ".gitignore").write_text("# Automatically created by pallas-lint.\n*\n", "utf-8")
    (directory / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n", "utf-8")


def _stamp(path: str) -> list[int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns]


def _enum_value(value: Any) -> Any:
    if isinstance(value, (Applicability, Severity)):
        return value.value
    raise TypeError(f"cannot cache {type(value).__name__}")


def _span(data: dict) -> Span:
    return Span(**data)


def _finding(data: dict) -> Finding:
    return Finding(
        code=data["code"],
        message=data["message"],
        span=_span(data["span"]),
        severity=Severity(data["severity"]),
        related=tuple(Related(_span(item["span"]), item["message"]) for item in data["related"]),
        fixes=tuple(
            Fix(fix["title"], Applicability(fix["applicability"]),
                tuple(Edit(_span(edit["span"]), edit["new_text"]) for edit in fix["edits"]), fix["preferred"])
            for fix in data["fixes"]
        ),
        anchor=_span(data["anchor"]) if data.get("anchor") else None,
    )
