"""flake8 plugin: PLS001, PLS002, ... from the pallas-lsp core.

A thin adapter. flake8 aborts the whole run when a plugin raises, so nothing escapes `run()`:
an internal failure is logged at debug level and the file gets no report. Rule selection comes
from `[tool.pallas-lint]` in the file's `pyproject.toml`, overridden by `--pallas-select`,
`--pallas-ignore` and `--pallas-budget`; `# noqa` is flake8's own business.
"""

from __future__ import annotations

import ast
import logging
from typing import Any, ClassVar, Iterator

from pallas_lsp import __version__
from pallas_lsp.analysis import analyze_source
from pallas_lsp.analysis.prefilter import mentions_pallas
from pallas_lsp.analysis.settings import ConfigError, codes, settings_for

log = logging.getLogger("flake8_pallas")

_STDIN_NAMES = {"stdin", "-", None}


class PallasChecker:
    name = "pallas-lsp"
    version = __version__
    overrides: ClassVar[dict[str, Any]] = {}

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.tree = tree  # flake8's parse of `lines`: the analysis does not parse again
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_option("--pallas-select", parse_from_config=True, comma_separated_list=True,
                          help="pallas-lsp code prefixes to report (default: from pyproject, else PLS)")
        parser.add_option("--pallas-ignore", parse_from_config=True, comma_separated_list=True,
                          help="pallas-lsp code prefixes not to report")
        parser.add_option("--pallas-budget", parse_from_config=True, type=float,
                          help="seconds of analysis per file before giving up on it (default 10)")

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.overrides = {
            "select": codes(options.pallas_select),
            "ignore": codes(options.pallas_ignore),
            "budget": options.pallas_budget,
        }

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            findings = self._findings()
        except Exception:  # noqa: BLE001 - never take flake8 down
            log.debug("pallas-lsp failed on %s", self.filename, exc_info=True)
            return
        for finding in findings:
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)

    def _findings(self) -> list:
        text = "".join(self.lines)
        if not mentions_pallas(text):
            return []
        path = None if self.filename in _STDIN_NAMES else self.filename
        try:
            settings = settings_for(path).merged(**self.overrides)
        except ConfigError as error:
            log.warning("pallas-lsp: %s", error)
            return []
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        result = analyze_source(text, path, select=settings.select, ignore=settings.ignored_for(path),
                                budget=settings.budget, tree=tree)
        if result.error:
            log.debug("%s: %s", self.filename, result.error)
        return [finding.in_analysed_file() for finding in result.findings]  # flake8 reports in this file only
