"""PLS100: a `# noqa` comment naming pallas-lint codes that silence nothing (ruff's RUF100)."""

from __future__ import annotations

from typing import Iterator

from ..context import Context
from ..findings import Finding, Severity
from .base import Rule


class UnusedNoqa(Rule):
    """## What it does
    Reports `# noqa: PLS...` comments whose pallas-lint codes silence no finding on their line,
    and `# noqa` codes that are not pallas-lint codes at all but start with `PLS`
    (`# noqa: PLS999`). Codes of other tools (`E501`, `F401`) and a bare `# noqa` are left
    alone: they may be another linter's. Codes not selected for the file are left alone too
    (ruff reports them as "non-enabled"; another frontend, such as the editor, may enable them).
    A file that was not analysed (PLS000) gets no PLS100.

    ## Why is this bad?
    A stale suppression hides nothing today and will hide a real bug tomorrow, when the line
    changes. ruff reports the same thing for its codes (RUF100).

    ## Example
    ```python
    acc = plgpu.TMEM((128, 128), jnp.float32)  # noqa: PLS005
    ```

    Use instead:
    ```python
    acc = plgpu.TMEM((128, 128), jnp.float32)
    ```

    ## Fix safety
    Removing the unused codes (or the whole comment when no code is left) is safe: it changes
    nothing the linter reports. Other tools' codes in the same comment are kept.

    ## JAX message
    None: a comment means nothing to JAX.
    """

    code = "PLS100"
    name = "unused-noqa"
    summary = "A `# noqa` comment names pallas-lint codes that silence nothing"
    jax_message = ""
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Finding]:  # produced by the frontends
        return iter(())
