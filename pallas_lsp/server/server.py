"""The language server: the core's findings as diagnostics, its fixes as code actions, its
facts as hovers. It adds no analysis of its own.

Analyses run one at a time on a worker thread (astroid's caches are process-wide), so the
event loop keeps answering. Each document's analysis is debounced; a newer version cancels a
queued or running one, and a result is published only for the version it was computed from.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

from pallas_lsp import __version__
from pallas_lsp.analysis import engine, lint, noqa
from pallas_lsp.analysis.facts import Fact
from pallas_lsp.analysis.findings import Finding
from pallas_lsp.analysis.fixing import plan_fixes
from pallas_lsp.analysis.rules import BY_CODE
from pallas_lsp.analysis.settings import ConfigError, Settings
from pallas_lsp.analysis.source import Lines, decode

from . import convert
from .settings import EditorSettings
from .units import Snapshot, notebook_snapshot, path_of, text_snapshot

log = logging.getLogger("pallas_lsp.server")
SECTION = "pallas"


@dataclass
class Analysis:
    snapshot: Snapshot
    findings: list[Finding]
    facts: list[Fact]
    diagnostics: dict[str, list[t.Diagnostic]]  # uri -> diagnostics
    dependencies: tuple[str, ...]
    generation: int  # settings/dependency generation it was computed in


@dataclass
class Unit:
    """The scheduling state of one document (or notebook)."""

    key: str
    task: asyncio.Task | None = None
    cancel: threading.Event | None = None
    pending_version: int | None = None  # the version the queued or running analysis is for
    analysis: Analysis | None = None
    waiters: list[asyncio.Future] = field(default_factory=list)


class PallasServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "pallas-lsp", __version__,
            notebook_document_sync=t.NotebookDocumentSyncOptions(notebook_selector=[
                t.NotebookDocumentFilterWithCells(cells=[t.NotebookCellLanguage(language="python")]),
            ]),
        )
        self.units: dict[str, Unit] = {}
        self.global_settings = EditorSettings()
        self.initial_settings = EditorSettings()  # from initializationOptions
        self.folder_settings: dict[str, EditorSettings] = {}
        self.generation = 0
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-analysis")
        engine.COLLECT_AFTER_ANALYSIS = False  # `_analyse` collects once it has published

    # -- capabilities ----------------------------------------------------------------------

    @property
    def pull(self) -> bool:
        """Does the client ask for diagnostics (then we never push them)?"""
        caps = self.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    @property
    def related_support(self) -> bool:
        caps = self.client_capabilities.text_document
        return bool(caps and caps.publish_diagnostics and caps.publish_diagnostics.related_information) or (
            self.pull and bool(caps and caps.diagnostic and caps.diagnostic.related_information)
        )

    @property
    def document_changes(self) -> bool:
        caps = self.client_capabilities.workspace
        return bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log, never pop a dialog: a linter must not interrupt the user."""
        log.error("internal error (%s): %s", getattr(source, "__name__", source), error, exc_info=error)

    # -- settings --------------------------------------------------------------------------

    def editor_settings(self, path: str | None) -> EditorSettings:
        best = None
        for folder, settings in self.folder_settings.items():
            if path and (path == folder or path.startswith(os.path.join(folder, ""))):
                if best is None or len(folder) > len(best[0]):
                    best = (folder, settings)
        return best[1] if best else self.global_settings

    def settings_for(self, path: str | None) -> Settings:
        editor = self.editor_settings(path)
        try:
            return editor.for_file(path)
        except ConfigError as error:
            log.warning("%s; using the defaults", error)
            return Settings().merged(select=editor.select, ignore=editor.ignore)

    async def load_configuration(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        folders = [path_of(folder.uri) for folder in self.workspace.folders.values()]
        folders = [folder for folder in folders if folder]
        items = [t.ConfigurationItem(section=SECTION)] + [
            t.ConfigurationItem(scope_uri=convert.file_uri(folder), section=SECTION) for folder in folders
        ]
        try:
            answers = await asyncio.wait_for(self.workspace_configuration_async(t.ConfigurationParams(items=items)), 10)
        except Exception as error:  # noqa: BLE001 - keep what we have
            log.warning("workspace/configuration failed: %s", error)
            return
        answers = list(answers or [])
        # a client without a `pallas` section answers null: initializationOptions stand
        self.global_settings = self._editor(answers[0] if answers else None)
        self.folder_settings = {
            folder: self._editor(answer) for folder, answer in zip(folders, answers[1:])
        }
        set_log_level(self.global_settings.log_level)

    def _editor(self, answer: Any) -> EditorSettings:
        return EditorSettings.parse(answer) if isinstance(answer, dict) else self.initial_settings

    # -- snapshots -------------------------------------------------------------------------

    def snapshot(self, key: str) -> Snapshot | None:
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            cells = []
            for cell in notebook.cells:
                if cell.kind != t.NotebookCellKind.Code:
                    continue
                document = self.workspace.text_documents.get(cell.document)
                if document is not None:
                    cells.append((cell.document, document.source, document.version))
            return notebook_snapshot(key, notebook.version, cells)
        document = self.workspace.text_documents.get(key)
        if document is None:
            return None
        return text_snapshot(key, document.source, document.version)

    def text_of(self, path: str) -> str | None:
        """A file's text as the editor has it (open buffer), else as on disk."""
        uri = convert.file_uri(path)
        document = self.workspace.text_documents.get(uri)
        if document is not None:
            return document.source
        try:
            with open(path, "rb") as file:
                return decode(file.read())
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
            return None

    def overlays(self, exclude: str | None) -> dict[str, str]:
        """Open buffers of other files: imports of the analysed file see their unsaved text."""
        found = {}
        for uri, document in list(self.workspace.text_documents.items()):
            path = path_of(uri)
            if path and path != exclude and path.endswith(".py"):
                found[path] = document.source
        return found

    def version_of(self, uri: str) -> int | None:
        document = self.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    # -- scheduling ------------------------------------------------------------------------

    def unit(self, key: str) -> Unit:
        return self.units.setdefault(key, Unit(key))

    def schedule(self, key: str, delay: float = 0.0) -> None:
        """(Re)start the analysis of `key` after `delay` seconds, superseding any queued or
        running one."""
        unit = self.unit(key)
        snapshot = self.snapshot(key)
        if snapshot is None:
            return
        self._stop(unit)
        unit.pending_version = snapshot.version
        unit.cancel = threading.Event()
        unit.task = asyncio.get_running_loop().create_task(self._analyse_later(unit, delay, unit.cancel))

    def _stop(self, unit: Unit) -> None:
        if unit.cancel is not None:
            unit.cancel.set()
        if unit.task is not None and not unit.task.done():
            unit.task.cancel()

    async def _analyse_later(self, unit: Unit, delay: float, cancel: threading.Event) -> None:
        try:
            await self._analyse(unit, delay, cancel)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - one document's failure must not stop the server
            log.exception("analysing %s failed", unit.key)
            self._answer_waiters(unit, unit.analysis)  # a pull or hover must not wait forever

    async def _analyse(self, unit: Unit, delay: float, cancel: threading.Event) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        snapshot = self.snapshot(unit.key)
        if snapshot is None or cancel.is_set():
            return
        generation = self.generation
        settings = self.settings_for(snapshot.path)
        overlays = self.overlays(snapshot.path)
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(
                self.executor, lambda: lint(snapshot.text, snapshot.path, settings, cancel=cancel,
                                            overlays=overlays, want_facts=True))
            self._take(unit, snapshot, result, cancel, generation)
        finally:  # also when this task is cancelled: the collector must not stay off
            engine.resume_collection()  # the garbage of the analysis, now that nobody waits

    def _take(self, unit: Unit, snapshot: Snapshot, result: Any, cancel: threading.Event, generation: int) -> None:
        """Publish a finished analysis, unless it is out of date."""
        if cancel.is_set():
            return  # whoever cancelled it has scheduled the next one
        if not self._current(snapshot):
            if unit.waiters:  # the text moved on while nobody scheduled its analysis (onSave)
                self.schedule(unit.key)
            return
        if result.error:
            log.info("%s: %s", snapshot.path or snapshot.key, result.error)
            if result.error == "cancelled":
                return
        unit.analysis = self._analysis(snapshot, result, generation)
        unit.pending_version = None
        self._publish(unit.analysis)
        self._answer_waiters(unit, unit.analysis)

    @staticmethod
    def _answer_waiters(unit: Unit, analysis: Analysis | None) -> None:
        for waiter in unit.waiters:
            if not waiter.done():
                waiter.set_result(analysis)
        unit.waiters.clear()

    def _current(self, snapshot: Snapshot) -> bool:
        now = self.snapshot(snapshot.key)
        return now is not None and now.versions == snapshot.versions

    def _analysis(self, snapshot: Snapshot, result: Any, generation: int) -> Analysis:
        locate = snapshot.locator(self.workspace.position_codec, self.text_of)
        diagnostics: dict[str, list[t.Diagnostic]] = {uri: [] for uri in snapshot.uris()}
        for finding in result.findings:
            finding = finding.in_analysed_file()  # a helper module's MMA: shown at the call here
            converted = convert.diagnostic(finding, locate, snapshot.versions, self.related_support,
                                           snapshot.text)
            if converted is not None:
                uri, diagnostic = converted
                diagnostics.setdefault(uri, []).append(diagnostic)
        return Analysis(snapshot, result.findings, result.facts, diagnostics, result.dependencies, generation)

    def _publish(self, analysis: Analysis) -> None:
        if self.pull:
            return
        for uri, diagnostics in analysis.diagnostics.items():
            version = analysis.snapshot.versions.get(uri)
            self.text_document_publish_diagnostics(
                t.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    async def current_analysis(self, key: str) -> Analysis | None:
        """The analysis of the unit's current text (waiting for it if needed)."""
        unit = self.unit(key)
        snapshot = self.snapshot(key)
        if snapshot is None:
            return None
        analysis = unit.analysis
        if analysis is not None and analysis.snapshot.versions == snapshot.versions \
                and analysis.generation == self.generation:
            return analysis
        if self.editor_settings(snapshot.path).run == "onSave" and analysis is not None:
            return analysis
        if unit.task is None or unit.task.done() or unit.pending_version != snapshot.version:
            self.schedule(key)
        waiter = asyncio.get_running_loop().create_future()
        unit.waiters.append(waiter)
        return await waiter

    def close(self, key: str) -> None:
        unit = self.units.pop(key, None)
        if unit is not None:
            self._stop(unit)
            self._answer_waiters(unit, None)
            uris = unit.analysis.snapshot.uris() if unit.analysis else [key]
        else:
            uris = [key]
        if not self.pull:
            for uri in uris:
                self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def relint_all(self) -> None:
        self.generation += 1
        for key in list(self.units):
            self.schedule(key)
        self.refresh_pulled()

    def relint_dependents(self, path: str) -> None:
        changed = False
        for key, unit in list(self.units.items()):
            if unit.analysis is not None and path in unit.analysis.dependencies and key != convert.file_uri(path):
                self.schedule(key, self.editor_settings(path).debounce_ms / 1000)
                changed = True
        if changed:
            self.refresh_pulled()

    def refresh_pulled(self) -> None:
        caps = self.client_capabilities.workspace
        if self.pull and caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.generation += 1
            self.workspace_diagnostic_refresh(None)

    def on_edit(self, key: str, path: str | None) -> None:
        settings = self.editor_settings(path)
        if settings.run == "onType":
            self.schedule(key, settings.debounce_ms / 1000)
            if path:
                self.relint_dependents(path)

    # -- lookups for requests --------------------------------------------------------------

    def key_of(self, uri: str) -> str:
        """The unit a document belongs to: itself, or the notebook of a cell."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def shutdown(self) -> None:
        for unit in self.units.values():
            self._stop(unit)
        self.executor.shutdown(wait=False, cancel_futures=True)


# -- hover -----------------------------------------------------------------------------------

def rule_markdown(code: str) -> str | None:
    rule = BY_CODE.get(code.upper())
    if rule is None:
        return None
    return f"# {rule.code}: {rule.name}\n\n{rule.summary}. [Documentation]({rule.url()})\n\n{rule.documentation()}"


def hover_markdown(analysis: Analysis, uri: str, position: t.Position, line_text: str) -> str | None:
    parts = []
    for diagnostic in analysis.diagnostics.get(uri, []):
        if _contains(diagnostic.range, position):
            parts.append(f"**{diagnostic.code}** {diagnostic.message}")
            docs = rule_markdown(str(diagnostic.code))
            if docs:
                parts.append(docs)
    fact = _innermost_fact(analysis, uri, position)
    if fact is not None:
        parts.insert(0, fact)
    if not parts:
        parts.extend(_noqa_docs(line_text, position.character))
    return "\n\n---\n\n".join(parts) if parts else None


def _innermost_fact(analysis: Analysis, uri: str, position: t.Position) -> str | None:
    best = None
    snapshot = analysis.snapshot
    cells = {cell.uri: cell for cell in snapshot.cells}
    offset = cells[uri].first_line if uri in cells else 0
    for fact in analysis.facts:
        span = fact.span
        if not (span.line - 1 - offset <= position.line <= span.end_line - 1 - offset):
            continue
        if snapshot.cells and uri not in cells:
            continue
        size = (span.end_line - span.line, span.end_col - span.col)
        if _span_contains(span, position.line + offset + 1, position.character) and (best is None or size < best[0]):
            best = (size, fact.markdown)
    return best[1] if best else None


def _span_contains(span: Any, line: int, col: int) -> bool:
    """Columns compared in code points: close enough for hover (clients send UTF-16)."""
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def _contains(range_: t.Range, position: t.Position) -> bool:
    start, end = range_.start, range_.end
    return (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character)


def _noqa_docs(line_text: str, character: int) -> list[str]:
    code = noqa.code_at(line_text, character)
    docs = rule_markdown(code) if code else None
    return [docs] if docs else []


def fix_all_edits(analysis: Analysis, uri: str, locate: Any) -> list[dict]:
    """The safe fixes of a document that edit only that document, as edit data."""
    snapshot = analysis.snapshot
    path = snapshot.path or snapshot.key
    own = [finding for finding in analysis.findings
           if all(edit.span.path in (None, snapshot.path) for fix in finding.fixes for edit in fix.edits)]
    plan = plan_fixes(path, own, unsafe=False)
    edits = []
    for file_edits in plan.edits.values():
        for edit in file_edits:
            data = convert.edit_data(edit, locate)
            if data is not None and data["uri"] == uri:
                edits.append(data)
    return edits


# -- logging ---------------------------------------------------------------------------------

_LEVEL_TO_TYPE = [
    (logging.ERROR, t.MessageType.Error),
    (logging.WARNING, t.MessageType.Warning),
    (logging.INFO, t.MessageType.Info),
    (logging.DEBUG, t.MessageType.Log),
]


class ClientLogHandler(logging.Handler):
    """Our log records as `window/logMessage`, sent from the event loop's thread."""

    def __init__(self, server: PallasServer) -> None:
        super().__init__()
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            kind = next(kind for level, kind in _LEVEL_TO_TYPE if record.levelno >= level or level == logging.DEBUG)
            params = t.LogMessageParams(type=kind, message=message)
            if self.loop is None or self.loop.is_closed():
                return
            if _on_loop_thread(self.loop):
                self.server.window_log_message(params)
            else:
                self.loop.call_soon_threadsafe(self.server.window_log_message, params)
        except Exception:  # noqa: BLE001 - logging must never raise
            pass


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


_handler: ClientLogHandler | None = None


def set_log_level(level: int) -> None:
    for name in ("pallas_lsp", "flake8_pallas"):
        logging.getLogger(name).setLevel(level)


def line_text(server: PallasServer, uri: str, line: int) -> str:
    document = server.workspace.text_documents.get(uri)
    return Lines(document.source).text(line + 1) if document is not None else ""
