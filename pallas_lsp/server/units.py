"""What gets analysed as one piece: a text document, or a notebook's code cells joined together.

A unit is snapshotted (text, versions) before its analysis runs on the worker thread, and its
`locate` maps spans of the analysed text back to the editor: to the document, to the cell
holding the line, or to another file for fixes that edit a helper module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from pallas_lsp.analysis import Span, split_lines

from .convert import Positions, Target, file_uri


@dataclass(frozen=True)
class Cell:
    uri: str
    text: str
    version: int | None
    first_line: int  # 0-based line of the cell in the joined text


@dataclass
class Snapshot:
    key: str  # the document's uri, or the notebook's
    text: str
    path: str | None  # None for untitled buffers
    version: int | None
    cells: tuple[Cell, ...] = ()
    versions: dict[str, int | None] = field(default_factory=dict)  # uri -> version to publish with

    def uris(self) -> list[str]:
        return [cell.uri for cell in self.cells] if self.cells else [self.key]

    def locator(self, codec: PositionCodec, text_of: Callable[[str], str | None]) -> Callable[[Span], Target | None]:
        own = Positions(self.text, codec)
        cells = [(cell, Positions(cell.text, codec, cell.first_line)) for cell in self.cells]
        others: dict[str, Target | None] = {}

        def locate(span: Span) -> Target | None:
            if span.path is not None and (self.path is None or span.path != self.path):
                if span.path not in others:
                    text = text_of(span.path)
                    others[span.path] = None if text is None else Target(file_uri(span.path), Positions(text, codec))
                return others[span.path]
            if not cells:
                return Target(self.key, own)
            for cell, positions in reversed(cells):
                if span.line - 1 >= cell.first_line:
                    return Target(cell.uri, positions)
            return None

        return locate


def path_of(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    try:
        return to_fs_path(uri)
    except Exception:  # noqa: BLE001 - an odd uri is simply not a file
        return None


def text_snapshot(uri: str, text: str, version: int | None) -> Snapshot:
    return Snapshot(uri, text, path_of(uri), version, versions={uri: version})


def notebook_snapshot(uri: str, version: int | None, cells: list[tuple[str, str, int | None]]) -> Snapshot:
    """`cells`: (uri, text, version) of the code cells, in order. IPython magics and shell
    escapes become comments so the joined text parses; every line keeps its place."""
    parts: list[str] = []
    placed: list[Cell] = []
    line = 0
    for cell_uri, text, cell_version in cells:
        source = _without_magics(text)
        if not source.endswith("\n"):
            source += "\n"
        placed.append(Cell(cell_uri, text, cell_version, line))
        parts.append(source)
        line += len(split_lines(source))
    versions = {cell.uri: cell.version for cell in placed}
    # notebooks are analysed as the .ipynb path: imports resolve from its directory
    return Snapshot(uri, "".join(parts), path_of(uri), version, tuple(placed), versions)


def _without_magics(text: str) -> str:
    lines = split_lines(text)
    return "".join("#" + line if line.lstrip().startswith(("%", "!")) else line for line in lines)
