"""The analysis core: no frontend is imported from here.

This module is the one surface the frontends (flake8 plugin, CLI, language server) import;
`tests/test_layout.py` holds them to it, so the core's modules can move without them noticing.

Settings, rule selection and metadata (`catalog`), findings, noqa comments, fixes as text and
the prefilter import no astroid. The analysis itself (the engine, the checks of `rules`, the
tracer) and the names that need it are loaded on first use of one of them (PEP 562), so a
`pallas-lint check` whose files the prefilter or the cache settle never imports astroid; a
frontend that analyses reads them as module attributes when it needs them
(`analysis.analyze_source(...)`), or imports them at its top when it always does.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from .catalog import CATALOG, FILE_NOT_ANALYSED, PROJECT_URL, RULE_INFO, UNUSED_NOQA, RuleInfo, docs_url, not_analysed
from .config import check_selectors, resolve, settings_for
from .config import load as load_settings
from .findings import Applicability, Edit, Finding, Fix, Related, Severity, Span
from .fixing import Change, Plan, SourceFile, changes, fix_to_apply, plan_fixes, plan_noqa
from .fixing import write as write_change
from .noqa import code_at as noqa_code_at
from .noqa import noqa_edit, unsilenced
from .noqa import unused as unused_noqa
from .prefilter import forget_project_imports, imported_data, mentions_pallas, settled_from_text, settled_from_tree
from .settings import OPTIONS, ConfigError, Settings, codes, configured_pyproject, settings_text, validate_globs
from .source import Lines, apply_edits, decode, split_lines

if TYPE_CHECKING:
    import ast

    from .engine import (
        Result, analyze_bytes, analyze_file, analyze_source, lint, read_text, select_rules, warm_project,
    )
    from .facts import Fact
    from .rules import BY_CODE, REGISTRY, RULES, Rule
    from .session import Session

# name -> the module that defines it, imported when the name is first read
_LAZY = {
    **dict.fromkeys(("Result", "analyze_bytes", "analyze_file", "analyze_source", "lint", "read_text",
                     "select_rules", "warm_project"), ".engine"),
    "Fact": ".facts",
    **dict.fromkeys(("BY_CODE", "REGISTRY", "RULES", "Rule"), ".rules"),
    "Session": ".session",
}


def settled_unless_loaded(text: str, path: str | None, tree: ast.Module | None = None,
                          probed: set[str] | None = None) -> bool:
    """`settled_from_tree`, asked while the engine is not loaded, when a yes spares its load
    (astroid, our stubs: 0.12 s); once it is, its own first step asks, on the parse it makes
    anyway. The frontends ask this before their first analysis."""
    return f"{__name__}.engine" not in sys.modules and settled_from_tree(text, path, tree, probed)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BY_CODE", "CATALOG", "FILE_NOT_ANALYSED", "OPTIONS", "PROJECT_URL", "REGISTRY", "RULES", "RULE_INFO",
    "UNUSED_NOQA", "Applicability", "Change", "ConfigError", "Edit", "Fact", "Finding", "Fix", "Lines", "Plan",
    "Related", "Result", "Rule", "RuleInfo", "Session", "Settings", "Severity", "SourceFile", "Span",
    "analyze_bytes", "analyze_file", "analyze_source", "apply_edits", "changes", "check_selectors", "codes",
    "configured_pyproject", "decode", "docs_url", "fix_to_apply", "forget_project_imports", "imported_data", "lint", "load_settings",
    "mentions_pallas", "noqa_code_at",
    "noqa_edit", "not_analysed", "plan_fixes", "plan_noqa", "read_text", "resolve", "select_rules",
    "settings_for", "settings_text", "settled_from_text", "settled_from_tree", "settled_unless_loaded", "split_lines", "unsilenced", "unused_noqa", "validate_globs",
    "warm_project", "write_change",
]
