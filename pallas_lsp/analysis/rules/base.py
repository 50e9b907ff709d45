"""The shape of a rule: its code, its documentation and its examples travel with its check.

Documentation follows ruff's sections (What it does / Why is this bad? / Example / Use instead /
Fix safety / JAX message). Examples follow Fixit: `VALID` programs must give no finding, `INVALID`
ones give the findings marked in them (`# PLS001` beside the line, as in the fixtures) and, when
`fixed` is set, applying the rule's preferred fix yields exactly that text. Each example is a
whole program with `case_*()` functions, so the JAX oracle test traces it too.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import ClassVar, Iterator

from ..catalog import DOCS_BASE_URL, PROJECT_URL, docs_url
from ..context import Context
from ..findings import Finding, Severity

__all__ = ["DOCS_BASE_URL", "PROJECT_URL", "Invalid", "Rule", "docs_url"]


@dataclass(frozen=True)
class Invalid:
    code: str
    fixed: str | None = None  # the program after the preferred fix


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # a slug, e.g. "non-collective-mma-operand"
    summary: ClassVar[str]
    jax_message: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR
    triggers: ClassVar[tuple[bytes, ...]] = ()  # a file mentioning none of these is skipped
    # Names (variables, attributes, imported names) a file must use for the rule to apply;
    # checked on the stdlib AST before astroid builds anything. Empty: no such filter.
    identifiers: ClassVar[frozenset[str]] = frozenset()
    lowering: ClassVar[bool] = False  # JAX reports it when lowering, not when tracing
    # the builtin class of the exception JAX raises when tracing (asked of JAX for each rule:
    # an `except` clause around the call catches it or not); None: not known, any may
    jax_exception: ClassVar[str | None] = None
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()

    def check(self, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def url(cls) -> str:
        return docs_url(cls.code)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")
