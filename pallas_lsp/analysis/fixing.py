"""Choosing fixes and writing them to files, for the CLI (`--fix`, `--diff`, `--add-noqa`) and
the server's fix-all.

A fix may edit another file (the allocation lives in a helper module), so a plan groups edits
by path. Files are written atomically and byte-faithfully: the encoding, the BOM, the line
endings and every byte outside an edit are kept.
"""

from __future__ import annotations

import contextlib
import io
import os
import tokenize
from dataclasses import dataclass, field

from .findings import Applicability, Edit, Finding, Fix, Span
from .noqa import add_noqa
from .source import apply_edits, decode


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str  # decoded, without the BOM
    encoding: str
    bom: bool

    @classmethod
    def read(cls, path: str) -> SourceFile:
        """Raises OSError, SyntaxError (bad cookie) or UnicodeDecodeError."""
        with open(path, "rb") as file:
            data = file.read()
        text = decode(data)
        encoding = _encoding(data)
        return cls(path, text, encoding, data.startswith(b"\xef\xbb\xbf"))

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding, errors="surrogateescape")
        return b"\xef\xbb\xbf" + data if self.bom else data


def _encoding(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return "utf-8" if encoding == "utf-8-sig" else encoding


def write_atomic(path: str, data: bytes) -> None:
    """Replace `path` by `data` so that a reader (or a crash) sees the old file or the new one,
    never a mix: write a temporary file beside it, flush it to disk, then `os.replace`."""
    directory = os.path.dirname(os.path.abspath(path))
    import tempfile  # noqa: PLC0415 - only for --fix (its import is 4 ms of every process)

    mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else None
    handle, temporary = tempfile.mkstemp(prefix=".pallas-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def fix_to_apply(finding: Finding, unsafe: bool = False) -> Fix | None:
    """The fix `--fix` applies to a finding: the preferred one among those allowed, else the
    first allowed (safe ones; unsafe ones too with `unsafe`)."""
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if unsafe else set())
    candidates = [fix for fix in finding.fixes if fix.applicability in allowed and fix.edits]
    preferred = [fix for fix in candidates if fix.preferred]
    chosen = preferred or candidates
    return chosen[0] if chosen else None


@dataclass
class Plan:
    """Edits per file (absolute paths), and the findings they fix."""

    edits: dict[str, list[Edit]] = field(default_factory=dict)
    fixed: list[Finding] = field(default_factory=list)

    def add(self, path: str, finding: Finding, fix: Fix) -> bool:
        """Take the fix unless it overlaps an edit already taken (an identical edit is shared:
        two MMAs on one allocation need `collective=True` only once)."""
        new = [(self._path(edit, path), edit) for edit in fix.edits]
        fresh = []
        for target, edit in new:
            taken = self.edits.get(target, [])
            if edit in taken or (target, edit) in fresh:
                continue
            if any(_overlap(edit, other) for other in taken):
                return False
            fresh.append((target, edit))
        for target, edit in fresh:
            self.edits.setdefault(target, []).append(_local(edit))
        self.fixed.append(finding)
        return True

    @staticmethod
    def _path(edit: Edit, path: str) -> str:
        return os.path.abspath(edit.span.path or path)


def _local(edit: Edit) -> Edit:
    """The edit in the coordinates of its own file (no path)."""
    if edit.span.path is None:
        return edit
    span = edit.span
    return Edit(Span(span.line, span.col, span.end_line, span.end_col), edit.new_text)


def _overlap(a: Edit, b: Edit) -> bool:
    a_start, a_end = (a.span.line, a.span.col), (a.span.end_line, a.span.end_col)
    b_start, b_end = (b.span.line, b.span.col), (b.span.end_line, b.span.end_col)
    if a_start == a_end == b_start == b_end:
        return True  # two insertions at one point: their order would be arbitrary
    return a_start < b_end and b_start < a_end


def plan_fixes(path: str, findings: list[Finding], unsafe: bool = False) -> Plan:
    plan = Plan()
    for finding in findings:
        fix = fix_to_apply(finding, unsafe)
        if fix is not None:
            plan.add(path, finding, fix)
    return plan


def plan_noqa(path: str, text: str, findings: list[Finding]) -> Plan:
    plan = Plan()
    edits = add_noqa(text, findings)
    if edits:
        plan.edits[os.path.abspath(path)] = edits
        plan.fixed.extend(findings)
    return plan


@dataclass(frozen=True)
class Change:
    path: str
    before: SourceFile
    after: str  # the new text (without BOM)

    def data(self) -> bytes:
        return self.before.encode(self.after)


def changes(plan: Plan, texts: dict[str, SourceFile] | None = None) -> list[Change]:
    """The new text of each file the plan touches. `texts` may supply files already read.

    Raises OSError/SyntaxError/UnicodeDecodeError when a file to edit cannot be read.
    """
    result = []
    for path, edits in plan.edits.items():
        source = (texts or {}).get(path) or SourceFile.read(path)
        after = apply_edits(source.text, edits)
        if after != source.text:
            result.append(Change(path, source, after))
    return result


def write(change: Change) -> None:
    write_atomic(change.path, change.data())
