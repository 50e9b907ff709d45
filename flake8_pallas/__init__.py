"""flake8 plugin: PLS001, PLS002, ... from the pallas-lsp core.

A thin adapter. flake8 aborts the whole run when a plugin raises, so nothing escapes `run()`.
A file that was not analysed (over its budget, an invalid `[tool.pallas-lint]`, an internal
error) is reported as `PLS000` at line 1 with the reason, never skipped in silence; a syntax
error is flake8's own E999 (flake8 runs no plugin on a file it cannot parse). Rule selection
comes from `[tool.pallas-lint]` in the file's `pyproject.toml`, overridden by `--pallas-select`,
`--pallas-ignore` and `--pallas-budget`, read through the core's one settings loader: an
unknown code in those options stops flake8 with the error, as a bad flake8 option does.
`# noqa` is flake8's own business.

Results are cached as `pallas-lint` caches them (`pallas_lsp.cache`: the same directory, keys
and dependency checks; an entry of its own kind, holding every finding of the analysis, since
flake8 applies `# noqa` itself): a file analysed before, unchanged, with unchanged settings and
unchanged project modules it imports, is answered from `.pallas_lint_cache/` without importing
astroid. `--pallas-no-cache` turns that off, `--pallas-cache-dir` moves it; standard input is
never cached.
"""

from __future__ import annotations

import ast
import logging
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from flake8.exceptions import ExecutionError  # type: ignore[import-untyped]

from pallas_lsp import __version__, analysis, cache
from pallas_lsp.analysis import (
    FILE_NOT_ANALYSED, ConfigError, Finding, Settings, check_selectors, codes, mentions_pallas, not_analysed,
    resolve, settled_unless_loaded,
)

if TYPE_CHECKING:
    from pallas_lsp.analysis import Result

log = logging.getLogger("flake8_pallas")

_STDIN_NAMES = {"stdin", "-", None}


def analyze_source(text: str, path: str | None, *, select: tuple[str, ...], ignore: tuple[str, ...], budget: float,
                   tree: ast.Module | None) -> Result:
    """`analysis.analyze_source`, read when a file first needs it: the engine (and astroid) is
    loaded by the first file the prefilter and its stdlib tree leave to it (`settled_unless_loaded`), not
    when flake8 loads its plugins."""
    return analysis.analyze_source(text, path, select=select, ignore=ignore, budget=budget, tree=tree)


class PallasChecker:
    name = "pallas-lsp"
    version = __version__
    overrides: ClassVar[dict[str, Any]] = {}
    # (cached, the cache directory given): off until flake8 hands its options over, so a checker
    # made outside flake8 (tests, other tools) writes no cache
    caching: ClassVar[tuple[bool, str | None]] = (False, None)

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
                          help="CPU seconds of analysis per file before giving up on it (default 10)")
        parser.add_option("--pallas-no-cache", parse_from_config=True, action="store_true", default=False,
                          help="analyse every file again instead of reusing the results of unchanged files "
                               f"(kept in {cache.DIRECTORY}/, shared with pallas-lint)")
        parser.add_option("--pallas-cache-dir", parse_from_config=True, metavar="DIR",
                          default=os.environ.get("PALLAS_LINT_CACHE_DIR"),
                          help=f"where results are kept (default: {cache.DIRECTORY}/ beside the pyproject.toml, "
                               "else in the working directory; env PALLAS_LINT_CACHE_DIR)")

    @classmethod
    def parse_options(cls, options: Any) -> None:
        try:
            cls.overrides = {
                "select": check_selectors(codes(options.pallas_select) or (), "--pallas-select")
                if options.pallas_select is not None else None,
                "ignore": check_selectors(codes(options.pallas_ignore) or (), "--pallas-ignore")
                if options.pallas_ignore is not None else None,
                "budget": options.pallas_budget,
            }
            cls.caching = (not options.pallas_no_cache, options.pallas_cache_dir or None)
            if options.pallas_budget is not None and options.pallas_budget <= 0:
                raise ConfigError("--pallas-budget: the budget must be a positive number of seconds")
        except ConfigError as error:
            raise ExecutionError(f"pallas-lsp: {error}") from None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            findings = self._findings()
        except Exception as error:  # never take flake8 down, never pass in silence
            log.debug("pallas-lsp failed on %s", self.filename, exc_info=True)
            findings = [not_analysed(f"internal error: {type(error).__name__}: {error}")]
        for finding in findings:
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)

    def _findings(self) -> list[Finding]:
        started = time.time()
        text = "".join(self.lines)
        path = None if self.filename in _STDIN_NAMES else self.filename
        caching, directory = self.caching
        probed: set[str] = set()
        if not mentions_pallas(text, path=path, probed=probed):
            return []
        try:
            settings = resolve(path, **self.overrides, where="flake8 options")
        except ConfigError as error:
            log.warning("pallas-lsp: %s", error)
            return [not_analysed(f"invalid configuration: {error}")]
        entry = None
        if caching and path is not None:  # standard input is never cached
            where, data = cache.directory_for(settings, directory), text.encode("utf-8", "surrogatepass")
            entry = cache.key(path, data, settings, cache.FLAKE8)
            record = cache.load(where, entry)
            if record is not None:
                return self._reported(path, settings, cache.findings(record), record["error"])
        findings, failure, dependencies = self._analysed(text, path, settings, probed)
        if entry is not None and path is not None and cache.cacheable(failure):
            depends = cache.dependencies(path, data, dependencies, probed)
            cache.store(where, entry, findings, failure, 0, depends, started)
        return self._reported(path, settings, findings, failure)

    def _analysed(self, text: str, path: str | None, settings: Settings, probed: set[str]
                  ) -> tuple[list[Finding], str | None, tuple[str, ...]]:
        """The analysis's findings, why it failed, and the project files it read (beside
        `probed`, which gets those the prefilter read)."""
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        if settled_unless_loaded(text, path, tree, probed):
            return [], None, ()  # (the engine's first step, on flake8's tree)
        result = analyze_source(text, path, select=settings.select, ignore=settings.ignored_for(path),
                                budget=settings.budget, tree=tree)
        return result.findings, result.error, result.dependencies

    def _reported(self, path: str | None, settings: Settings, findings: list[Finding], error: str | None
                  ) -> list[Finding]:
        """What flake8 is given of a verdict, fresh or cached alike."""
        if error:
            log.warning("pallas-lsp: %s: not analysed: %s", self.filename, error)
            if settings.enables(FILE_NOT_ANALYSED, path):
                return [not_analysed(error), *findings]
        return [finding.in_analysed_file() for finding in findings]  # flake8 reports in this file only
