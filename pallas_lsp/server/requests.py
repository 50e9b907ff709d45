"""The requests the server answers, one small function each (as ruff's
`server/api/requests/*.rs`): each waits for the analysis of the document's current text and
turns it into the answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types as t

from . import convert
from .features import feature
from .hover import hover_markdown

if TYPE_CHECKING:
    from .server import PallasServer


@feature(t.INITIALIZE)
def initialize(ls: PallasServer, params: t.InitializeParams) -> None:
    ls.session.take_initialization_options(params.initialization_options)


@feature(t.SHUTDOWN)
def shutdown(ls: PallasServer, params: None) -> None:
    ls.scheduler.shutdown()


@feature(
    t.TEXT_DOCUMENT_DIAGNOSTIC,
    t.DiagnosticOptions(identifier="pallas", inter_file_dependencies=True, workspace_diagnostics=False),
)
async def diagnostic(
    ls: PallasServer, params: t.DocumentDiagnosticParams,
) -> t.RelatedFullDocumentDiagnosticReport | t.RelatedUnchangedDocumentDiagnosticReport:
    uri = params.text_document.uri
    analysis = await ls.scheduler.current_analysis(ls.session.key_of(uri))
    if analysis is None:
        return t.RelatedFullDocumentDiagnosticReport(items=[])
    await ls.scheduler.settle_reporters(uri)
    result_id = ls.scheduler.result_id(uri, analysis)
    if params.previous_result_id == result_id:
        return t.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return t.RelatedFullDocumentDiagnosticReport(items=ls.scheduler.diagnostics_for(uri), result_id=result_id)


@feature(
    t.TEXT_DOCUMENT_CODE_ACTION,
    t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix, t.CodeActionKind.SourceFixAll,
                                           convert.FIX_ALL_KIND]),
)
async def code_action(ls: PallasServer, params: t.CodeActionParams) -> list[t.CodeAction]:
    uri = params.text_document.uri
    only = params.context.only
    actions: list[t.CodeAction] = []
    if _wants(only, t.CodeActionKind.QuickFix):
        version = ls.scheduler.version_for_fixes(uri)
        noqa_for = _noqa_for(ls, uri)
        for diagnostic in params.context.diagnostics:
            ours = _with_data(ls, uri, diagnostic)
            if ours is not None:
                actions += convert.quick_fixes(ours, version, ls.session.version_of, ls.session.document_changes,
                                               noqa_for)
    if _wants(only, convert.FIX_ALL_KIND, explicit=True):
        action = await _fix_all(ls, uri)
        if action is not None:
            actions.append(action)
    return actions


@feature(t.TEXT_DOCUMENT_HOVER)
async def hover(ls: PallasServer, params: t.HoverParams) -> t.Hover | None:
    uri = params.text_document.uri
    analysis = await ls.scheduler.current_analysis(ls.session.key_of(uri))
    if analysis is None:
        return None
    markdown = hover_markdown(analysis, ls.scheduler.diagnostics_for(uri), uri, params.position,
                              ls.session.line_text(uri, params.position.line))
    if markdown is None:
        return None
    return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=markdown))


def _wants(only: Sequence[str] | None, kind: str, explicit: bool = False) -> bool:
    """Does the request's `only` filter admit `kind`? (`source.fixAll` admits ours.) With
    `explicit`, an absent filter does not count: fix-all is offered only when asked for, as
    editors ask for it on save."""
    if not only:
        return not explicit
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _with_data(ls: PallasServer, uri: str, diagnostic: t.Diagnostic) -> t.Diagnostic | None:
    """Our diagnostic with its fixes. Clients that send back only code, message and range
    (Vim's ALE) get it matched against the current diagnostics by code and range."""
    if diagnostic.source == convert.SOURCE and isinstance(diagnostic.data, dict):
        return diagnostic
    if not str(diagnostic.code or "").startswith("PLS"):
        return None
    if ls.scheduler.last_analysis(ls.session.key_of(uri)) is None:
        return None
    return next((ours for ours in ls.scheduler.diagnostics_for(uri)
                 if ours.code == diagnostic.code and ours.range == diagnostic.range), None)


def _noqa_for(ls: PallasServer, uri: str) -> convert.NoqaFor:
    """Noqa edits computed from the text of the analysis that made the diagnostics: its line
    numbers are in that text (a notebook's cells joined), and only its version of `uri` may
    be edited with them."""
    analysis = ls.scheduler.last_analysis(ls.session.key_of(uri))

    def noqa_for(version: int | None, line: int, code: str) -> dict | None:
        if analysis is None or analysis.snapshot.versions.get(uri, analysis.snapshot.version) != version:
            return None
        if (line, code) not in analysis.noqa_edits:  # editors ask again at every cursor move
            locate = analysis.snapshot.locator(ls.workspace.position_codec, ls.session.text_of)
            analysis.noqa_edits[line, code] = convert.noqa_fix(analysis.snapshot.text, locate, line, code)
        edit = analysis.noqa_edits[line, code]
        return edit if edit is not None and edit["uri"] == uri else None

    return noqa_for


async def _fix_all(ls: PallasServer, uri: str) -> t.CodeAction | None:
    analysis = await ls.scheduler.current_analysis(ls.session.key_of(uri))
    if analysis is None:
        return None
    snapshot = analysis.snapshot
    locate = snapshot.locator(ls.workspace.position_codec, ls.session.text_of)
    edits = convert.fix_all_edits(analysis.findings, snapshot.path, snapshot.key, uri, locate)
    if not edits:
        return None
    return t.CodeAction(
        title=f"{convert.SOURCE}: Fix all auto-fixable problems",
        kind=convert.FIX_ALL_KIND,
        edit=convert.workspace_edit(edits, ls.session.version_of, ls.session.document_changes),
    )
