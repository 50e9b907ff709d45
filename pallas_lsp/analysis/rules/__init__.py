"""The rule registry: one module per rule, each carrying its documentation and examples."""

from __future__ import annotations

from .base import DOCS_BASE_URL, PROJECT_URL, Invalid, Rule, docs_url
from .pls001_non_collective_operand import NonCollectiveOperand
from .pls002_mixed_collective_union import MixedCollectiveUnion

RULES: tuple[Rule, ...] = (NonCollectiveOperand(), MixedCollectiveUnion())
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}

__all__ = ["BY_CODE", "DOCS_BASE_URL", "PROJECT_URL", "RULES", "Invalid", "Rule", "docs_url"]
