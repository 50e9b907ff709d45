"""The server's log records in the editor's log (`window/logMessage`), whichever thread wrote
them; the level follows the `logLevel` setting."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types as t

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

LOGGERS = ("pallas_lsp", "flake8_pallas")

_LEVEL_TO_TYPE = [
    (logging.ERROR, t.MessageType.Error),
    (logging.WARNING, t.MessageType.Warning),
    (logging.INFO, t.MessageType.Info),
    (logging.DEBUG, t.MessageType.Log),
]


class ClientLogHandler(logging.Handler):
    """Our log records as `window/logMessage`, sent from the event loop's thread. Records
    written before the loop is known (`attach`) are dropped: the client cannot take them yet."""

    def __init__(self, server: LanguageServer) -> None:
        super().__init__()
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

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
        except Exception:  # noqa: BLE001, S110 - logging must never raise
            pass


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def install(server: LanguageServer) -> ClientLogHandler:
    """Send the `pallas_lsp` log to the client; keep pygls's (every message body at INFO)
    quiet whatever the root logger does."""
    handler = ClientLogHandler(server)
    logging.getLogger("pallas_lsp").addHandler(handler)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    return handler


def set_log_level(level: int) -> None:
    for name in LOGGERS:
        logging.getLogger(name).setLevel(level)
