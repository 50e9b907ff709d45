"""flake8 plugin: PLS001, PLS002, ... from the pallas-lsp core.

A thin adapter. flake8 aborts the whole run when a plugin raises, so nothing escapes `run()`:
an internal failure is logged at debug level and the file gets no report.
"""

from __future__ import annotations

import ast
import logging
from typing import Iterator

from pallas_lsp import __version__
from pallas_lsp.analysis import analyze_source
from pallas_lsp.analysis.engine import mentions_pallas

log = logging.getLogger("flake8_pallas")

_STDIN_NAMES = {"stdin", "-", None}


class PallasChecker:
    name = "pallas-lsp"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            text = "".join(self.lines)
            if not mentions_pallas(text):
                return
            path = None if self.filename in _STDIN_NAMES else self.filename
            result = analyze_source(text, path)
            if result.error:
                log.debug("%s: %s", self.filename, result.error)
            findings = result.findings
        except Exception:  # noqa: BLE001 - never take flake8 down
            log.debug("pallas-lsp failed on %s", self.filename, exc_info=True)
            return
        for finding in findings:
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
