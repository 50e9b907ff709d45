"""The stdlib tree of a text, and of an edited text parsed again only where the edit is.

An editor analyses a file after every keystroke, and parsing a long file (JAX's
`mosaic_gpu_test.py`, 10k lines) is a quarter of each analysis. A `ParseMemo` keeps the last
text of each file and its tree. The next text is compared with it (what they start and end
with in common), the edit is placed in the smallest run of whole statements around it in the
body of the module or of a definition (at any depth), and only that run's new text is parsed,
where it stands: the lines above it padded away so that its line numbers are the file's, and,
when it is indented, under an `if 1:` so that its columns are. The run's new statements take
the place of the old ones in the kept tree, the statements after them move by the lines the
edit added or removed, and the definitions around them end where their last statement now ends.

The result is the tree `parse` makes of the whole text (`tests/test_reparse.py` compares
every node's fields and positions after random edits of real files). The run's text is parsed
in the same state of the tokenizer as in the whole text: it starts where a statement starts a
line and ends where the next statement after it starts one, both outside brackets and
strings, since the text around the run is unchanged and parsed so before. Where the run
alone cannot tell, a larger run or the whole text is parsed:
- lines at the run's end less indented than its statements belong to a statement around the
  run (or to none): the run of the definition around it is parsed instead, and failing that
  the whole text;
- an edit in a definition's header makes the definition the run; statements sharing a line
  (`a = 1; b = 2`) are in a run together;
- the whole text for an edit above every statement of the module (a comment before the
  first), tabs and form feeds (the tokenizer checks indentation against the whole stack of
  blocks, which the run's parse does not see), `\\r` line ends, null bytes, `from __future__
  import barry_as_FLUFL` (which changes the grammar), and a misplaced `# type:` comment (the
  whole text is then parsed without reading them). The others are read in the run as in the
  whole text; the module's list of `# type: ignore` comments takes the run's in place of the
  old ones.
A text that does not parse is parsed whole (for its error), and the last good tree stays
kept: the next edit, which mends it, is compared with the text that parsed.

The kept tree is changed in place, so it is handed to one analysis at a time: a second one
running concurrently parses the whole text.
"""

from __future__ import annotations

import ast
import copy
import logging
import re
import threading
from typing import Any

log = logging.getLogger("pallas_lsp")

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def parse(text: str) -> ast.Module:
    """The stdlib tree, parsed as astroid parses (a final newline, type comments read unless
    misplaced) so that astroid can be built from it without a second parse."""
    return _parsed(text)[0]


def _parsed(text: str) -> tuple[ast.Module, bool]:
    """`parse(text)`, and whether its type comments were read."""
    try:
        return ast.parse(text + "\n", type_comments=True), True
    except SyntaxError as error:
        if not re.search(r"#\s+type:", error.text or ""):
            raise
        return ast.parse(text + "\n"), False
    except ValueError as error:  # null bytes before Python 3.12
        raise SyntaxError(str(error)) from error


class ParseMemo:
    """The last text and tree of each file, for the memory of one more stdlib tree per open
    file."""

    def __init__(self, max_files: int = 64) -> None:
        self._files: dict[str | None, tuple[str, ast.Module, bool]] = {}  # text, tree, type comments read
        self._lock = threading.Lock()
        self._max_files = max_files
        self.reparsed: int | None = None  # lines parsed by the last `parse` (None: all; for tests and benchmarks)

    def forget(self, path: str | None) -> None:
        """Drop what is kept for `path` (None: an untitled buffer)."""
        self._files.pop(path, None)

    def parse(self, text: str, path: str | None) -> ast.Module:
        """`parse(text)`, reusing the tree of the last text parsed for `path`."""
        if not self._lock.acquire(blocking=False):  # another analysis is using the memo
            return parse(text)
        try:
            kept = self._files.pop(path, None)
            # (a tree whose type comments were not read, one being misplaced, is not reused)
            tree = _reparsed_or_none(kept[0], text, kept[1]) if kept is not None and kept[2] else None
            self.reparsed = tree[1] if tree is not None else None
            try:
                new, typed = (tree[0], True) if tree is not None else _parsed(text)
            except SyntaxError:
                if kept is not None:
                    self._files[path] = kept  # (unchanged: the edit parsed whole)
                raise
            while len(self._files) >= self._max_files:
                del self._files[next(iter(self._files))]
            self._files[path] = (text, new, typed)
            return new
        finally:
            self._lock.release()


def _reparsed_or_none(old: str, new: str, tree: ast.Module) -> tuple[ast.Module, int] | None:
    """`_reparsed`, and None (the whole text parsed, the kept tree dropped) should it fail."""
    try:
        return _reparsed(old, new, tree)
    except Exception:  # noqa: BLE001 - a fault of ours here costs a parse, not the analysis
        log.debug("parsed whole after a failed partial parse", exc_info=True)
        return None


def _reparsed(old: str, new: str, tree: ast.Module) -> tuple[ast.Module, int] | None:
    """`tree` (of `old`) made the tree of `new` by parsing only the run of statements the
    edit lies in, and the lines parsed; None when the whole text must be parsed."""
    if old == new:
        return tree, 0
    if _parsed_whole(new) or _parsed_whole(old):
        return None
    start, old_end, new_end = _changed(old, new)
    last_changed = _line_of(old, old_end - 1) if old_end > start else _line_of(old, start) - _at_line_start(old, start)
    # the smallest run, then the one around it: lines put in after a body's last statement
    # may be less indented, a statement of the body around it
    for run in _Run.around(tree, old, start, _line_of(old, start), last_changed)[-2:][::-1]:
        run_start = _offset_of_line(old, run.first, start)
        run_end = _offset_of_line(old, run.after, start) if run.after is not None else len(old)
        text = new[run_start:run_end + len(new) - len(old)]
        statements = _statements_of(text, run)
        if statements is not None:
            moved = new.count("\n", start, new_end) - old.count("\n", start, old_end)
            run.replace(tree, statements[0], moved)
            _replace_type_ignores(tree, run, statements[1], moved)
            return tree, text.count("\n")
    return None


def _parsed_whole(text: str) -> bool:
    """Does `text` hold what only a parse of the whole text reads right (see the module's
    docstring)?"""
    return "\t" in text or "\f" in text or "\r" in text or "\0" in text or "barry_as_FLUFL" in text


def _replace_type_ignores(tree: ast.Module, run: _Run, parsed: list[ast.TypeIgnore], moved: int) -> None:
    """The module's `# type: ignore` comments: the run's are those its parse found, and those
    after it move with the statements."""
    kept = tree.type_ignores
    if not kept and not parsed:
        return
    before = [ignore for ignore in kept if ignore.lineno < run.first]
    after = [ignore for ignore in kept if run.after is not None and ignore.lineno >= run.after]
    for ignore in after:
        ignore.lineno += moved
    tree.type_ignores = before + parsed + after


def _changed(old: str, new: str) -> tuple[int, int, int]:
    """Where the texts differ: from `start` to `old_end` in `old`, to `new_end` in `new`."""
    shorter = min(len(old), len(new))
    low, high = 0, shorter  # the common start is at least `low` long and at most `high`
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    start = low
    low, high = 0, shorter - start  # ... and the common end, not overlapping it
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle:len(old) - low] == new[len(new) - middle:len(new) - low]:
            low = middle
        else:
            high = middle - 1
    return start, len(old) - low, len(new) - low


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _offset_of_line(text: str, line: int, near: int) -> int:
    """Where line `line` of `text` starts, looked for from offset `near` (a run's lines are
    near the edit)."""
    at = text.rfind("\n", 0, near) + 1
    here = _line_of(text, at)
    while here > line:
        at = text.rfind("\n", 0, at - 1) + 1
        here -= 1
    while here < line:
        at = text.index("\n", at) + 1
        here += 1
    return at


class _Run:
    """Consecutive statements `body[low:high]` of the module or of a definition, from line
    `first` to the line before `after` (None: to the end of the text), the edit within them;
    `enclosing` are the definitions they are in, outermost first, each with the body it is in."""

    def __init__(self, body: list[ast.stmt], low: int, high: int, first: int, after: int | None,
                 enclosing: list[tuple[list[ast.stmt], int, _Definition]]) -> None:
        self.body, self.low, self.high = body, low, high
        self.first, self.after = first, after
        self.enclosing = enclosing

    @classmethod
    def around(cls, tree: ast.Module, old: str, start: int, first_changed: int, last_changed: int) -> list[_Run]:
        """The runs of `tree` (of `old`, changed from offset `start`) holding lines
        `first_changed`..`last_changed` (the last may be the line before the first: nothing of
        `old` changed, text was put in before it), outermost first: each the one definition
        of the run before it."""
        body: list[ast.stmt] = tree.body
        after: int | None = None
        enclosing: list[tuple[list[ast.stmt], int, _Definition]] = []
        found: list[_Run] = []
        while True:
            run = _covering(body, after, first_changed, last_changed)
            if run is None:
                return found
            low, high = run
            found.append(cls(body, low, high, first_line(body[low]), _next_line(body, high, after), list(enclosing)))
            only = body[low]
            if high - low != 1 or not isinstance(only, DEFINITIONS) or not _starts_its_line(only.body[0], old, start):
                return found
            enclosing.append((body, low, only))
            body, after = only.body, found[-1].after

    def replace(self, tree: ast.Module, statements: list[ast.stmt], moved: int) -> None:
        """Put `statements` in the run's place, move what follows by `moved` lines, and end
        the definitions around the run where their bodies now end. Those definitions are
        copies, and every body a new list: a statement of the tree that is the same object
        as before has the same contents (`prefilter.WalkMemo` keeps what it found in them)."""
        following = self.body[self.high:]
        for body, index, _ in reversed(self.enclosing):
            following += body[index + 1:]
        if moved:
            _move(following, moved)
        body = self.body[:self.low] + statements + self.body[self.high:]
        for around, index, definition in reversed(self.enclosing):
            copied = copy.copy(definition)
            copied.body = body
            copied.end_lineno, copied.end_col_offset = body[-1].end_lineno, body[-1].end_col_offset
            body = around[:index] + [copied] + around[index + 1:]
        tree.body = body


def _covering(body: list[ast.stmt], after: int | None, first_changed: int, last_changed: int
              ) -> tuple[int, int] | None:
    """The statements of `body` (as `low:high`) whose lines hold lines `first_changed` to
    `last_changed`, with those sharing a line with them; None if the first lies before them."""
    if not body or first_line(body[0]) > first_changed:
        return None
    low = 0
    while low + 1 < len(body) and first_line(body[low + 1]) <= first_changed:
        low += 1
    high = low + 1
    while high < len(body) and first_line(body[high]) <= last_changed:
        high += 1
    if after is not None and high == len(body) and after <= last_changed:
        return None
    while low > 0 and last_line(body[low - 1]) >= first_line(body[low]):
        low -= 1
    while high < len(body) and last_line(body[high - 1]) >= first_line(body[high]):
        high += 1
    return low, high


def _next_line(body: list[ast.stmt], high: int, after: int | None) -> int | None:
    return first_line(body[high]) if high < len(body) else after


def first_line(statement: ast.stmt) -> int:
    """A statement's first line: its first decorator's, for a definition."""
    decorators = statement.decorator_list if isinstance(statement, DEFINITIONS) else []
    return min([statement.lineno] + [decorator.lineno for decorator in decorators])


def last_line(statement: ast.stmt) -> int:
    """A statement's last line."""
    return statement.end_lineno or statement.lineno


def _starts_its_line(statement: ast.stmt, text: str, near: int) -> bool:
    """Does `statement` (of `text`) start its first line, after its indentation? (A body
    may start on its definition's last line: `def f(): return 1`.)"""
    at = _offset_of_line(text, first_line(statement), near)
    return text.startswith(" " * statement.col_offset, at) and text[at + statement.col_offset] != " "


def _at_line_start(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1] == "\n"


def _statements_of(text: str, run: _Run) -> tuple[list[ast.stmt], list[ast.TypeIgnore]] | None:
    """The statements `text`, the run's new text, parses to where the run stands, and its
    `# type: ignore` comments; None when that is not what the whole text would give there
    (see the module's docstring)."""
    column = run.body[run.low].col_offset
    if run.enclosing:
        source = "\n" * (run.first - 2) + "if 1:\n" + text
    else:
        source = "\n" * (run.first - 1) + text
    try:
        module = ast.parse(source + "\n", type_comments=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # (a misplaced type comment too: the whole text then parses without them)
    if not run.enclosing:
        return module.body, module.type_ignores
    if len(module.body) != 1 or not isinstance(module.body[0], ast.If) or module.body[0].body[0].col_offset != column:
        return None  # (lines less indented than the run: statements around it, or none)
    return module.body[0].body, module.type_ignores


def _move(statements: list[ast.stmt], lines: int) -> None:
    """Move every node of `statements` by `lines` lines."""
    stack: list[Any] = list(statements)  # (ast.AST: mypy cannot narrow through `hasattr`)
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node = pop()
        for name in node._fields:
            child = getattr(node, name, None)
            if type(child) is list:
                for item in child:
                    if isinstance(item, node_type):
                        push(item)
            elif isinstance(child, node_type):
                push(child)
        if hasattr(node, "end_lineno"):
            node.lineno += lines
            if node.end_lineno is not None:
                node.end_lineno += lines
