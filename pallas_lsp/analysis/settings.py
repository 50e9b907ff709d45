"""`[tool.pallas-lint]` in `pyproject.toml`: which rules apply to which file.

The nearest `pyproject.toml` above a file that has a `[tool.pallas-lint]` table wins (as ruff
finds its configuration). Every frontend reads it through `settings_for()`; command-line options,
flake8's `--pallas-*` options and editor settings are layered on top with `Settings.merged()`.

```toml
[tool.pallas-lint]
select = ["PLS"]                 # code prefixes
ignore = ["PLS002"]
exclude = ["generated/*"]        # replaces the default excludes
extend-exclude = ["third_party"]
per-file-ignores = { "tests/*" = ["PLS001"] }
analysis-budget = 10             # seconds per file; past it the file gets no findings
```
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Iterable, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "pallas-lint"

# Directories a tree walk never enters (ruff's list, trimmed to what applies to Python).
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pallas_lint_cache", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "site-packages", "venv",
)


class ConfigError(ValueError):
    """An invalid `[tool.pallas-lint]` table; the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("PLS",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    budget: float = 10.0  # seconds of analysis per file
    root: str | None = None  # the directory patterns are relative to
    source: str | None = None  # the pyproject.toml these came from

    def merged(self, **overrides: Any) -> Settings:
        """These settings with every override that is not None."""
        return dataclasses.replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def ignored_for(self, path: str | None) -> tuple[str, ...]:
        """`ignore` plus the per-file ignores whose pattern matches `path`."""
        if not path:
            return self.ignore
        extra = tuple(code for pattern, codes in self.per_file_ignores
                      if self._matches(pattern, path) for code in codes)
        return self.ignore + extra

    def is_excluded(self, path: str, *, parents: bool = True) -> bool:
        """Does an exclude pattern match the path, its name, or (with `parents`) one of its
        directories? A tree walk, which prunes excluded directories as it goes, asks without."""
        candidates = self._candidates(path, parents)
        return any(_pattern(pattern).match(candidate)
                   for pattern in self.exclude + self.extend_exclude for candidate in candidates)

    def _matches(self, pattern: str, path: str, parents: bool = True) -> bool:
        return any(_pattern(pattern).match(candidate) for candidate in self._candidates(path, parents))

    def _candidates(self, path: str, parents: bool) -> list[str]:
        """The path relative to `root` (posix), its name, and (with `parents`) its directories;
        string work only, as a tree walk asks this for every entry."""
        relative = os.path.abspath(path)
        if self.root:
            root = os.path.join(os.path.abspath(self.root), "")
            if relative.startswith(root):
                relative = relative[len(root):]
        parts = PurePath(relative).parts
        found = [PurePath(relative).as_posix(), parts[-1] if parts else relative]
        return found + list(parts[:-1]) if parents else found


@functools.lru_cache(maxsize=512)
def _pattern(pattern: str) -> re.Pattern:
    return re.compile(fnmatch.translate(pattern))


def find_pyproject(start: str) -> Path | None:
    """The nearest `pyproject.toml` at or above `start` (a file or a directory) that has a
    `[tool.pallas-lint]` table."""
    directory = Path(os.path.abspath(start))
    if not directory.is_dir():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _has_section(pyproject):
            return pyproject
    return None


def settings_for(path: str | None, base: Settings | None = None) -> Settings:
    """The settings that apply to `path`: its pyproject's table over `base` (or the defaults).

    Raises ConfigError for a table that cannot be used.
    """
    base = base or Settings()
    pyproject = find_pyproject(path) if path else None
    if pyproject is None:
        return base
    return load(pyproject, base)


def load(pyproject: Path, base: Settings | None = None) -> Settings:
    table = _table(pyproject)
    return parse(table, base or Settings(), source=str(pyproject), root=str(pyproject.parent))


def parse(table: Mapping[str, Any], base: Settings, *, source: str, root: str) -> Settings:
    """Settings from a `[tool.pallas-lint]` table (keys as in TOML, with dashes)."""
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} in [tool.{SECTION}]")
    values = {_KEYS[key]: _convert(key, value, source) for key, value in table.items()}
    return dataclasses.replace(base, **values, source=source, root=root)


def _codes(key: str, value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{source}: {key} must be a list of strings")
    return tuple(value)


def _per_file(key: str, value: Any, source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: {key} must be a table of pattern = [codes]")
    return tuple((pattern, _codes(f"{key}.{pattern!r}", codes, source)) for pattern, codes in value.items())


def _seconds(key: str, value: Any, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{source}: {key} must be a positive number of seconds")
    return float(value)


_KEYS = {
    "select": "select", "ignore": "ignore", "exclude": "exclude",
    "extend-exclude": "extend_exclude", "per-file-ignores": "per_file_ignores",
    "analysis-budget": "budget",
}
_CONVERTERS = {"per-file-ignores": _per_file, "analysis-budget": _seconds}


def _convert(key: str, value: Any, source: str) -> Any:
    return _CONVERTERS.get(key, _codes)(key, value, source)


# pyproject files are read once per modification time: a tree walk asks for every file.
_cache: dict[Path, tuple[float, dict]] = {}
_cache_lock = threading.Lock()


def _document(pyproject: Path) -> dict:
    try:
        mtime = pyproject.stat().st_mtime
    except OSError:
        return {}
    with _cache_lock:
        cached = _cache.get(pyproject)
        if cached and cached[0] == mtime:
            return cached[1]
    try:
        with pyproject.open("rb") as file:
            document = tomllib.load(file)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        document = {"__error__": str(error)}
    with _cache_lock:
        _cache[pyproject] = (mtime, document)
    return document


def _has_section(pyproject: Path) -> bool:
    document = _document(pyproject)
    return "__error__" in document or SECTION in document.get("tool", {})


def _table(pyproject: Path) -> dict:
    document = _document(pyproject)
    if "__error__" in document:
        raise ConfigError(f"{pyproject}: cannot read: {document['__error__']}")
    table = document.get("tool", {}).get(SECTION, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.{SECTION}] must be a table")
    return table


def codes(values: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """Codes from a comma-separated option or a list; None when not given."""
    if values is None:
        return None
    if isinstance(values, str):
        values = values.split(",")
    return tuple(code.strip().upper() for code in values if code.strip())
