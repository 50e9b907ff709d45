"""The table of LSP methods the server answers, filled by `@feature` on the module-level
handlers of `notifications` and `requests` (as pygls's example servers decorate theirs), and
registered on a server by `register`."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, TypeVar

from pygls.lsp.server import LanguageServer

Handler = TypeVar("Handler", bound=Callable[..., Any])


@dataclass(frozen=True)
class Feature:
    method: str
    options: Any
    handler: Callable[..., Any]


FEATURES: list[Feature] = []


def feature(method: str, options: Any = None) -> Callable[[Handler], Handler]:
    """Mark a module-level function `(ls, params)` as the handler of `method`."""
    def mark(handler: Handler) -> Handler:
        FEATURES.append(Feature(method, options, handler))
        return handler
    return mark


def register(server: LanguageServer) -> None:
    """Register every handler marked so far (`server.py` imports the handler modules)."""
    for entry in FEATURES:
        server.feature(entry.method, entry.options)(entry.handler)
