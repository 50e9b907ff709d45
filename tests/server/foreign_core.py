"""The language server over a core that reports an MMA in a helper module where JAX names it:
in the helper, not at the kernel's call of the helper.

Today's core puts such a finding on the kernel's line that calls the helper and names the
helper's MMA in its message ("... in the tcgen05_mma at mma_helpers.py:5 ..."); `Finding.span`
can carry another file's path, and the server must publish such findings for that file. This
wrapper moves those findings to the line the message names, so the server's publishing per
file is tested whatever placement the core settles on.

    python tests/server/foreign_core.py   (speaks LSP on stdio, like `python -m pallas_lsp`)
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from typing import Any

from pallas_lsp import analysis
from pallas_lsp.analysis import Finding, Result, Settings, Span

_NAMED = re.compile(r" in the tcgen05_mma at (?P<file>[^\s:]+\.py):(?P<line>\d+)")
_lint = analysis.lint


def _moved(finding: Finding, path: str | None, overlays: dict[str, str]) -> Finding:
    named = _NAMED.search(finding.message)
    if named is None or path is None:
        return finding
    helper = os.path.normpath(os.path.join(os.path.dirname(path), named["file"]))
    line = int(named["line"])
    if helper not in overlays:
        with open(helper, encoding="utf-8") as file:
            overlays = {helper: file.read()}
    text = overlays[helper].splitlines()[line - 1]
    col = text.index("plgpu.tcgen05_mma")
    span = Span(line, col, line, len(text.rstrip()), helper)
    return dataclasses.replace(finding, span=span, message=_NAMED.sub("", finding.message))


def lint(text: str, path: str | None, settings: Settings, **options: Any) -> Result:
    result = _lint(text, path, settings, **options)
    overlays = dict(options.get("overlays") or {})
    result.findings = [_moved(finding, path, overlays) for finding in result.findings]
    return result


if __name__ == "__main__":
    analysis.lint = lint  # the scheduler calls `pallas_lsp.analysis.lint`
    from pallas_lsp.server import main

    sys.exit(main(sys.argv[1:]))
