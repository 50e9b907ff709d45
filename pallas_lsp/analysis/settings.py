"""`[tool.pallas-lint]` in `pyproject.toml`: which rules apply to which file.

The nearest `pyproject.toml` above a file that has a `[tool.pallas-lint]` table wins (as ruff
finds its configuration). Every frontend reads it through `config.py`, which wraps
`settings_for()`; command-line options,
flake8's `--pallas-*` options and editor settings are layered on top with `Settings.merged()`.

```toml
[tool.pallas-lint]
select = ["PLS"]                 # code prefixes
ignore = ["PLS002"]
exclude = ["generated/*"]        # replaces the default excludes
extend-exclude = ["third_party"]
per-file-ignores = { "tests/*" = ["PLS001"] }
respect-gitignore = true         # a directory walk skips what .gitignore ignores
analysis-budget = 10             # CPU seconds per file; past it the file gets PLS000
```

This module checks the table's shape and types. The codes in it are checked against the rule
registry one floor up, in `config.py` (the loader the frontends use): an unknown selector is a
ConfigError naming it and the nearest real code. `ALL` selects (or ignores) every code. Globs
follow ruff's semantics (`globs.py`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from .globs import AnyMatcher, GlobError, Matcher, check as check_glob


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
    budget: float = 10.0  # CPU seconds of analysis per file
    respect_gitignore: bool = True
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
                      if self._per_file_matches(pattern, path) for code in codes)
        return self.ignore + extra

    def enables(self, code: str, path: str | None = None) -> bool:
        """Is `code` reported for `path`? (For the codes the frontends produce: PLS000, PLS100.)"""
        selected = prefixes(self.select)
        ignored = prefixes(self.ignored_for(path))
        return code.startswith(selected) and not (ignored and code.startswith(ignored))

    def is_excluded(self, path: str, *, parents: bool = True) -> bool:
        """Does an exclude pattern match the path (absolute, or its name) or, with `parents`,
        one of its directories below the root? A tree walk, which prunes excluded directories
        as it goes, asks without."""
        path = os.path.abspath(path)
        root = os.path.abspath(self.root or os.getcwd())
        candidates = [path]
        if parents:  # the directories below the root (all of them for a path outside it)
            inside = path.startswith(os.path.join(root, ""))
            directory = os.path.dirname(path)
            while directory != root and (not inside or directory.startswith(os.path.join(root, ""))):
                candidates.append(directory)
                parent = os.path.dirname(directory)
                if parent == directory:
                    break
                directory = parent
        matcher = AnyMatcher.of(self.exclude + self.extend_exclude, root)
        return any(matcher.matches(candidate) for candidate in candidates)

    def _per_file_matches(self, pattern: str, path: str) -> bool:
        negated = pattern.startswith("!")
        matcher = Matcher.of(pattern[1:] if negated else pattern, os.path.abspath(self.root or os.getcwd()))
        return matcher.matches(os.path.abspath(path)) != negated


def prefixes(selectors: Iterable[str]) -> tuple[str, ...]:
    """Selectors as code prefixes: `ALL` is the prefix of every code."""
    return tuple("" if selector == "ALL" else selector for selector in selectors)


def validate_codes(values: Iterable[str], where: str, known: Iterable[str]) -> tuple[str, ...]:
    """`values` as selectors (upper case), each `ALL` or the prefix of a code in `known`.

    Raises ConfigError naming the first unknown one, the nearest known code, and `where`."""
    known = list(known)
    result = []
    for value in values:
        selector = value.strip().upper()
        if selector != "ALL" and not (selector and any(code.startswith(selector) for code in known)):
            import difflib  # noqa: PLC0415 - only for a bad selector

            nearest = (difflib.get_close_matches(selector, known, n=1, cutoff=0.0) or known or ["?"])[0]
            raise ConfigError(f"{where}: unknown rule selector {value.strip()!r}; the nearest rule code is "
                              f"{nearest} (`pallas-lint rule --all` lists them)")
        result.append(selector)
    return tuple(result)


def validate_globs(values: Iterable[str], where: str) -> tuple[str, ...]:
    """`values`, once each compiles as a glob; raises ConfigError naming `where`."""
    values = tuple(values)
    problem = next((error for error in map(_glob_error, values) if error), None)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return values


def _glob_error(pattern: str) -> str | None:
    try:
        check_glob(pattern)
    except GlobError as error:
        return str(error)
    return None


def find_pyproject(start: str) -> Path | None:
    """The nearest `pyproject.toml` at or above `start` (a file or a directory) that has a
    `[tool.pallas-lint]` table."""
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        pyproject = configured_pyproject(directory)
        if pyproject is not None:
            return pyproject
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def configured_pyproject(directory: str) -> Path | None:
    """The directory's own `pyproject.toml`, if it has a `[tool.pallas-lint]` table (or cannot
    be read)."""
    pyproject = os.path.join(directory, "pyproject.toml")  # os.path: a tree walk asks for every directory
    if os.path.isfile(pyproject) and _has_section(Path(pyproject)):
        return Path(pyproject)
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


def _strings(key: str, value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{source}: {key} must be a list of strings")
    return tuple(value)


def _codes(key: str, value: Any, source: str) -> tuple[str, ...]:
    """Code selectors, upper case; `config.py` checks them against the registry."""
    return tuple(code.strip().upper() for code in _strings(key, value, source))


def _globs(key: str, value: Any, source: str) -> tuple[str, ...]:
    return validate_globs(_strings(key, value, source), f"{source}: {key}")


def _per_file(key: str, value: Any, source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: {key} must be a table of pattern = [codes]")
    for pattern in value:
        validate_globs([pattern], f"{source}: {key}")
    return tuple((pattern, _codes(f"{key}.{pattern!r}", codes, source)) for pattern, codes in value.items())


def _boolean(key: str, value: Any, source: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: {key} must be true or false")
    return value


def _seconds(key: str, value: Any, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{source}: {key} must be a positive number of seconds")
    return float(value)


_KEYS = {
    "select": "select", "ignore": "ignore", "exclude": "exclude",
    "extend-exclude": "extend_exclude", "per-file-ignores": "per_file_ignores",
    "analysis-budget": "budget", "respect-gitignore": "respect_gitignore",
}
_CONVERTERS = {"per-file-ignores": _per_file, "analysis-budget": _seconds, "exclude": _globs,
               "extend-exclude": _globs, "respect-gitignore": _boolean}


def _convert(key: str, value: Any, source: str) -> Any:
    return _CONVERTERS.get(key, _codes)(key, value, source)


# pyproject files are read once per modification time: a tree walk asks for every file.
_cache: dict[Path, tuple[float, dict[str, Any]]] = {}
_cache_lock = threading.Lock()


def _document(pyproject: Path) -> dict[str, Any]:
    try:
        mtime = pyproject.stat().st_mtime
    except OSError:
        return {}
    with _cache_lock:
        cached = _cache.get(pyproject)
        if cached and cached[0] == mtime:
            return cached[1]
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415 - only when there is a pyproject.toml to read (7 ms)
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # noqa: PLC0415
    try:
        with pyproject.open("rb") as file:
            document: dict[str, Any] = tomllib.load(file)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        document = {"__error__": str(error)}
    with _cache_lock:
        _cache[pyproject] = (mtime, document)
    return document


def _has_section(pyproject: Path) -> bool:
    document = _document(pyproject)
    return "__error__" in document or SECTION in document.get("tool", {})


def _table(pyproject: Path) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Option:
    """A `[tool.pallas-lint]` key, as `pallas-lint config` documents it."""

    key: str
    type: str
    default: str
    example: str
    doc: str


OPTIONS: dict[str, Option] = {option.key: option for option in (
    Option("select", "list[str]", '["PLS"]', 'select = ["PLS001", "PLS002"]',
           "Rule codes or prefixes to report (`ALL` for every code). Unknown codes are an error."),
    Option("ignore", "list[str]", "[]", 'ignore = ["PLS002"]',
           "Rule codes or prefixes not to report (`ALL` for every code); wins over `select`."),
    Option("per-file-ignores", "dict[str, list[str]]", "{}", 'per-file-ignores = { "tests/**" = ["PLS001"] }',
           "Codes to ignore in the files a glob matches (ruff's globs; `!glob` for the files it "
           "does not match)."),
    Option("exclude", "list[str]", "[" + ", ".join(f'"{name}"' for name in DEFAULT_EXCLUDE) + "]",
           'exclude = ["generated"]',
           "Globs of files and directories a directory walk skips; replaces the defaults."),
    Option("extend-exclude", "list[str]", "[]", 'extend-exclude = ["**/gen_*.py"]',
           "Globs skipped in addition to `exclude`."),
    Option("respect-gitignore", "bool", "true", "respect-gitignore = false",
           "Skip what .gitignore, .git/info/exclude and .ignore files ignore when walking a directory."),
    Option("analysis-budget", "float", "10", "analysis-budget = 30",
           "CPU seconds of analysis per file (the analysing thread's, so a loaded machine does not change the verdict); a file over it is reported as PLS000."),
)}
assert set(OPTIONS) == set(_KEYS)


def settings_text(settings: Settings) -> str:
    """The settings as TOML-like `key = value` lines (for `--show-settings`)."""
    def value(item: Any) -> str:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, float):
            return f"{item:g}"
        if isinstance(item, tuple) and item and isinstance(item[0], tuple):
            return "{ " + ", ".join(f'"{pattern}" = {value(codes)}' for pattern, codes in item) + " }" if item else "{}"
        if isinstance(item, tuple):
            return "[" + ", ".join(f'"{part}"' for part in item) + "]"
        return f'"{item}"'
    rows = [
        ("select", settings.select), ("ignore", settings.ignore),
        ("per-file-ignores", settings.per_file_ignores), ("exclude", settings.exclude),
        ("extend-exclude", settings.extend_exclude), ("respect-gitignore", settings.respect_gitignore),
        ("analysis-budget", settings.budget),
    ]
    return "".join(f"{key} = {value(item) if item != () else '[]' if key != 'per-file-ignores' else '{}'}\n"
                   for key, item in rows)
