"""Editor settings (`workspace/configuration` section `pallas`, or `initializationOptions`),
merged with `[tool.pallas-lint]` from the file's `pyproject.toml` through the core.

Keys: `select`, `ignore` (code prefixes), `lint.run` ("onType" | "onSave"), `lint.debounce`
(milliseconds), `logLevel` ("error" | "warning" | "info" | "debug"). A flat `run` or `debounce`
is accepted too. Editor `select`/`ignore`, when given, win over the pyproject's (ruff's
`editorFirst`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeGuard

from pallas_lsp.analysis import Settings, codes, settings_for

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

    @classmethod
    def parse(cls, raw: Any) -> EditorSettings:
        """Lenient: a value of the wrong type keeps its default (an editor must not break)."""
        if not isinstance(raw, dict):
            return cls()
        nested = raw.get("lint")
        lint: dict[str, Any] = nested if isinstance(nested, dict) else {}
        run = lint.get("run", raw.get("run"))
        debounce = lint.get("debounce", raw.get("debounce"))
        level = raw.get("logLevel")
        return cls(
            select=_codes(raw.get("select")),
            ignore=_codes(raw.get("ignore")),
            run=run if run in ("onType", "onSave") else "onType",
            debounce_ms=float(debounce) if _is_number(debounce) and debounce >= 0 else DEFAULT_DEBOUNCE_MS,
            log_level=_LOG_LEVELS.get(str(level).lower(), logging.WARNING) if level else logging.WARNING,
        )

    def for_file(self, path: str | None) -> Settings:
        """The core settings for `path`: its pyproject's, then these on top. Raises ConfigError."""
        return settings_for(path).merged(select=self.select, ignore=self.ignore)


def _codes(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        return None
    return codes(value)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
