"""What the server knows of its client: the documents it has open, the settings it sent, the
capabilities it announced. Handlers and the scheduler ask here; nothing here analyses.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from pallas_lsp.analysis import Lines, Settings, decode

from . import convert
from .log import set_log_level
from .settings import EditorSettings
from .units import Snapshot, notebook_snapshot, path_of, text_snapshot

if TYPE_CHECKING:
    from .server import PallasServer

log = logging.getLogger("pallas_lsp.server")
SECTION = "pallas"  # the configuration section (and initializationOptions key) of our settings


class Session:
    def __init__(self, server: PallasServer) -> None:
        self.server = server
        self.global_settings = EditorSettings()
        self.initial_settings = EditorSettings()  # from initializationOptions
        self.folder_settings: dict[str, EditorSettings] = {}
        self.shown_errors: set[str] = set()  # configuration errors already shown to the user

    # -- capabilities ----------------------------------------------------------------------

    @property
    def pull(self) -> bool:
        """Does the client ask for diagnostics (then we never push them)?"""
        caps = self.server.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    @property
    def related_support(self) -> bool:
        caps = self.server.client_capabilities.text_document
        return bool(caps and caps.publish_diagnostics and caps.publish_diagnostics.related_information) or (
            self.pull and bool(caps and caps.diagnostic and caps.diagnostic.related_information)
        )

    @property
    def document_changes(self) -> bool:
        caps = self.server.client_capabilities.workspace
        return bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)

    @property
    def configuration(self) -> bool:
        """Does the client answer `workspace/configuration`?"""
        caps = self.server.client_capabilities.workspace
        return bool(caps and caps.configuration)

    @property
    def refresh_support(self) -> bool:
        caps = self.server.client_capabilities.workspace
        return bool(caps and caps.diagnostics and caps.diagnostics.refresh_support)

    @property
    def watch_registration(self) -> bool:
        caps = self.server.client_capabilities.workspace
        watch = caps.did_change_watched_files if caps else None
        return bool(watch and watch.dynamic_registration)

    # -- settings --------------------------------------------------------------------------

    def editor_settings(self, path: str | None) -> EditorSettings:
        """The settings of the innermost workspace folder holding `path`, else the global ones."""
        best: tuple[str, EditorSettings] | None = None
        for folder, settings in self.folder_settings.items():
            if path and (path == folder or path.startswith(os.path.join(folder, ""))):
                if best is None or len(folder) > len(best[0]):
                    best = (folder, settings)
        return best[1] if best else self.global_settings

    def settings_for(self, path: str | None) -> tuple[Settings | None, str | None]:
        """The core settings for `path` (its pyproject's with the editor's on top), or None and
        the configuration error, which is shown to the user once: never guessed defaults."""
        settings, error = self.editor_settings(path).resolve(path)
        if error is not None:
            log.error("invalid configuration: %s", error)
            if error not in self.shown_errors:
                self.shown_errors.add(error)
                self.server.window_show_message(t.ShowMessageParams(type=t.MessageType.Error,
                                                                    message=f"pallas-lsp: {error}"))
        return settings, error

    def take_initialization_options(self, options: Any) -> None:
        """`initializationOptions`: `{"settings": {...}}`, `{"pallas": {...}}` or the settings."""
        if not isinstance(options, dict):
            return
        raw = options.get("settings", options)
        self.initial_settings = EditorSettings.parse(raw.get(SECTION, raw) if isinstance(raw, dict) else raw)
        self.set_global(self.initial_settings)

    def take_pushed_settings(self, settings: Any) -> None:
        """`workspace/didChangeConfiguration` from a client that does not answer
        `workspace/configuration`: the settings come in the notification."""
        if isinstance(settings, dict):
            self.set_global(EditorSettings.parse(settings.get(SECTION, settings)))

    def set_global(self, settings: EditorSettings) -> None:
        self.global_settings = settings
        set_log_level(settings.log_level)

    async def load_configuration(self) -> None:
        """Ask the client for the `pallas` section, globally and per workspace folder."""
        if not self.configuration:
            return
        folders = [path_of(folder.uri) for folder in self.server.workspace.folders.values()]
        paths = [folder for folder in folders if folder]
        items = [t.ConfigurationItem(section=SECTION)] + [
            t.ConfigurationItem(scope_uri=convert.file_uri(folder), section=SECTION) for folder in paths
        ]
        try:
            answers = await asyncio.wait_for(
                self.server.workspace_configuration_async(t.ConfigurationParams(items=items)), 10)
        except Exception as error:  # noqa: BLE001 - keep what we have
            log.warning("workspace/configuration failed: %s", error)
            return
        answers = list(answers or [])
        self.shown_errors.clear()  # a configuration still wrong after a change is shown again
        # a client without a `pallas` section answers null: initializationOptions stand
        self.set_global(self._editor(answers[0] if answers else None))
        # (a short answer leaves the remaining folders with the global settings)
        self.folder_settings = {folder: self._editor(answer)
                                for folder, answer in zip(paths, answers[1:], strict=False)}

    def _editor(self, answer: Any) -> EditorSettings:
        return EditorSettings.parse(answer) if isinstance(answer, dict) else self.initial_settings

    # -- documents -------------------------------------------------------------------------

    def snapshot(self, key: str) -> Snapshot | None:
        """The text to analyse for a document or notebook, with the versions it came from."""
        workspace = self.server.workspace
        notebook = workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            cells = []
            for cell in notebook.cells:
                if cell.kind != t.NotebookCellKind.Code:
                    continue
                document = workspace.text_documents.get(cell.document)
                if document is not None:
                    cells.append((cell.document, document.source, document.version))
            return notebook_snapshot(key, notebook.version, cells)
        document = workspace.text_documents.get(key)
        if document is None:
            return None
        return text_snapshot(key, document.source, document.version)

    def text_of(self, path: str) -> str | None:
        """A file's text as the editor has it (open buffer), else as on disk."""
        document = self.server.workspace.text_documents.get(convert.file_uri(path))
        if document is not None:
            return document.source
        try:
            with open(path, "rb") as file:
                return decode(file.read())
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
            return None

    def overlays(self, exclude: str | None) -> tuple[dict[str, str], dict[str, int | None]]:
        """Open buffers of other files, so that imports of the analysed file see their unsaved
        text: (path -> text, uri -> version)."""
        texts: dict[str, str] = {}
        versions: dict[str, int | None] = {}
        for uri, document in list(self.server.workspace.text_documents.items()):
            path = path_of(uri)
            if path and path != exclude and path.endswith(".py"):
                texts[path] = document.source
                versions[convert.file_uri(path)] = document.version
        return texts, versions

    def version_of(self, uri: str) -> int | None:
        document = self.server.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    def is_open(self, uri: str) -> bool:
        return uri in self.server.workspace.text_documents

    def key_of(self, uri: str) -> str:
        """The unit a document belongs to: itself, or the notebook of a cell."""
        notebook = self.server.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def line_text(self, uri: str, line: int) -> str:
        document = self.server.workspace.text_documents.get(uri)
        return Lines(document.source).text(line + 1) if document is not None else ""
