"""Source text: decoding files the way Python does, edits applied to it, and positions of astroid
nodes (astroid is imported only by whoever has its nodes: the frontends decode without it)."""

from __future__ import annotations

import functools
import io
import os
import re
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING

from .findings import Edit, Span

if TYPE_CHECKING:
    from astroid import nodes


def decode(data: bytes) -> str:
    """Decode Python source bytes (encoding cookie, BOM), as the interpreter would.

    Raises SyntaxError or UnicodeDecodeError for undecodable input.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python's tokenizer splits (not at \f or \x1c)."""
    return _LINE.findall(text)


def apply_edits(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """`text` with non-overlapping edits applied (all of them in this text's coordinates)."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[min(line - 1, len(lines))] + col

    ordered = sorted(edits, key=lambda e: (e.span.line, e.span.col), reverse=True)
    for edit in ordered:
        start = offset(edit.span.line, edit.span.col)
        end = offset(edit.span.end_line, edit.span.end_col)
        text = text[:start] + edit.new_text + text[end:]
    return text


class Lines:
    """The lines of one module, to turn astroid's UTF-8 byte columns into code points."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text) or [""]

    @classmethod
    def of_file(cls, path: str) -> Lines | None:
        """The lines of a file on disk (None when it cannot be read or decoded); the same
        object while the file is unchanged (size and modification time): hover facts and
        findings about another module's code ask for its lines in every analysis."""
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return _file_lines(path, stat.st_mtime_ns, stat.st_size)

    def text(self, line: int) -> str:
        return self.lines[line - 1].rstrip("\r\n") if 0 < line <= len(self.lines) else ""

    def column(self, line: int, byte_col: int) -> int:
        text = self.text(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: nodes.NodeNG, path: str | None = None) -> Span:
        line, col = node.lineno, node.col_offset
        assert line is not None and col is not None, f"{node!r} has no position"
        end_line = node.end_lineno or line
        end_col = node.end_col_offset if node.end_col_offset is not None else col
        return Span(
            line,
            self.column(line, col),
            end_line,
            self.column(end_line, end_col),
            path,
        )

    def point(self, line: int, byte_col: int, path: str | None = None) -> Span:
        col = self.column(line, byte_col)
        return Span(line, col, line, col, path)


@functools.lru_cache(maxsize=256)
def _file_lines(path: str, mtime_ns: int, size: int) -> Lines | None:  # (the stamp: part of the key)
    try:
        return Lines(decode(Path(path).read_bytes()))
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None
