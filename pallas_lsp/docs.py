"""Generate `docs/rules/PLSNNN.md` from each rule's own documentation and examples.

    python -m pallas_lsp.docs [OUTPUT_DIR]

A test compares the committed pages with what this produces.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pallas_lsp.analysis.rules import REGISTRY, Rule


def page(rule: Rule) -> str:
    parts = [
        f"# {rule.code}: {rule.name}",
        "",
        f"{rule.summary}. Severity: {rule.severity.value}.",
        "",
        rule.documentation(),
        "",
    ]
    if rule.INVALID or rule.VALID:
        parts += [
            "## Complete examples",
            "",
            "Each example is a whole program; the tests run the linter on it and trace its",
            "`case_*` functions with JAX on the CPU (the oracle test), so what it claims is what JAX does.",
            "",
        ]
    for example in rule.INVALID:
        parts += ["### Invalid", "", "```python", example.code.rstrip(), "```", ""]
        if example.fixed:
            parts += ["### After the fix", "", "```python", example.fixed.rstrip(), "```", ""]
    for example in rule.VALID:
        if all(example != invalid.fixed for invalid in rule.INVALID):
            parts += ["### Valid", "", "```python", example.rstrip(), "```", ""]
    return "\n".join(parts)


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in REGISTRY:
        target = directory / f"{rule.code}.md"
        target.write_text(page(rule), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/rules")
    for path in write(out):
        print(path)
