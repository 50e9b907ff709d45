"""The one settings loader of the frontends: `[tool.pallas-lint]` (through `settings.py`, which
checks the table's shape) with every code checked against the rule registry, and a
frontend's own values (CLI options, flake8's `--pallas-*`, editor settings) checked the same way.

A bad configuration is a ConfigError whose message names the file (or the frontend's option)
and the key, and every frontend treats it alike: `pallas-lint` exits 2 with it, flake8 reports
PLS000 with it on each file, the server shows it to the user and reports PLS000; none falls
back to the defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from . import settings as _settings
from .catalog import RULE_INFO
from .settings import ConfigError, Settings


def check_selectors(values: Iterable[str], where: str) -> tuple[str, ...]:
    """Selectors (upper case) that are `ALL` or prefix a registered code; raises ConfigError."""
    return _settings.validate_codes(values, where, RULE_INFO)


def checked(settings: Settings) -> Settings:
    """`settings` (read from one pyproject, or the defaults) once its codes are known codes."""
    where = settings.source or "settings"
    check_selectors(settings.select, f"{where}: select")
    check_selectors(settings.ignore, f"{where}: ignore")
    for pattern, codes in settings.per_file_ignores:
        check_selectors(codes, f"{where}: per-file-ignores.{pattern!r}")
    return settings


def settings_for(path: str | None) -> Settings:
    """The settings of `path`'s nearest `[tool.pallas-lint]`, checked. Raises ConfigError."""
    return checked(_settings.settings_for(path))


def load(pyproject: Path) -> Settings:
    """The settings of one TOML file (`--config`), checked. Raises ConfigError."""
    return checked(_settings.load(pyproject))


def resolve(path: str | None, *, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
            budget: float | None = None, where: str = "settings") -> Settings:
    """`settings_for(path)` with a frontend's own values on top, checked too. `where` names
    them in an error (`flake8 options`, `editor settings`). Raises ConfigError."""
    base = settings_for(path)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0):
        raise ConfigError(f"{where}: the analysis budget must be a positive number of seconds")
    return base.merged(
        select=check_selectors(select, f"{where}: select") if select is not None else None,
        ignore=check_selectors(ignore, f"{where}: ignore") if ignore is not None else None,
        budget=float(budget) if budget is not None else None,
    )
