"""Findings and fixes as LSP objects: positions in the client's encoding, diagnostics whose
`data` carries every fix, and code actions rebuilt from that data without re-analysing (the
noqa comment's place is computed then, from the analysed text)."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from lsprotocol import types as t
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from pallas_lsp.analysis import (
    BY_CODE, Applicability, Edit, Finding, Fix, Severity, Span, noqa_edit, plan_fixes, split_lines,
)

SOURCE = "pallas"
FIX_ALL_KIND = "source.fixAll.pallas"

_SEVERITY = {Severity.ERROR: t.DiagnosticSeverity.Error, Severity.WARNING: t.DiagnosticSeverity.Warning}


class Positions:
    """Code-point spans of one text as ranges in the client's position encoding."""

    def __init__(self, text: str, codec: PositionCodec, first_line: int = 0) -> None:
        self.lines = split_lines(text) or [""]
        self.codec = codec
        self.first_line = first_line  # where this text starts in the analysed text (notebook cells)

    def position(self, line: int, col: int) -> t.Position:
        """`line` 1-based in the analysed text, `col` in code points."""
        row = line - 1 - self.first_line
        if row >= len(self.lines):
            return t.Position(len(self.lines), 0)
        return self.codec.position_to_client_units(self.lines, t.Position(max(row, 0), col))

    def range(self, span: Span) -> t.Range:
        return t.Range(self.position(span.line, span.col), self.position(span.end_line, span.end_col))

    def span(self, range_: t.Range) -> Span:
        """A client range as a code-point span (1-based lines) of this text."""
        start = self.codec.position_from_client_units(self.lines, t.Position(range_.start.line, range_.start.character))
        end = self.codec.position_from_client_units(self.lines, t.Position(range_.end.line, range_.end.character))
        first = self.first_line + 1
        return Span(start.line + first, start.character, end.line + first, end.character)


@dataclass
class Target:
    """Where a span of the analysed text lands in the editor: a document and its positions."""

    uri: str
    positions: Positions


# A locator maps a span to its Target: the analysed document, one of its notebook cells, or
# another file (a fix editing a helper module); None when that file cannot be read.
Locator = Callable[[Span], "Target | None"]


def diagnostic(finding: Finding, locate: Locator, versions: dict[str, int | None], related_support: bool,
               noqa: bool = True) -> tuple[str, t.Diagnostic] | None:
    """The finding as (uri, Diagnostic), or None when its place cannot be mapped. `versions`:
    the version of each document the analysed text came from; `noqa`: a comment on its line
    may silence it (it is in the analysed text)."""
    target = locate(finding.span)
    if target is None:
        return None
    rule = BY_CODE.get(finding.code)
    related = _related(finding, locate) if related_support else []
    message = finding.message if related_support or not finding.related else _with_related(finding)
    return target.uri, t.Diagnostic(
        range=target.positions.range(finding.span),
        message=message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=t.CodeDescription(href=rule.url()) if rule else None,
        source=SOURCE,
        related_information=related or None,
        data=_data(finding, locate, versions.get(target.uri), noqa),
    )


def _related(finding: Finding, locate: Locator) -> list[t.DiagnosticRelatedInformation]:
    found = []
    for related in finding.related:
        target = locate(related.span)
        if target is not None:
            location = t.Location(uri=target.uri, range=target.positions.range(related.span))
            found.append(t.DiagnosticRelatedInformation(location=location, message=related.message))
    return found


def _with_related(finding: Finding) -> str:
    notes = "; ".join(f"{related.message} (line {related.span.line})" for related in finding.related)
    return f"{finding.message} [{notes}]"


def _data(finding: Finding, locate: Locator, version: int | None, noqa: bool) -> dict:
    fixes = [fix for fix in (_fix_data(fix, locate) for fix in finding.fixes) if fix is not None]
    data: dict[str, Any] = {"version": version, "fixes": fixes}
    if noqa:
        # Where the comment goes is decided when a code action asks (`noqa_fix`): placing it
        # tokenizes the whole buffer (a third of a second on a 10,000-line file), which
        # every keystroke would pay here for an action rarely taken.
        data["noqa"] = {"line": finding.line, "code": finding.code}
    return data


def noqa_fix(text: str, locate: Locator, line: int, code: str) -> dict | None:
    """The edit (as diagnostic data carries edits) that silences `code` on `line` of the
    analysed `text`; None when no comment can go there or one already silences it."""
    edit = noqa_edit(text, line, [code])
    return edit_data(edit, locate) if edit is not None else None


def _fix_data(fix: Fix, locate: Locator) -> dict | None:
    if fix.applicability is Applicability.DISPLAY_ONLY:
        return None
    edits = [edit_data(edit, locate) for edit in fix.edits]
    if not edits or None in edits:
        return None
    return {
        "title": fix.title,
        "applicability": fix.applicability.value,
        "preferred": fix.preferred,
        "edits": edits,
    }


def edit_data(edit: Edit, locate: Locator) -> dict | None:
    """An edit as carried in diagnostic data: its document, client-unit range and text."""
    target = locate(edit.span)
    if target is None:
        return None
    range_ = target.positions.range(edit.span)
    return {"uri": target.uri, "range": _range_json(range_), "newText": edit.new_text}


def _range_json(range_: t.Range) -> dict:
    return {
        "start": {"line": range_.start.line, "character": range_.start.character},
        "end": {"line": range_.end.line, "character": range_.end.character},
    }


def _range(data: dict) -> t.Range:
    start, end = data["start"], data["end"]
    return t.Range(t.Position(start["line"], start["character"]), t.Position(end["line"], end["character"]))


# -- code actions ----------------------------------------------------------------------------

VersionOf = Callable[[str], "int | None"]  # the open document's version, None when not open
# The noqa edit of a diagnostic's line and code, for the version its data carries (None: none).
NoqaFor = Callable[[int | None, int, str], "dict | None"]


def workspace_edit(edits: list[dict], version_of: VersionOf, document_changes: bool) -> t.WorkspaceEdit:
    """Edits (as carried in diagnostic data) grouped by document; versioned `documentChanges`
    where the client supports them, so a stale edit is refused rather than misapplied."""
    by_uri: dict[str, list[t.TextEdit]] = {}
    for edit in edits:
        by_uri.setdefault(edit["uri"], []).append(t.TextEdit(range=_range(edit["range"]), new_text=edit["newText"]))
    if not document_changes:
        return t.WorkspaceEdit(changes=by_uri)
    return t.WorkspaceEdit(document_changes=[
        t.TextDocumentEdit(
            text_document=t.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version_of(uri)),
            edits=list(text_edits),
        )
        for uri, text_edits in by_uri.items()
    ])


def quick_fixes(diag: t.Diagnostic, version: int | None, version_of: VersionOf,
                document_changes: bool, noqa_for: NoqaFor) -> list[t.CodeAction]:
    """The code actions of one of our diagnostics, from its data; none when the data belongs
    to another version of the document (its ranges would be stale)."""
    data = diag.data if isinstance(diag.data, dict) else None
    if data is None or data.get("version") != version:
        return []
    actions = []
    for fix in data.get("fixes", []):
        actions.append(t.CodeAction(
            title=f"{SOURCE} ({diag.code}): {fix['title']}",
            kind=t.CodeActionKind.QuickFix,
            diagnostics=[diag],
            is_preferred=bool(fix.get("preferred")),
            edit=workspace_edit(fix["edits"], version_of, document_changes),
        ))
    marker = _noqa_marker(data)
    noqa = noqa_for(version, *marker) if marker is not None else None
    if noqa is not None:
        actions.append(t.CodeAction(
            title=f"{SOURCE} ({diag.code}): Disable for this line",
            kind=t.CodeActionKind.QuickFix,
            diagnostics=[diag],
            edit=workspace_edit([noqa], version_of, document_changes),
        ))
    return actions


def _noqa_marker(data: dict) -> tuple[int, str] | None:
    """The line and code a noqa comment would silence. Data comes back from the client:
    trust its shape only after looking."""
    marker = data.get("noqa")
    if isinstance(marker, dict) and isinstance(marker.get("line"), int) and isinstance(marker.get("code"), str):
        return marker["line"], marker["code"]
    return None


def fix_all_edits(findings: list[Finding], path: str | None, key: str, uri: str, locate: Locator) -> list[dict]:
    """The safe fixes of the findings of `path` (the analysed file; `key` its document or
    notebook) that edit only that file, as the edit data of the document `uri`."""
    own = [finding for finding in findings
           if all(edit.span.path in (None, path) for fix in finding.fixes for edit in fix.edits)]
    plan = plan_fixes(path or key, own, unsafe=False)
    edits = []
    for file_edits in plan.edits.values():
        for edit in file_edits:
            data = edit_data(edit, locate)
            if data is not None and data["uri"] == uri:
                edits.append(data)
    return edits


def file_uri(path: str) -> str:
    return from_fs_path(path) or path
