"""The analysis core: no frontend is imported from here."""

from .engine import Result, analyze_bytes, analyze_file, analyze_source, lint, select_rules
from .findings import Applicability, Edit, Finding, Fix, Related, Severity, Span

__all__ = [
    "Applicability", "Edit", "Finding", "Fix", "Related", "Result", "Severity", "Span",
    "analyze_bytes", "analyze_file", "analyze_source", "lint", "select_rules",
]
