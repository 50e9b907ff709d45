"""Editor settings (`workspace/configuration` section `pallas`, or `initializationOptions`),
merged with `[tool.pallas-lint]` from the file's `pyproject.toml` through the core.

Keys: `select`, `ignore` (code prefixes), `lint.run` ("onType" | "onSave"), `lint.debounce`
(milliseconds), `logLevel` ("error" | "warning" | "info" | "debug"). A flat `run` or `debounce`
is accepted too. Editor `select`/`ignore`, when given, win over the pyproject's (ruff's
`editorFirst`). Codes are validated against the rule registry, as everywhere: an unknown one,
like an invalid `[tool.pallas-lint]`, is a configuration error the server shows to the user
(`window/showMessage`) and reports on each file as PLS000; it never guesses defaults.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeGuard

from pallas_lsp.analysis import (
    FILE_NOT_ANALYSED, ConfigError, Settings, check_selectors, codes, not_analysed, resolve,
)

DEFAULT_DEBOUNCE_MS = 250

_LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "warn": logging.WARNING,
               "info": logging.INFO, "debug": logging.DEBUG}


@dataclass(frozen=True)
class EditorSettings:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    run: str = "onType"
    debounce_ms: float = DEFAULT_DEBOUNCE_MS
    log_level: int = logging.WARNING
    error: str | None = None  # why the editor's own values cannot be used

    @classmethod
    def parse(cls, raw: Any) -> EditorSettings:
        """Lenient for how the editor runs us (a bad `lint.run` keeps its default), strict for
        what decides the verdict: an unknown code, or `select`/`ignore` of the wrong type, is
        an `error` the server shows instead of guessing."""
        if not isinstance(raw, dict):
            return cls()
        nested = raw.get("lint")
        lint: dict[str, Any] = nested if isinstance(nested, dict) else {}
        run = lint.get("run", raw.get("run"))
        debounce = lint.get("debounce", raw.get("debounce"))
        level = raw.get("logLevel")
        select = ignore = error = None
        try:
            select = _codes(raw.get("select"), "select")
            ignore = _codes(raw.get("ignore"), "ignore")
        except ConfigError as problem:
            error = str(problem)
        return cls(
            select=select,
            ignore=ignore,
            error=error,
            run=run if run in ("onType", "onSave") else "onType",
            debounce_ms=float(debounce) if _is_number(debounce) and debounce >= 0 else DEFAULT_DEBOUNCE_MS,
            log_level=_LOG_LEVELS.get(str(level).lower(), logging.WARNING) if level else logging.WARNING,
        )

    def for_file(self, path: str | None) -> Settings:
        """The core settings for `path`: its pyproject's, then these on top. Raises ConfigError."""
        if self.error is not None:
            raise ConfigError(self.error)
        return resolve(path, select=self.select, ignore=self.ignore, where="editor settings")

    def resolve(self, path: str | None) -> tuple[Settings | None, str | None]:
        """`for_file`, or None and the configuration error to show the user."""
        try:
            return self.for_file(path), None
        except ConfigError as error:
            return None, str(error)


def not_analysed_result(result: Any, settings: Settings | None, path: str | None) -> Any:
    """`result` with its PLS000 finding first when the file was not analysed (unless the
    settings ignore PLS000); a cancelled analysis is not a verdict."""
    if result.error and result.error != "cancelled" and (settings is None or settings.enables(FILE_NOT_ANALYSED, path)):
        result.findings = [not_analysed(result.error), *result.findings]
    return result


def _codes(value: Any, key: str) -> tuple[str, ...] | None:
    """The codes of an editor setting (a list, or one string); None when not set (absent, null
    or empty). Raises ConfigError for another type or an unknown code."""
    if value is None or value == []:
        return None
    if isinstance(value, str):
        value = [value]
    where = f"editor setting pallas.{key}"
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of rule codes")
    return check_selectors(codes(value) or (), where) or None


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
