"""The LSP methods the server answers: thin handlers over `PallasServer`."""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types as t

from . import convert
from .server import (
    ClientLogHandler, PallasServer, fix_all_edits, hover_markdown, line_text, log, set_log_level,
)
from .settings import EditorSettings
from .units import path_of

WATCHED = ("**/pyproject.toml", "**/*.py")


def create_server() -> PallasServer:
    server = PallasServer()
    handler = ClientLogHandler(server)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger("pallas_lsp").addHandler(handler)
    # pygls logs every message body at INFO: keep it quiet whatever the root logger does.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    _register(server, handler)
    return server


def _register(server: PallasServer, handler: ClientLogHandler) -> None:  # noqa: C901 - one handler per method
    @server.feature(t.INITIALIZE)
    def initialize(ls: PallasServer, params: t.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            raw = options.get("settings", options)
            ls.initial_settings = EditorSettings.parse(raw.get(SECTION_KEY, raw) if isinstance(raw, dict) else raw)
            ls.global_settings = ls.initial_settings
            set_log_level(ls.global_settings.log_level)

    @server.feature(t.INITIALIZED)
    async def initialized(ls: PallasServer, params: t.InitializedParams) -> None:
        handler.loop = asyncio.get_running_loop()
        await ls.load_configuration()
        await _watch_files(ls)
        ls.relint_all()

    @server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: PallasServer, params: t.DidChangeConfigurationParams) -> None:
        caps = ls.client_capabilities.workspace
        if caps and caps.configuration:
            await ls.load_configuration()
        elif isinstance(params.settings, dict):
            ls.global_settings = EditorSettings.parse(params.settings.get(SECTION_KEY, params.settings))
            set_log_level(ls.global_settings.log_level)
        ls.relint_all()

    @server.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(ls: PallasServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
        await ls.load_configuration()  # per-folder settings for the new set of folders
        ls.relint_all()

    @server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: PallasServer, params: t.DidChangeWatchedFilesParams) -> None:
        paths = [path_of(change.uri) for change in params.changes]
        if any(path and os.path.basename(path) == "pyproject.toml" for path in paths):
            ls.relint_all()
            return
        for path in paths:
            if path and path.endswith(".py"):
                ls.relint_dependents(path)

    @server.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PallasServer, params: t.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PallasServer, params: t.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.on_edit(uri, path_of(uri))

    @server.feature(t.TEXT_DOCUMENT_DID_SAVE, t.SaveOptions(include_text=False))
    def did_save(ls: PallasServer, params: t.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = path_of(uri)
        if path and os.path.basename(path) == "pyproject.toml":
            ls.relint_all()
            return
        if ls.editor_settings(path).run == "onSave":
            ls.schedule(uri)
        if path:
            ls.relint_dependents(path)

    @server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PallasServer, params: t.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(t.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: PallasServer, params: t.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(t.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: PallasServer, params: t.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        ls.on_edit(uri, None)

    @server.feature(t.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: PallasServer, params: t.DidSaveNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if ls.editor_settings(path_of(uri)).run == "onSave":
            ls.schedule(uri)

    @server.feature(t.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: PallasServer, params: t.DidCloseNotebookDocumentParams) -> None:
        ls.close(params.notebook_document.uri)
        if not ls.pull:
            for cell in params.cell_text_documents:
                ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(
        t.TEXT_DOCUMENT_DIAGNOSTIC,
        t.DiagnosticOptions(identifier="pallas", inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def pull_diagnostics(ls: PallasServer, params: t.DocumentDiagnosticParams):
        uri = params.text_document.uri
        analysis = await ls.current_analysis(ls.key_of(uri))
        if analysis is None:
            return t.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = f"{analysis.snapshot.versions.get(uri)}:{analysis.generation}"
        if params.previous_result_id == result_id:
            return t.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return t.RelatedFullDocumentDiagnosticReport(items=analysis.diagnostics.get(uri, []), result_id=result_id)

    @server.feature(
        t.TEXT_DOCUMENT_CODE_ACTION,
        t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix, t.CodeActionKind.SourceFixAll,
                                               convert.FIX_ALL_KIND]),
    )
    async def code_action(ls: PallasServer, params: t.CodeActionParams) -> list[t.CodeAction]:
        uri = params.text_document.uri
        only = params.context.only
        actions: list[t.CodeAction] = []
        if _wants(only, t.CodeActionKind.QuickFix):
            version = _version(ls, uri)
            for diagnostic in params.context.diagnostics:
                ours = _with_data(ls, uri, diagnostic)
                if ours is not None:
                    actions += convert.quick_fixes(ours, version, ls.version_of, ls.document_changes)
        if _wants(only, convert.FIX_ALL_KIND, explicit=True):
            action = await _fix_all(ls, uri)
            if action is not None:
                actions.append(action)
        return actions

    @server.feature(t.TEXT_DOCUMENT_HOVER)
    async def hover(ls: PallasServer, params: t.HoverParams) -> t.Hover | None:
        uri = params.text_document.uri
        analysis = await ls.current_analysis(ls.key_of(uri))
        if analysis is None:
            return None
        markdown = hover_markdown(analysis, uri, params.position, line_text(ls, uri, params.position.line))
        if markdown is None:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=markdown))

    @server.feature(t.SHUTDOWN)
    def shutdown(ls: PallasServer, params: None) -> None:
        ls.shutdown()


SECTION_KEY = "pallas"


def _wants(only: list | None, kind: str, explicit: bool = False) -> bool:
    """Does the request's `only` filter admit `kind`? (`source.fixAll` admits ours.) With
    `explicit`, an absent filter does not count: fix-all is offered only when asked for, as
    editors ask for it on save."""
    if not only:
        return not explicit
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _with_data(ls: PallasServer, uri: str, diagnostic: t.Diagnostic) -> t.Diagnostic | None:
    """Our diagnostic with its fixes. Clients that send back only code, message and range
    (Vim's ALE) get it matched against the current analysis by code and range."""
    if diagnostic.source == convert.SOURCE and isinstance(diagnostic.data, dict):
        return diagnostic
    if not str(diagnostic.code or "").startswith("PLS"):
        return None
    unit = ls.units.get(ls.key_of(uri))
    analysis = unit.analysis if unit is not None else None
    if analysis is None:
        return None
    return next((ours for ours in analysis.diagnostics.get(uri, [])
                 if ours.code == diagnostic.code and ours.range == diagnostic.range), None)


def _version(ls: PallasServer, uri: str) -> int | None:
    key = ls.key_of(uri)
    unit = ls.units.get(key)
    if unit is not None and unit.analysis is not None:
        snapshot = ls.snapshot(key)
        if snapshot is not None:
            return snapshot.versions.get(uri)
    return ls.version_of(uri)


async def _fix_all(ls: PallasServer, uri: str) -> t.CodeAction | None:
    key = ls.key_of(uri)
    analysis = await ls.current_analysis(key)
    if analysis is None:
        return None
    locate = analysis.snapshot.locator(ls.workspace.position_codec, ls.text_of)
    edits = fix_all_edits(analysis, uri, locate)
    if not edits:
        return None
    return t.CodeAction(
        title=f"{convert.SOURCE}: Fix all auto-fixable problems",
        kind=convert.FIX_ALL_KIND,
        edit=convert.workspace_edit(edits, ls.version_of, ls.document_changes),
    )


async def _watch_files(ls: PallasServer) -> None:
    caps = ls.client_capabilities.workspace
    watch = caps.did_change_watched_files if caps else None
    if not (watch and watch.dynamic_registration):
        return
    options = t.DidChangeWatchedFilesRegistrationOptions(
        watchers=[t.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED])
    registration = t.Registration(id="pallas-watch", method=t.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                  register_options=options)
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(t.RegistrationParams(registrations=[registration])), 10)
    except Exception as error:  # noqa: BLE001 - the editor simply won't tell us about files
        log.info("could not watch files: %s", error)
