"""The analysis core: no frontend is imported from here.

This module is the one surface the frontends (flake8 plugin, CLI, language server) import;
`tests/test_layout.py` holds them to it, so the core's modules can move without them noticing.
"""

from .engine import Result, analyze_bytes, analyze_file, analyze_source, lint, select_rules
from .facts import Fact
from .findings import Applicability, Edit, Finding, Fix, Related, Severity, Span
from .fixing import Change, Plan, SourceFile, changes, fix_to_apply, plan_fixes, plan_noqa
from .fixing import write as write_change
from .noqa import code_at as noqa_code_at
from .noqa import noqa_edit
from .prefilter import mentions_pallas
from .rules import BY_CODE, PROJECT_URL, RULES, Rule, docs_url
from .session import Session
from .settings import ConfigError, Settings, codes, settings_for
from .settings import load as load_settings
from .source import Lines, decode, split_lines

__all__ = [
    "BY_CODE", "PROJECT_URL", "RULES",
    "Applicability", "Change", "ConfigError", "Edit", "Fact", "Finding", "Fix", "Lines", "Plan", "Related",
    "Result", "Rule", "Session", "Settings", "Severity", "SourceFile", "Span",
    "analyze_bytes", "analyze_file", "analyze_source", "changes", "codes", "decode", "docs_url",
    "fix_to_apply", "lint", "load_settings", "mentions_pallas", "noqa_code_at", "noqa_edit", "plan_fixes",
    "plan_noqa", "select_rules", "settings_for", "split_lines", "write_change",
]
