"""PLS000: a file that was not analysed. Reported by the frontends from `Result.error`."""

from __future__ import annotations

from typing import Iterator

from ..catalog import not_analysed
from ..context import Context
from ..findings import Finding, Severity
from .base import Rule

__all__ = ["FileNotAnalysed", "not_analysed"]


class FileNotAnalysed(Rule):
    """## What it does
    Reports a file that pallas-lint could not analyse, with the reason: a syntax error (as the
    running Python parses it), a file that is not valid in its declared encoding, a file that
    cannot be read, an analysis that ran past its budget, an invalid configuration, or an
    internal error. The finding is on line 1, column 1. A file the prefilter settles from its
    text is not parsed, and so gets no PLS000 for a syntax error: one without a word any rule
    starts from, or whose import statements bring in nothing of the Pallas API (nothing in it
    could be a finding; Python, ruff or flake8's `E999` report its syntax).

    ## Why is this bad?
    A file that was not analysed got no verdict at all. Printing nothing for it would read as
    "no bug found", and in CI silence reads as green. ruff does the same with syntax errors:
    they are diagnostics, counted in the summary, and they fail the run.

    ## Example
    ```python
    def kernel(acc_ref, a_ref, b_ref:   # a syntax error: nothing below is checked
        plgpu.tcgen05_mma(acc_ref, a_ref, b_ref)
    ```

    Use instead:
    ```python
    def kernel(acc_ref, a_ref, b_ref):
        plgpu.tcgen05_mma(acc_ref, a_ref, b_ref)
    ```

    ## Fix safety
    There is no fix: the reason says what to repair. A `# noqa` comment does not silence it
    (the file may not even tokenize); `--ignore PLS000` (or `ignore = ["PLS000"]`) does, as an
    explicit choice to let unanalysed files pass.

    ## JAX message
    None of its own: a syntax or encoding error fails when Python imports the module
    (`SyntaxError: ...`), before JAX sees any kernel.
    """

    code = "PLS000"
    name = "file-not-analysed"
    summary = "The file was not analysed (syntax error, encoding, budget, configuration)"
    jax_message = ""
    severity = Severity.ERROR

    def check(self, ctx: Context) -> Iterator[Finding]:  # produced by the frontends
        return iter(())
