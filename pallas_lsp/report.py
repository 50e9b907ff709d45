"""Output formats of `pallas-lint check` (ruff's, with ruff's field names): concise, full,
grouped, json, json-lines, junit, sarif, github, gitlab, pylint, rdjson, azure; statistics.

Positions: the core counts columns from 0 in code points; every format here shows them from 1
(as ruff and flake8 do), and end columns point just past the last character.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import __version__, analysis
from .analysis import (
    FILE_NOT_ANALYSED, PROJECT_URL, RULE_INFO, Applicability, Finding, Fix, Lines, Span, docs_url,
    fix_to_apply,
)
from .batch import FileReport

FORMATS = ("concise", "full", "grouped", "json", "json-lines", "junit", "sarif", "github", "gitlab",
           "pylint", "rdjson", "azure")
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


class Style:
    """ANSI colours as ruff uses them (bold paths, cyan separators, bold red codes), or none."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled

    def _paint(self, text: str, codes: str) -> str:
        return f"\x1b[{codes}m{text}\x1b[0m" if self.enabled and text else text

    def path(self, text: str) -> str:
        return self._paint(text, "1")

    def separator(self, text: str) -> str:
        return self._paint(text, "36")

    def code(self, text: str) -> str:
        return self._paint(text, "1;31")

    def fixable(self, text: str) -> str:
        return self._paint(text, "36")

    def success(self, text: str) -> str:
        return self._paint(text, "1;32")


PLAIN = Style()


def colours_wanted(stream) -> bool:
    """ruff's rule: FORCE_COLOR (or CLICOLOR_FORCE) forces colours, NO_COLOR (or CLICOLOR=0)
    turns them off, else colours on a terminal."""
    if os.environ.get("FORCE_COLOR") or os.environ.get("CLICOLOR_FORCE", "0") != "0":
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("CLICOLOR") == "0" or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _where(span: Span, path: str, style: Style = PLAIN) -> str:
    colon = style.separator(":")
    return f"{style.path(display(span.path or path))}{colon}{span.line}{colon}{span.col + 1}"


def _mark(finding: Finding, unsafe: bool, style: Style) -> str:
    """ruff's `[*]` before the message of a finding `--fix` would fix."""
    return f"{style.fixable('[*]')} " if fix_to_apply(finding, unsafe) else ""


# -- concise, full and grouped ------------------------------------------------------------


def concise(reports: list[FileReport], style: Style = PLAIN, unsafe: bool = False) -> str:
    return "".join(f"{_where(f.span, path, style)}{style.separator(':')} {style.code(f.code)} "
                   f"{_mark(f, unsafe, style)}{f.message}\n" for path, f in _findings(reports))


def grouped(reports: list[FileReport], style: Style = PLAIN, unsafe: bool = False) -> str:
    """ruff's `grouped`: a heading per file, then `line:col CODE message` indented."""
    blocks = []
    by_file: dict[str, list[Finding]] = {}
    for path, finding in _findings(reports):
        by_file.setdefault(finding.span.path or path, []).append(finding)
    for file, findings in by_file.items():
        rows = [(f"{f.line}:{f.col + 1}", f) for f in findings]
        width = max(len(where) for where, _ in rows)
        lines = [f"{style.path(display(file))}{style.separator(':')}"]
        lines += [f"  {where:<{width}} {style.code(f.code)} {_mark(f, unsafe, style)}{f.message}" for where, f in rows]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


_APPLICABILITY_NOTE = {
    Applicability.SAFE: "safe fix, applied by --fix",
    Applicability.UNSAFE: "unsafe fix, applied by --fix --unsafe-fixes",
    Applicability.DISPLAY_ONLY: "shown only, never applied",
}


def full(reports: list[FileReport], style: Style = PLAIN, unsafe: bool = False) -> str:
    """ruff's `full` format: each finding with its source line underlined, where the problem
    comes from (the allocation), and the fixes on offer."""
    sources = _Sources()
    blocks = []
    for path, finding in _findings(reports):
        lines = [f"{_where(finding.span, path, style)}{style.separator(':')} {style.code(finding.code)} "
                 f"{_mark(finding, unsafe, style)}{finding.message}"]
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
    rule = RULE_INFO.get(finding.code)
    return {
        "cell": None,
        "code": finding.code,
        "name": rule.name if rule is not None else None,
        "message": finding.message,
        "severity": finding.severity.value,
        "filename": os.path.abspath(finding.span.path or path),
        "location": _location(finding.span.line, finding.span.col),
        "end_location": _location(finding.span.end_line, finding.span.end_col),
        "noqa_row": None if finding.code == FILE_NOT_ANALYSED else finding.span.line,
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


def as_json(reports: list[FileReport], **_) -> str:
    return json.dumps([finding_json(f, path) for path, f in _findings(reports)], indent=2) + "\n"


def json_lines(reports: list[FileReport], **_) -> str:
    """ruff's `json-lines`: the `json` objects, one per line, keys sorted as ruff writes them."""
    return "".join(json.dumps(finding_json(f, path), sort_keys=True, separators=(",", ":")) + "\n"
                   for path, f in _findings(reports))


# -- junit ----------------------------------------------------------------------------------


def junit(reports: list[FileReport], **_) -> str:
    """ruff's `junit`: a testsuite per file, a failing testcase `org.<tool>.<CODE>` per finding."""
    from xml.sax.saxutils import escape, quoteattr  # noqa: PLC0415 - it imports urllib: only for this format

    by_file: dict[str, list[Finding]] = {}
    for path, finding in _findings(reports):
        by_file.setdefault(os.path.abspath(finding.span.path or path), []).append(finding)
    total = sum(len(findings) for findings in by_file.values())
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    if not by_file:
        out += [f'<testsuites name="{TOOL}" tests="1" skipped="0" failures="0" errors="0">',
                f'    <testsuite name="{TOOL}" tests="1" skipped="0" errors="0" failures="0" package="org.{TOOL}">',
                f'        <testcase name="No errors found" classname="{TOOL}"/>',
                "    </testsuite>", "</testsuites>"]
        return "\n".join(out) + "\n"
    out.append(f'<testsuites name="{TOOL}" tests="{total}" skipped="0" failures="{total}" errors="0">')
    for file, findings in by_file.items():
        n = len(findings)
        out.append(f'    <testsuite name={quoteattr(file)} tests="{n}" skipped="0" errors="0" '
                   f'failures="{n}" package="org.{TOOL}">')
        classname = os.path.splitext(file)[0]
        for f in findings:
            text = f"line {f.line}, col {f.col + 1}, {f.message}"
            out += [f'        <testcase name="org.{TOOL}.{f.code}" classname={quoteattr(classname)} '
                    f'line="{f.line}" column="{f.col + 1}">',
                    "            <properties>",
                    f'                <property name="severity" value="{f.severity.value}"/>',
                    "            </properties>",
                    f"            <failure message={quoteattr(f.message)}>{escape(text)}</failure>",
                    "        </testcase>"]
        out.append("    </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


# -- gitlab, pylint, rdjson, azure --------------------------------------------------------


def gitlab(reports: list[FileReport], **_) -> str:
    """GitLab's Code Quality report, as ruff writes it: paths relative to CI_PROJECT_DIR (else
    the working directory); a fingerprint stable under line moves, unique within the report."""
    base = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    seen: set[str] = set()
    items = []
    for path, f in _findings(reports):
        file = os.path.abspath(f.span.path or path)
        try:
            relative = Path(os.path.relpath(file, base)).as_posix()
        except ValueError:
            relative = Path(file).as_posix()
        digest = hashlib.sha256(f"{f.code}\0{f.message}\0{relative}".encode("utf-8", "surrogatepass"))
        fingerprint = digest.hexdigest()[:16]
        while fingerprint in seen:  # the same finding twice in a file: ruff counts on
            digest.update(b"\0")
            fingerprint = digest.hexdigest()[:16]
        seen.add(fingerprint)
        items.append({
            "check_name": f.code,
            "description": f"{f.code}: {f.message}",
            "severity": "major",
            "fingerprint": fingerprint,
            "location": {"path": relative, "positions": {
                "begin": {"line": f.span.line, "column": f.span.col + 1},
                "end": {"line": f.span.end_line, "column": f.span.end_col + 1},
            }},
        })
    return json.dumps(items, indent=2) + "\n"


def pylint(reports: list[FileReport], **_) -> str:
    """pylint's parseable format, as ruff writes it: `path:line: [CODE] message`."""
    return "".join(f"{display(f.span.path or path)}:{f.line}: [{f.code}] {f.message}\n"
                   for path, f in _findings(reports))


def _rd_range(span: Span) -> dict:
    return {"end": {"column": span.end_col + 1, "line": span.end_line},
            "start": {"column": span.col + 1, "line": span.line}}


def rdjson(reports: list[FileReport], **_) -> str:
    """reviewdog's rdjson, as ruff writes it; a fix's edits to the same file are suggestions."""
    diagnostics = []
    for path, f in _findings(reports):
        file = os.path.abspath(f.span.path or path)
        item: dict[str, Any] = {
            "code": {"url": docs_url(f.code), "value": f.code},
            "location": {"path": file, "range": _rd_range(f.span)},
            "message": f.message,
        }
        fix = primary_fix(f)
        if fix is not None:
            same = [edit for edit in fix.edits if os.path.abspath(edit.span.path or path) == file]
            if same:
                item["suggestions"] = [{"range": _rd_range(edit.span), "text": edit.new_text} for edit in same]
        diagnostics.append(item)
    return json.dumps({"diagnostics": diagnostics, "severity": "WARNING",
                       "source": {"name": TOOL, "url": PROJECT_URL}}, indent=2) + "\n"


def azure(reports: list[FileReport], **_) -> str:
    """Azure Pipelines logging commands, as ruff writes them."""
    return "".join(
        f"##vso[task.logissue type={f.severity.value};sourcepath={os.path.abspath(f.span.path or path)};"
        f"linenumber={f.line};columnnumber={f.col + 1};code={f.code};]{_escape_data(f.message)}\n"
        for path, f in _findings(reports))


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
    """The rule's documentation once (`help.markdown`), linked by `helpUri`."""
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "help": {"text": f"{rule.summary}: {docs_url(rule.code)}", "markdown": rule.documentation()},
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


def sarif(reports: list[FileReport], **_) -> str:
    """SARIF 2.1.0; `rules` lists the rules of the results only, as ruff's does."""
    used = {finding.code for _, finding in _findings(reports)}
    rules = [rule for rule in analysis.REGISTRY if rule.code in used]  # with their documentation
    index = {rule.code: position for position, rule in enumerate(rules)}
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
                "rules": [_sarif_rule(rule) for rule in rules],
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


def github(reports: list[FileReport], **_) -> str:
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


RENDER: dict[str, Callable[..., str]] = {
    "concise": concise, "full": full, "grouped": grouped, "json": as_json, "json-lines": json_lines,
    "junit": junit, "sarif": sarif, "github": github, "gitlab": gitlab, "pylint": pylint,
    "rdjson": rdjson, "azure": azure,
}
TEXT_FORMATS = ("concise", "full", "grouped")  # followed by the summary, coloured on a terminal


# -- statistics -----------------------------------------------------------------------------


def statistics(reports: list[FileReport], unsafe: bool, fmt: str) -> str:
    """A count per code, most frequent first (ruff's `--statistics`)."""
    counts = Counter(f.code for _, f in _findings(reports))
    fixable = {f.code for _, f in _findings(reports) if fix_to_apply(f, unsafe)}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        return json.dumps([
            {"code": code, "name": RULE_INFO[code].name if code in RULE_INFO else None,
             "count": count, "fixable": code in fixable}
            for code, count in rows
        ], indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(count)) for _, count in rows)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if code in fixable else '[ ]'} "
        f"{RULE_INFO[code].name if code in RULE_INFO else ''}\n"
        for code, count in rows
    )


# -- the closing line -----------------------------------------------------------------------


def _errors(count: int) -> str:
    return f"{count} error" + ("" if count == 1 else "s")


def _fixes(count: int) -> str:
    return f"{count} hidden fix" + ("" if count == 1 else "es")


def summary(reports: list[FileReport], *, fixed: int | None, unsafe: bool, style: Style = PLAIN) -> str:
    """ruff's closing lines: `All checks passed!`, `Found 3 errors.` with what --fix could do,
    or `Found 3 errors (2 fixed, 1 remaining).` after --fix."""
    remaining = [f for _, f in _findings(reports)]
    if fixed is not None and fixed:
        return f"Found {_errors(fixed + len(remaining))} ({fixed} fixed, {len(remaining)} remaining).\n"
    if not remaining:
        return style.success("All checks passed!") + "\n"
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


def fixed_summary(fixed: Counter, style: Style = PLAIN) -> str:
    """ruff's `--show-fixes` enumeration: per file, how many findings of each rule were fixed."""
    if not fixed:
        return ""
    total = sum(fixed.values())
    lines = [f"Fixed {_errors(total)}:"]
    by_file: dict[str, Counter] = {}
    for (path, code), count in fixed.items():
        by_file.setdefault(path, Counter())[code] += count
    for path in sorted(by_file):
        lines.append(f"- {style.path(display(path))}:")
        for code, count in sorted(by_file[path].items(), key=lambda item: (-item[1], item[0])):
            name = RULE_INFO[code].name if code in RULE_INFO else code
            lines.append(f"    {count} \u00d7 {style.code(code)} ({name})")
    return "\n".join(lines) + "\n"
