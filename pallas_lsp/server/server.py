"""The language server: the core's findings as diagnostics, its fixes as code actions, its
facts as hovers. It adds no analysis of its own.

`PallasServer` only ties the parts together: the `session` (documents, settings,
capabilities), the `scheduler` (debounce, cancellation, versions, publishing) and the client
log; the LSP methods are the module-level handlers in `notifications` and `requests`.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

from pallas_lsp import __version__

from . import features, notifications, requests
from . import log as client_log
from .scheduler import Scheduler
from .session import Session

log = logging.getLogger("pallas_lsp.server")
HANDLERS = (notifications, requests)  # importing them fills `features.FEATURES`


class PallasServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "pallas-lsp", __version__,
            notebook_document_sync=t.NotebookDocumentSyncOptions(notebook_selector=[
                t.NotebookDocumentFilterWithCells(cells=[t.NotebookCellLanguage(language="python")]),
            ]),
        )
        self.session = Session(self)
        self.scheduler = Scheduler(self)
        self.log_handler = client_log.install(self)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log, never pop a dialog: a linter must not interrupt the user."""
        log.error("internal error (%s): %s", getattr(source, "__name__", source), error, exc_info=error)


def create_server() -> PallasServer:
    server = PallasServer()
    features.register(server)
    return server
