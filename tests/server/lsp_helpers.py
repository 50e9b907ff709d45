"""Small helpers for driving the server from pytest-lsp: open a file, apply a WorkspaceEdit as
a client would (in the negotiated position encoding), record every publishDiagnostics."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as t


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def position(text: str, line: int, col: int, encoding: str) -> t.Position:
    """A code-point column as the client counts it."""
    line_text = text.splitlines()[line]
    return t.Position(line, units(line_text[:col], encoding))


def offset(text: str, pos: t.Position, encoding: str) -> int:
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: pos.line])
    line = lines[pos.line] if pos.line < len(lines) else ""
    col = 0
    while col < len(line) and units(line[:col], encoding) < pos.character:
        col += 1
    return start + col


def apply(text: str, edits: list[t.TextEdit], encoding: str) -> str:
    spans = sorted(((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_by_uri(edit: t.WorkspaceEdit) -> dict[str, list[t.TextEdit]]:
    found: dict[str, list[t.TextEdit]] = {}
    if edit.document_changes:
        for change in edit.document_changes:
            found.setdefault(change.text_document.uri, []).extend(change.edits)
    for uri, edits in (edit.changes or {}).items():
        found.setdefault(uri, []).extend(edits)
    return found


def encoding_of(client) -> str:
    """The position encoding the server chose in its initialize result."""
    return str(getattr(client, "position_encoding", "utf-16"))


def open_file(client, path: Path, version: int = 1, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=text if text is not None else path.read_text())))
    return uri


def change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)]))


def pulls(client) -> bool:
    return client.capabilities.text_document.diagnostic is not None


async def diagnostics(client, uri: str, timeout: float = 30) -> list[t.Diagnostic]:
    """The document's diagnostics the way this client gets them (pull or push)."""
    if pulls(client):
        report = await asyncio.wait_for(client.text_document_diagnostic_async(
            t.DocumentDiagnosticParams(text_document=t.TextDocumentIdentifier(uri=uri))), timeout)
        return list(report.items)
    async def wait():
        while uri not in client.diagnostics:
            await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return list(client.diagnostics[uri])
    return await asyncio.wait_for(wait(), timeout)


async def next_publish(client, uri: str, timeout: float = 30) -> list[t.Diagnostic]:
    client.diagnostics.pop(uri, None)
    return await diagnostics(client, uri, timeout)


async def published_version(client, uri: str, version: int, timeout: float = 30) -> list[t.Diagnostic]:
    """The diagnostics of this version of the document: pulled, or the first publish for it
    (start waiting before the change is sent: a publish of an older version may come first)."""
    if pulls(client):
        return await diagnostics(client, uri, timeout)

    async def wait() -> list[t.Diagnostic]:
        while True:
            params = await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)

    return await asyncio.wait_for(wait(), timeout)


def record_publishes(client) -> list[t.PublishDiagnosticsParams]:
    """Every publishDiagnostics from now on, in order (pytest-lsp keeps only the latest)."""
    seen: list[t.PublishDiagnosticsParams] = []
    features = client.protocol.fm.features
    original = features[t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def recording(*args):  # pygls has already bound the client
        seen.append(args[-1])
        return original(*args)

    features[t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = recording
    return seen
