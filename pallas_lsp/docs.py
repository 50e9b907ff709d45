"""Generate `docs/rules/PLSNNN.md` from each rule's own documentation and examples.

    python -m pallas_lsp.docs [OUTPUT_DIR]
    python -m pallas_lsp.docs --check [OUTPUT_DIR]   # exit 1 when a page is missing or stale

A test (and the pre-commit hook, with `--check`) compares the committed pages with what this
produces.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pallas_lsp.analysis import REGISTRY, Rule


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
    for valid in rule.VALID:
        if all(valid != invalid.fixed for invalid in rule.INVALID):
            parts += ["### Valid", "", "```python", valid.rstrip(), "```", ""]
    return "\n".join(parts)


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in REGISTRY:
        target = directory / f"{rule.code}.md"
        target.write_text(page(rule), encoding="utf-8")
        written.append(target)
    return written


def stale(directory: Path) -> list[Path]:
    """The pages under `directory` that differ from what the rules produce (or are missing)."""
    found = []
    for rule in REGISTRY:
        target = directory / f"{rule.code}.md"
        if not target.is_file() or target.read_text(encoding="utf-8") != page(rule):
            found.append(target)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pallas_lsp.docs",
                                     description="Write docs/rules/PLSNNN.md from each rule's own documentation.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a page is missing or out of date")
    parser.add_argument("directory", nargs="?", type=Path, default=Path("docs/rules"),
                        help="where the pages are (default: docs/rules)")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale(args.directory)
        for path in out_of_date:
            print(f"{path}: out of date; run `python -m pallas_lsp.docs` to regenerate it", file=sys.stderr)
        return 1 if out_of_date else 0
    for path in write(args.directory):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
