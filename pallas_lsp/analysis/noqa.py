"""`# noqa` comments: which findings they silence, and the edit that adds one.

The syntax is flake8's, which ruff shares: `# noqa` silences every code on its line,
`# noqa: PLS001, PLS002` the listed codes (a code prefix silences the codes it starts).
`# pallas-lint: noqa` (optionally with codes) anywhere in a file silences the whole file.
A finding belongs to the line where it starts.
"""

from __future__ import annotations

import functools
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .findings import Applicability, Edit, Finding, Fix, Severity, Span
from .source import Lines

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*pallas-lint:\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
                        re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
_NAMES_A_PLS_CODE = re.compile(r"#\s*noqa:[^\n]*PLS", re.IGNORECASE)
ALL = frozenset({""})  # the prefix every code starts with
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass
class Directives:
    lines: dict[int, frozenset[str]] = field(default_factory=dict)  # line -> code prefixes
    file: frozenset[str] = frozenset()
    comments: dict[int, tuple[int, str]] = field(default_factory=dict)  # line -> (col, text)

    def silences(self, finding: Finding) -> bool:
        prefixes = self.file | self.lines.get(finding.line, frozenset())
        return any(finding.code.startswith(prefix) for prefix in prefixes)


def directives(text: str) -> Directives:
    """The noqa comments of a source text (real comments only, never text inside strings)."""
    found = Directives()
    for line, col, comment in _tokens(text).comments:
        found.comments[line] = (col, comment)
        whole_file = _FILE_NOQA.search(comment)
        if whole_file:
            found.file |= _prefixes(whole_file.group("codes"))
            continue
        match = _NOQA.search(comment)
        if match:
            found.lines[line] = _prefixes(match.group("codes"))
    return found


def _prefixes(codes: str | None) -> frozenset[str]:
    return frozenset(code.upper() for code in _CODE.findall(codes)) if codes else ALL


@dataclass(frozen=True)
class _Tokens:
    comments: tuple[tuple[int, int, str], ...]  # (line, column, text) of each comment
    open_string_lines: frozenset[int]  # lines whose end is inside a string
    fails_at: int | None  # the line where tokenizing stopped, if it did


@functools.lru_cache(maxsize=8)
def _tokens(text: str) -> _Tokens:
    """One tokenize pass per text: the server asks once per diagnostic of the same buffer."""
    comments: list[tuple[int, int, str]] = []
    open_lines: set[int] = set()
    fails_at = None
    reached = 1
    fstrings: list[int] = []  # Python 3.12 tokenizes an f-string in parts
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            reached = token.start[0]
            if token.type == tokenize.COMMENT:
                comments.append((token.start[0], token.start[1], token.string))
            elif token.type == tokenize.STRING and token.end[0] > token.start[0]:
                open_lines.update(range(token.start[0], token.end[0]))
            elif token.type == _FSTRING_START:
                fstrings.append(token.start[0])
            elif token.type == _FSTRING_END and fstrings:
                open_lines.update(range(fstrings.pop(), token.end[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        fails_at = reached
    return _Tokens(tuple(comments), frozenset(open_lines), fails_at)


def code_at(line: str, column: int) -> str | None:
    """The code written at `column` in a `# noqa: ...` comment of `line` (for hovers)."""
    match = _NOQA.search(line)
    if match is None or not match.group("codes"):
        return None
    for code in _CODE.finditer(match.group("codes")):
        start = match.start("codes") + code.start()
        if start <= column <= start + len(code.group(0)):
            return code.group(0).upper()
    return None


def unsilenced(findings: Iterable[Finding], text: str,
               text_of: Callable[[str], str | None] | None = None) -> tuple[list[Finding], int]:
    """The findings no noqa comment silences, and how many were silenced. A finding in another
    file (a helper module's MMA) is silenced by a comment there, or at its anchor here;
    `text_of(path)` reads that file."""
    findings = list(findings)
    if not findings:
        return findings, 0
    marks = directives(text) if "noqa" in text.lower() else Directives()
    others: dict[str, Directives] = {}

    def silenced(finding: Finding) -> bool:
        path = finding.span.path
        if path is None:
            return marks.silences(finding)
        if finding.anchor is not None and marks.silences(finding.in_analysed_file()):
            return True
        if path not in others:
            other = text_of(path) if text_of is not None else None
            others[path] = directives(other) if other and "noqa" in other.lower() else Directives()
        return others[path].silences(finding)

    kept = [finding for finding in findings if not silenced(finding)]
    return kept, len(findings) - len(kept)


def noqa_edit(text: str, line: int, codes: Iterable[str], marks: Directives | None = None) -> Edit | None:
    """The edit that makes `line` silence `codes`: a new `  # noqa: CODES` at the end of the
    line, or the codes added to the noqa comment already there. None when nothing is needed
    or the line ends inside a string (a comment cannot go there)."""
    marks = marks or directives(text)
    wanted = sorted(set(codes))
    current = marks.lines.get(line)
    if current is not None:
        missing = [code for code in wanted if not any(code.startswith(p) for p in current)]
        return _extend(text, line, marks, missing) if missing else None
    lines = Lines(text)
    content = lines.text(line)
    if not _ends_in_code(text, line):
        return None
    end = len(content.rstrip())
    return Edit(Span(line, end, line, len(content)), f"  # noqa: {', '.join(wanted)}")


def _extend(text: str, line: int, marks: Directives, missing: list[str]) -> Edit | None:
    col, comment = marks.comments[line]
    match = _NOQA.search(comment)
    if match is None or not match.group("codes"):
        return None
    end = col + match.end("codes")
    return Edit(Span(line, end, line, end), "".join(f", {code}" for code in missing))


def _ends_in_code(text: str, line: int) -> bool:
    """Is the end of `line` outside any string (so a comment may follow)? Not past the place
    where the text stops tokenizing."""
    tokens = _tokens(text)
    if tokens.fails_at is not None and line >= tokens.fails_at:
        return False
    return line not in tokens.open_string_lines


def add_noqa(text: str, findings: Iterable[Finding]) -> list[Edit]:
    """One edit per line with findings, silencing them all (for `--add-noqa` baselines)."""
    by_line: dict[int, set[str]] = {}
    for finding in findings:
        by_line.setdefault(finding.line, set()).add(finding.code)
    marks = directives(text)
    edits = (noqa_edit(text, line, codes, marks) for line, codes in sorted(by_line.items()))
    return [edit for edit in edits if edit is not None]


def unused(text: str, findings: Iterable[Finding], enabled: Callable[[str], bool],
           known: Iterable[str]) -> list[Finding]:
    """PLS100 findings (ruff's RUF100) for the `# noqa: ...` comments of `text` whose `PLS`
    codes silence none of `findings` (every finding of the file, before noqa comments are
    applied). Codes of other tools and bare `# noqa` are not ours to judge; codes that
    `enabled` says are not selected are left alone (ruff's "non-enabled"); codes starting with
    `PLS` that prefix no code in `known` are reported as unknown."""
    if not _NAMES_A_PLS_CODE.search(text):  # no noqa comment names one of ours: no tokenizing
        return []
    known = tuple(known)
    by_line: dict[int, set[str]] = {}
    for finding in findings:
        by_line.setdefault(finding.line, set()).add(finding.code)
    lines = Lines(text)
    result = []
    for line, col, comment in _tokens(text).comments:
        if _FILE_NOQA.search(comment):
            continue
        match = _NOQA.search(comment)
        if match is None or not match.group("codes"):
            continue
        written = [code.group(0).upper() for code in _CODE.finditer(match.group("codes"))]
        if any(UNUSED_CODE.startswith(code) for code in written if code.startswith("PLS")):
            continue  # naming PLS100 in the comment keeps it as it is
        codes_here = by_line.get(line, set())
        unused_codes, unknown_codes = [], []
        for code in written:
            if not code.startswith("PLS") or any(c.startswith(code) for c in codes_here):
                continue
            if not any(c.startswith(code) for c in known):
                unknown_codes.append(code)
            elif any(enabled(c) for c in known if c.startswith(code)):
                unused_codes.append(code)
        if not unused_codes and not unknown_codes:
            continue
        start, end = col + match.start(), col + match.end()
        parts = ([f"unused: {', '.join(f'`{c}`' for c in unused_codes)}"] if unused_codes else []) + \
                ([f"unknown: {', '.join(f'`{c}`' for c in unknown_codes)}"] if unknown_codes else [])
        dropped = set(unused_codes) | set(unknown_codes)
        kept = [code for code in written if code not in dropped]
        result.append(Finding(
            UNUSED_CODE, f"Unused `noqa` directive ({'; '.join(parts)})", Span(line, start, line, end),
            Severity.WARNING,
            fixes=(Fix("Remove unused `noqa` directive" if not kept else "Remove the unused codes",
                       Applicability.SAFE, (_removal(lines.text(line), line, start, end, match, col, kept),),
                       preferred=True),),
        ))
    return result


UNUSED_CODE = "PLS100"


def _removal(content: str, line: int, start: int, end: int, match: re.Match[str], col: int,
             kept: list[str]) -> Edit:
    if kept:  # rewrite the code list only
        codes_start, codes_end = col + match.start("codes"), col + match.end("codes")
        return Edit(Span(line, codes_start, line, codes_end), ", ".join(kept))
    before = content[:start]
    stripped = before.rstrip()
    if end >= len(content.rstrip("\r\n")) or not content[end:].strip():
        # the directive ends the line: remove it with the blanks before it
        return Edit(Span(line, len(stripped) if stripped else start, line, end), "")
    return Edit(Span(line, start, line, end), "")
