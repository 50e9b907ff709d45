"""The result cache of `pallas-lint` and of the flake8 plugin: a file analysed before,
unchanged, with unchanged settings and unchanged project modules it imports, is not analysed
again (as ruff's `.ruff_cache`).

Entries are JSON, never pickle: a cache directory inside a repository is not trusted to run
code. An entry is keyed by the interpreter's version, the file's path, content, the settings that
apply to it and the pallas-lsp version and code (the size and modification time of its modules: an
editable install whose code changed misses); it records the size and modification time of every project module the
analysis read, and is used only while they are unchanged. A file the prefilter settles (no
trigger word in it or in the project modules it imports) has an entry too, whose dependencies
are every path the prefilter looked at, there or not. Files of one project depend on much the
same modules (each on those its imports run, often most of the project): the stamps are kept
once, in chunks of about `CHUNK_PATHS` paths named by their content (`DEPENDENCIES`), which an
entry names; a chunk checked is not checked again for `CHUNK_RECHECK_S` seconds. `Index` finds a file's entry from its
size and modification time, without reading the file, and holds a copy of the entry: an
unchanged tree is one read of the index (as ruff's cache keeps a package's entries in one file).

The frontends share the directory, the keys, the entries and their dependency checks; an entry
is of one `kind`, part of its key, as each frontend records what it reports: `pallas-lint`
(`CHECK`) the findings `# noqa` leaves and its PLS100, the flake8 plugin (`FLAKE8`) every
finding of the analysis, as flake8 applies `# noqa` itself. Writes are atomic (a temporary file
renamed), so processes writing at once (`-j`) never leave a torn entry; an entry that cannot be
read back whole is a miss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import sys
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pallas_lsp import __version__
from pallas_lsp.analysis import Applicability, Edit, Finding, Fix, Related, Settings, Severity, Span, imported_data

DIRECTORY = ".pallas_lint_cache"

# What an entry records (see above).
CHECK = "check"
FLAKE8 = "flake8"

# The chunks of stamps entries name (see above)
DEPENDENCIES = "dependencies"
CHUNK_PATHS = 32
CHUNK_RECHECK_S = 1.0

# A file modified within this many seconds is not trusted to have its final stamp (git's "racy"
# entries: a second write in the same tick of a coarse clock keeps both size and time).
RECENT = 2.0

# Python 3.12 parses what 3.11 calls a syntax error (PEP 695, PEP 701): an entry is the
# verdict of one interpreter.
INTERPRETER = f"{sys.implementation.name} {sys.version}"


def environment() -> str:
    """The interpreter, the installed jax whose kernel building blocks
    (`jax.experimental.pallas.ops`) the analysis reads from source when a kernel hands them its
    refs (`installed_jax`), and our own code as it is (`installed_code`)."""
    return f"{INTERPRETER} jax {installed_jax()} code {installed_code()}"


@functools.lru_cache(maxsize=1)
def installed_code() -> str:
    """A digest of the size and modification time of every module of pallas-lsp and of its
    flake8 plugin: an editable install whose code changed (a contributor's checkout) must not
    serve what the old code found, and the version alone does not change with the code."""
    digest = hashlib.sha256()
    for package in ("pallas_lsp", "flake8_pallas"):
        spec = importlib.util.find_spec(package)
        for location in sorted(spec.submodule_search_locations or ()) if spec is not None else ():
            for root, directories, files in os.walk(location):
                directories[:] = sorted(d for d in directories if d != "__pycache__")
                for name in sorted(f for f in files if f.endswith(".py")):
                    digest.update(f"{os.path.relpath(os.path.join(root, name), location)} "
                                  f"{_stamp(os.path.join(root, name))}\0".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def installed_jax() -> str:
    """Where jax is installed and its `version.py` as it is (size and modification time:
    installing another jax writes it anew); found without importing jax, once per process."""
    try:
        spec = importlib.util.find_spec("jax")
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return repr([[location, _stamp(os.path.join(location, "version.py"))] for location in locations])


def directory_for(settings: Settings, override: str | None = None) -> Path:
    """Beside the pyproject.toml that configures the file, else in the working directory."""
    if override:
        return Path(override)
    return Path(settings.root or os.getcwd()) / DIRECTORY


def key(path: str, data: bytes, settings: Settings, kind: str = CHECK) -> str:
    """Everything that can change a verdict, but the project modules the analysis reads
    (their size and modification time are checked on load): the interpreter (its parser
    decides what a syntax error is) and jax (`environment`), the pallas-lsp version, what the
    entry records (`kind`),
    the settings that apply, the file's path and content."""
    chosen = (settings.select, settings.ignored_for(path), settings.budget)
    digest = hashlib.sha256()
    for part in (environment(), __version__, kind, os.path.abspath(path), repr(chosen)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(data)
    return digest.hexdigest()


def load(directory: Path, entry: str) -> dict | None:
    """The cached report, or None (missing, unreadable, not whole, or a dependency has changed)."""
    try:
        return current(json.loads((directory / __version__ / entry[:2] / f"{entry}.json").read_text("utf-8")),
                       directory)
    except (OSError, ValueError):
        return None


def current(record: Any, directory: Path) -> dict | None:
    """The record (of the cache in `directory`), while every project module it depends on is
    as it was (else None); a record that is not whole (a findings list that does not read
    back, no error or count, a chunk of stamps missing) is None too."""
    try:
        if not all(type(chunk) is str and _chunk_current(directory, chunk) for chunk in record["dependencies"]):
            return None
        findings(record)
        if not (record["error"] is None or isinstance(record["error"], str)) or type(record["silenced"]) is not int:
            return None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return record


def cacheable(error: str | None) -> bool:
    """Whether a verdict is the file's own and may be kept: findings, or a reason that the
    next run would give again (a syntax error, bytes that do not decode), not a budget hit
    or an internal error."""
    return error is None or error.startswith(("syntax error", "cannot decode"))


def dependencies(path: str, data: bytes, analysed: Iterable[str], probed: Iterable[str]) -> tuple[str, ...]:
    """What the verdict on the file at `path` (its bytes `data`) depends on besides itself:
    the project modules the analysis read (`analysed`), the paths the byte prefilter looked at
    (`probed`), and every path the prefilter's walk of its project imports looks at, there or
    not (the analysis asks that walk too, before astroid: a helper module given a trigger word
    may let a rule through). The walk is kept per file by the prefilter, so asking it again
    costs a check of its stamps. (A file the prefilter settles depends on what it probed
    alone: every path its verdict read is there.)"""
    walked: set[str] = set()
    imported_data(data, path, probed=walked)
    return tuple(sorted({*analysed, *probed, *walked}))


def store(directory: Path, entry: str, findings: list[Finding], error: str | None, silenced: int,
          dependencies: tuple[str, ...], started: float | None = None) -> dict | None:
    """Write an entry (a cache that cannot be written is simply not used); the record written,
    None when it is not to be kept: `started` is when the file was first read for this
    verdict, and a dependency modified after that, or within `RECENT` seconds before it, may
    have been read before its last change, which its stamp now shows (not kept: a miss next
    time, never a stale verdict)."""
    stamps = {path: _stamp(path) for path in dependencies}
    if started is not None:
        limit = (started - RECENT) * 1e9
        if any(stamp is not None and stamp[1] > limit for stamp in stamps.values()):
            return None
    try:
        _prepare(directory)
        chunks = _store_chunks(directory, stamps)
        record = {
            "findings": [dataclasses.asdict(finding) for finding in findings],
            "error": error,
            "silenced": silenced,
            "dependencies": chunks,
        }
        target = directory / __version__ / entry[:2] / f"{entry}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(target, json.dumps(record, default=_enum_value))
    except OSError:
        return None  # (an entry whose chunks are not all written would be a miss anyway)
    return record


def _store_chunks(directory: Path, stamps: dict[str, list[int] | None]) -> list[str]:
    """The names of the chunks that hold `stamps`, each written unless it is there (named by its
    content: one written is never rewritten with other stamps). The sorted paths are cut after
    each path whose hash is a multiple of `CHUNK_PATHS` (content-defined chunking): two files'
    lists that differ by a few paths share every chunk but those around them."""
    chunks: list[list] = [[]]
    for path in sorted(stamps):
        chunks[-1].append([path, stamps[path]])
        if zlib.crc32(path.encode("utf-8", "surrogatepass")) % CHUNK_PATHS == 0:
            chunks.append([])
    names = []
    for rows in filter(None, chunks):
        text = json.dumps(rows)
        name = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        target = _chunk_path(directory, name)
        if (str(directory), name) not in _written and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(target, text)
        _written.add((str(directory), name))
        names.append(name)
    return names


def _chunk_path(directory: Path, name: str) -> Path:
    return directory / __version__ / DEPENDENCIES / name[:2] / f"{name}.json"


def forget_checks() -> None:
    """Check every chunk again, and whether it is there (a run starts: `--watch`, `--fix`
    rounds; the cache may have been removed since)."""
    _checked.clear()
    _written.clear()


def _chunk_current(directory: Path, name: str) -> bool:
    """Is every stamp of the chunk as it is now (checked at most every `CHUNK_RECHECK_S`)?"""
    key = (str(directory), name)
    now = time.monotonic()
    checked = _checked.get(key)
    if checked is not None and now - checked[0] < CHUNK_RECHECK_S:
        return checked[1]
    try:
        rows = json.loads(_chunk_path(directory, name).read_text("utf-8"))
        same = all(_stamp(path) == stamp for path, stamp in rows)
    except (OSError, ValueError, TypeError):
        same = False
    if len(_checked) >= MAX_CHUNKS_CHECKED:
        _checked.clear()
    _checked[key] = (now, same)
    return same


# (cache directory, chunk) -> (when it was checked, whether its stamps were all current)
_checked: dict[tuple[str, str], tuple[float, bool]] = {}
MAX_CHUNKS_CHECKED = 65536
# the chunks this process wrote or found written: (cache directory, chunk)
_written: set[tuple[str, str]] = set()


class Index:
    """One file per cache directory, read once per run and written once at its end: for each
    file (under the settings that apply to it), the size and modification time it had when its
    entry was stored, that entry's key and the entry itself. A file whose size and
    modification time are unchanged is then neither read nor hashed, nor is its entry (as
    ruff's cache, which trusts them too, and keeps a package's entries in one file); any other
    file is looked up by its content as before. A modification time within the last
    `RECENT` seconds is not trusted (git's "racy" entries: a second write in the same tick of a
    coarse clock keeps both), nor is an index written by another interpreter, jax or version. Two runs
    writing at once lose some of each other's rows: a lookup by content then, never a wrong
    verdict."""


    def __init__(self, directory: Path) -> None:
        self.file = directory / __version__ / "index.json"
        self.rows: dict[str, list] = {}
        self.changed = False
        try:
            document = json.loads(self.file.read_text("utf-8"))
            if document.get("interpreter") == environment() and isinstance(document.get("rows"), dict):
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
        if stamp is None or stamp[1] / 1e9 > time.time() - RECENT:
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
            document = {"interpreter": environment(), "rows": self.rows}
            _write_atomically(self.file, json.dumps(document, default=_enum_value))
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
    _write_atomically(directory / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")
    _write_atomically(directory / ".gitignore", "# Automatically created by pallas-lint.\n*\n")


def _write_atomically(target: Path, text: str) -> None:
    """Write `target` whole or not at all: processes writing the same file at once (flake8's
    and `pallas-lint`'s `-j`) each write their own temporary file and rename it."""
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, "utf-8")
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


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
