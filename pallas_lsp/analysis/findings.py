"""Findings and fixes: plain data shared by every frontend.

Positions are 1-based lines and 0-based columns counted in Unicode code points of the line
(what Python's `str` indexes). Frontends convert: flake8 prints them as they are, the language
server turns them into the client's position encoding.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Applicability(enum.Enum):
    """How far a fix can be trusted (ruff's levels)."""

    SAFE = "safe"  # keeps the program's meaning; applied by --fix and fix-all
    UNSAFE = "unsafe"  # valid, but may change behaviour; applied only on request
    DISPLAY_ONLY = "display-only"  # shown, never applied


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int
    path: str | None = None  # None: the analysed file itself


@dataclass(frozen=True)
class Edit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]
    preferred: bool = False


@dataclass(frozen=True)
class Related:
    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    span: Span
    severity: Severity = Severity.ERROR
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    # For a finding in another file (`span.path`: a helper module whose MMA JAX's traceback
    # names): where the analysed file leads to it, for frontends that report in one file only.
    anchor: Span | None = None

    @property
    def line(self) -> int:
        return self.span.line

    def in_analysed_file(self) -> Finding:
        """This finding as a frontend limited to the analysed file shows it: at its anchor,
        saying where it really is."""
        if self.span.path is None or self.anchor is None:
            return self
        where = f"{self.span.path}:{self.span.line}"
        return Finding(self.code, f"{self.message} (at {where})", self.anchor, self.severity, self.related,
                       self.fixes, None)

    @property
    def col(self) -> int:
        return self.span.col
