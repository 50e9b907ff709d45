"""Hover: what the analysis knows at the cursor (an operand's or allocation's facts), the
diagnostics there with their rule's documentation, or a rule named in a `# noqa` comment."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as t

from pallas_lsp.analysis import BY_CODE, Span, noqa_code_at

if TYPE_CHECKING:
    from .scheduler import Analysis


def rule_markdown(code: str) -> str | None:
    rule = BY_CODE.get(code.upper())
    if rule is None:
        return None
    return f"# {rule.code}: {rule.name}\n\n{rule.summary}. [Documentation]({rule.url()})\n\n{rule.documentation()}"


def hover_markdown(analysis: Analysis, diagnostics: list[t.Diagnostic], uri: str, position: t.Position,
                   line_text: str) -> str | None:
    """The hover at `position` of `uri` (a document or cell of the analysed unit), given the
    diagnostics shown there."""
    parts = []
    for diagnostic in diagnostics:
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
    best: tuple[tuple[int, int], str] | None = None
    snapshot = analysis.snapshot
    cells = {cell.uri: cell for cell in snapshot.cells}
    if snapshot.cells and uri not in cells:
        return None
    offset = cells[uri].first_line if uri in cells else 0
    for fact in analysis.facts:
        span = fact.span
        if not (span.line - 1 - offset <= position.line <= span.end_line - 1 - offset):
            continue
        size = (span.end_line - span.line, span.end_col - span.col)
        if _span_contains(span, position.line + offset + 1, position.character) and (best is None or size < best[0]):
            best = (size, fact.markdown)
    return best[1] if best else None


def _span_contains(span: Span, line: int, col: int) -> bool:
    """Columns compared in code points: close enough for hover (clients send UTF-16)."""
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def _contains(range_: t.Range, position: t.Position) -> bool:
    start, end = range_.start, range_.end
    return (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character)


def _noqa_docs(line_text: str, character: int) -> list[str]:
    code = noqa_code_at(line_text, character)
    docs = rule_markdown(code) if code else None
    return [docs] if docs else []
