"""Output formats of `pallas-lint check`: concise, full, json, sarif, github; and statistics.

Positions: the core counts columns from 0 in code points; every format here shows them from 1
(as ruff and flake8 do), and end columns point just past the last character.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import __version__
from .analysis import BY_CODE, PROJECT_URL, RULES, Applicability, Finding, Fix, Lines, Span, docs_url, fix_to_apply
from .batch import FileReport

FORMATS = ("concise", "full", "json", "sarif", "github")
TOOL = "pallas-lint"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def display(path: str) -> str:
    """A path as we print it: relative to the working directory when it lies below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith(os.pardir) else relative


def _findings(reports: Iterable[FileReport]) -> Iterable[tuple[str, Finding]]:
    for report in reports:
        for finding in report.findings:
            yield report.path, finding


def _where(span: Span, path: str) -> str:
    return f"{display(span.path or path)}:{span.line}:{span.col + 1}"


# -- concise and full ---------------------------------------------------------------------


def concise(reports: list[FileReport]) -> str:
    return "".join(f"{_where(f.span, path)}: {f.code} {f.message}\n" for path, f in _findings(reports))


_APPLICABILITY_NOTE = {
    Applicability.SAFE: "safe fix, applied by --fix",
    Applicability.UNSAFE: "unsafe fix, applied by --fix --unsafe-fixes",
    Applicability.DISPLAY_ONLY: "shown only, never applied",
}


def full(reports: list[FileReport]) -> str:
    """ruff's `full` format: each finding with its source line underlined, where the problem
    comes from (the allocation), and the fixes on offer."""
    sources = _Sources()
    blocks = []
    for path, finding in _findings(reports):
        lines = [f"{_where(finding.span, path)}: {finding.code} {finding.message}"]
        lines += sources.excerpt(finding.span, path, finding.code)
        for related in finding.related:
            lines.append(f"   = note: {_where(related.span, path)}: {related.message}")
            lines += sources.excerpt(related.span, path, "")
        for fix in finding.fixes:
            lines.append(f"   = help: {fix.title} ({_APPLICABILITY_NOTE[fix.applicability]})")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


class _Sources:
    def __init__(self) -> None:
        self._lines: dict[str, Lines | None] = {}

    def excerpt(self, span: Span, path: str, label: str) -> list[str]:
        file = span.path or path
        if file not in self._lines:
            self._lines[file] = Lines.of_file(file)
        lines = self._lines[file]
        if lines is None:
            return []
        text = lines.text(span.line).rstrip()
        end = span.end_col if span.end_line == span.line else len(text)
        end = max(min(end, len(text)), span.col + 1)
        number = str(span.line)
        gutter = " " * len(number)
        # keep tabs in the padding so that the carets line up under the text
        padding = "".join(c if c == "\t" else " " for c in text[:span.col])
        underline = padding + "^" * (end - span.col) + (f" {label}" if label else "")
        return [f"{gutter} |", f"{number} | {text}", f"{gutter} | {underline}", f"{gutter} |"]


# -- json -----------------------------------------------------------------------------------


def _location(line: int, col: int) -> dict:
    return {"row": line, "column": col + 1}


def _edit_json(edit, path: str) -> dict:
    return {
        "content": edit.new_text,
        "filename": os.path.abspath(edit.span.path or path),
        "location": _location(edit.span.line, edit.span.col),
        "end_location": _location(edit.span.end_line, edit.span.end_col),
    }


def _fix_json(fix: Fix, path: str) -> dict:
    return {
        "applicability": fix.applicability.value,
        "message": fix.title,
        "edits": [_edit_json(edit, path) for edit in fix.edits],
    }


def primary_fix(finding: Finding) -> Fix | None:
    """The fix shown first: the one `--fix` (or `--fix --unsafe-fixes`) would apply, else the first."""
    return fix_to_apply(finding) or fix_to_apply(finding, unsafe=True) or (finding.fixes or (None,))[0]


def finding_json(finding: Finding, path: str) -> dict:
    fix = primary_fix(finding)
    return {
        "code": finding.code,
        "message": finding.message,
        "severity": finding.severity.value,
        "filename": os.path.abspath(finding.span.path or path),
        "location": _location(finding.span.line, finding.span.col),
        "end_location": _location(finding.span.end_line, finding.span.end_col),
        "noqa_row": finding.span.line,
        "url": docs_url(finding.code),
        "fix": _fix_json(fix, path) if fix is not None else None,
        "fixes": [_fix_json(each, path) for each in finding.fixes],
        "related": [
            {
                "message": related.message,
                "filename": os.path.abspath(related.span.path or path),
                "location": _location(related.span.line, related.span.col),
                "end_location": _location(related.span.end_line, related.span.end_col),
            }
            for related in finding.related
        ],
    }


def as_json(reports: list[FileReport]) -> str:
    return json.dumps([finding_json(f, path) for path, f in _findings(reports)], indent=2) + "\n"


# -- sarif ----------------------------------------------------------------------------------


def _uri(path: str) -> dict:
    shown = display(path)
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    return {"uri": Path(shown).as_posix(), "uriBaseId": "%SRCROOT%"}


def _region(span: Span) -> dict:
    return {
        "startLine": span.line,
        "startColumn": span.col + 1,
        "endLine": span.end_line,
        "endColumn": span.end_col + 1,
    }


def _physical(span: Span, path: str) -> dict:
    return {"artifactLocation": _uri(span.path or path), "region": _region(span)}


_LEVEL = {"error": "error", "warning": "warning"}


def _sarif_rule(rule) -> dict:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.documentation(), "markdown": rule.documentation()},
        "help": {"text": rule.summary, "markdown": rule.documentation()},
        "helpUri": docs_url(rule.code),
        "defaultConfiguration": {"level": _LEVEL[rule.severity.value]},
        "properties": {"tags": ["correctness", "jax", "pallas"]},
    }


def _sarif_fix(fix: Fix, path: str) -> dict:
    by_file: dict[str, list] = {}
    for edit in fix.edits:
        by_file.setdefault(edit.span.path or path, []).append(
            {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.new_text}})
    return {
        "description": {"text": f"{fix.title} ({fix.applicability.value})"},
        "artifactChanges": [{"artifactLocation": _uri(file), "replacements": replacements}
                            for file, replacements in by_file.items()],
    }


def sarif(reports: list[FileReport]) -> str:
    index = {rule.code: position for position, rule in enumerate(RULES)}
    results = []
    for path, finding in _findings(reports):
        result: dict[str, Any] = {
            "ruleId": finding.code,
            "level": _LEVEL[finding.severity.value],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": _physical(finding.span, path)}],
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        if finding.related:
            result["relatedLocations"] = [
                {"id": number, "physicalLocation": _physical(related.span, path),
                 "message": {"text": related.message}}
                for number, related in enumerate(finding.related)
            ]
        if finding.fixes:
            result["fixes"] = [_sarif_fix(fix, path) for fix in finding.fixes]
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": TOOL,
                "version": __version__,
                "informationUri": PROJECT_URL,
                "rules": [_sarif_rule(rule) for rule in RULES],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.getcwd()).as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"


# -- github ---------------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(reports: list[FileReport]) -> str:
    """GitHub Actions workflow commands: an annotation per finding on the pull request."""
    lines = []
    for path, finding in _findings(reports):
        span = finding.span
        properties = ",".join(f"{key}={_escape_property(str(value))}" for key, value in (
            ("title", f"{TOOL} ({finding.code})"),
            ("file", display(span.path or path)),
            ("line", span.line), ("col", span.col + 1),
            ("endLine", span.end_line), ("endColumn", span.end_col + 1),
        ))
        text = f"{_where(span, path)}: {finding.code} {finding.message}"
        lines.append(f"::{finding.severity.value} {properties}::{_escape_data(text)}\n")
    return "".join(lines)


RENDER = {"concise": concise, "full": full, "json": as_json, "sarif": sarif, "github": github}


# -- statistics -----------------------------------------------------------------------------


def statistics(reports: list[FileReport], unsafe: bool, fmt: str) -> str:
    """A count per code, most frequent first (ruff's `--statistics`)."""
    counts = Counter(f.code for _, f in _findings(reports))
    fixable = {f.code for _, f in _findings(reports) if fix_to_apply(f, unsafe)}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        return json.dumps([
            {"code": code, "name": BY_CODE[code].name if code in BY_CODE else None,
             "count": count, "fixable": code in fixable}
            for code, count in rows
        ], indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(count)) for _, count in rows)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if code in fixable else '[ ]'} "
        f"{BY_CODE[code].name if code in BY_CODE else ''}\n"
        for code, count in rows
    )


# -- the closing line -----------------------------------------------------------------------


def _errors(count: int) -> str:
    return f"{count} error" + ("" if count == 1 else "s")


def _fixes(count: int) -> str:
    return f"{count} hidden fix" + ("" if count == 1 else "es")


def summary(reports: list[FileReport], *, fixed: int | None, unsafe: bool) -> str:
    """ruff's closing lines: `All checks passed!`, `Found 3 errors.` with what --fix could do,
    or `Found 3 errors (2 fixed, 1 remaining).` after --fix."""
    remaining = [f for _, f in _findings(reports)]
    if fixed is not None and fixed:
        return f"Found {_errors(fixed + len(remaining))} ({fixed} fixed, {len(remaining)} remaining).\n"
    if not remaining:
        return "All checks passed!\n"
    text = f"Found {_errors(len(remaining))}.\n"
    if fixed is not None:
        return text
    applicable = sum(1 for f in remaining if fix_to_apply(f, unsafe))
    hidden = 0 if unsafe else sum(1 for f in remaining if not fix_to_apply(f) and fix_to_apply(f, True))
    hint = f" ({_fixes(hidden)} can be enabled with the `--unsafe-fixes` option)" if hidden else ""
    if applicable:
        flag = "`--fix --unsafe-fixes`" if unsafe else "`--fix`"
        text += f"[*] {applicable} fixable with the {flag} option{hint}.\n"
    elif hidden:
        text += f"No fixes available{hint}.\n"
    return text
