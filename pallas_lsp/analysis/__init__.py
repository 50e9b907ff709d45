"""The analysis core: no frontend is imported from here.

This module is the one surface the frontends (flake8 plugin, CLI, language server) import;
`tests/test_layout.py` holds them to it, so the core's modules can move without them noticing.
"""

from .config import check_selectors, resolve, settings_for
from .config import load as load_settings
from .engine import Result, analyze_bytes, analyze_file, analyze_source, lint, read_text, select_rules
from .facts import Fact
from .findings import Applicability, Edit, Finding, Fix, Related, Severity, Span
from .fixes import apply_edits
from .fixing import Change, Plan, SourceFile, changes, fix_to_apply, plan_fixes, plan_noqa
from .fixing import write as write_change
from .noqa import code_at as noqa_code_at
from .noqa import noqa_edit, unsilenced
from .noqa import unused as unused_noqa
from .prefilter import mentions_pallas
from .rules import (
    BY_CODE, FILE_NOT_ANALYSED, PROJECT_URL, REGISTRY, RULES, UNUSED_NOQA, Rule, docs_url, not_analysed,
)
from .session import Session
from .settings import OPTIONS, ConfigError, Settings, codes, settings_text, validate_globs
from .source import Lines, decode, split_lines

__all__ = [
    "BY_CODE", "FILE_NOT_ANALYSED", "OPTIONS", "PROJECT_URL", "REGISTRY", "RULES", "UNUSED_NOQA",
    "Applicability", "Change", "ConfigError", "Edit", "Fact", "Finding", "Fix", "Lines", "Plan", "Related",
    "Result", "Rule", "Session", "Settings", "Severity", "SourceFile", "Span",
    "analyze_bytes", "analyze_file", "analyze_source", "apply_edits", "changes", "check_selectors", "codes",
    "decode", "docs_url", "fix_to_apply", "lint", "load_settings", "mentions_pallas", "noqa_code_at",
    "noqa_edit", "not_analysed", "plan_fixes", "plan_noqa", "read_text", "resolve", "select_rules",
    "settings_for", "settings_text", "split_lines", "unsilenced", "unused_noqa", "validate_globs",
    "write_change",
]
