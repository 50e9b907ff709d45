"""Incremental analysis for an editor: astroid subtrees kept between analyses of one file.

An editor analyses the same file after every keystroke, and astroid's rebuild of the whole tree
costs two to four parses of it. A `TreeMemo` keeps the astroid nodes of the file's function and
class definitions (at any depth) from the last analysis, keyed by their exact source text; the
next build of that file reuses every definition whose text is unchanged (its line numbers moved
by the lines inserted or removed above it) and builds the others: typing inside one kernel
rebuilds that kernel and the definitions around it, not their unchanged neighbours.

A reused subtree must be the tree a fresh build would make. Its text fixes its stdlib tree, and
so its astroid tree, except where astroid's build reaches outside the statement; those
statements are never kept:
- `global` declarations bind names in the module;
- a `:=` whose target astroid binds in a scope around the definition (as a default value or
  an annotation of its own parameters: `def f(x=(n := 4))` binds `n` where `f` is defined) is
  not kept, since a kept one would not bind it again (`:=` binding inside the definition is);
- `# type:` comments are read or not depending on the rest of the file (`reparse.parse`);
- a statement that shares a line with another, or a definition whose text occurs twice.
(astroid's post-build step would also record each `obj.attr = ...` on the node it infers `obj`
to be, outside the definition; the brain turns that step off: `brain._unrecorded_attributes`.)
A file with `\\r` in it is built whole (astroid splits the text on `\\n` for some positions).

Cached properties of a reused node (`fromlineno`, `type`, `extra_decorators`...) are
dropped, since some depend on the rest of the module. A memo is used by one analysis at a time:
a second one running concurrently builds the whole tree.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
import threading
from dataclasses import dataclass
from typing import Any, Iterator

from astroid import nodes
from astroid.builder import AstroidBuilder
from astroid.manager import AstroidManager
from astroid.rebuilder import TreeRebuilder

from .brain import Rebuilder
from .reparse import DEFINITIONS, first_line, last_line

_Definition = nodes.FunctionDef | nodes.ClassDef  # (an async def is a FunctionDef too)


@dataclass
class _Kept:
    first: int  # the statement's first line (its first decorator's) when it was built
    node: _Definition
    # its nodes, and those with cached properties: found when it is first reused (`_moved`)
    flat: tuple[list[nodes.NodeNG], list[nodes.NodeNG]] | None = None


class TreeMemo:
    """Astroid subtrees of the definitions of the files last analysed, one tree per file (the
    memory of one more tree per open file)."""

    def __init__(self, max_files: int = 64) -> None:
        # per file: source text -> subtree, the definitions never to keep (tainted: see
        # `_Builder._taint_reaching`), which stay so inside the subtrees reused whole, and what
        # the scan for definitions found in each stdlib definition (`_segments`)
        self._files: dict[str | None, tuple[dict[str, _Kept], set[nodes.NodeNG], dict[int, _Scanned]]] = {}
        self._lock = threading.Lock()
        self._max_files = max_files
        self.reused = 0  # definitions reused by the last build (for tests and benchmarks)

    def forget(self, path: str | None) -> None:
        """Drop what is kept for `path` (None: an untitled buffer). Without the lock (a dict's
        `pop` is atomic): an analysis of `path` running meanwhile keeps its tree, which the
        bound on files lets go of in time."""
        self._files.pop(path, None)

    def build(self, manager: AstroidManager, text: str, modname: str, path: str | None,
              tree: ast.Module) -> nodes.Module:
        """What `brain.build` makes of `text`, reusing the subtrees of unchanged definitions."""
        if not self._lock.acquire(blocking=False):  # another analysis uses the memo
            return _Builder(tree, {}, set(), manager, apply_transforms=False).string_build(text, modname, path)
        try:
            return self._build(manager, text, modname, path, tree)
        finally:
            self._lock.release()

    def _build(self, manager: AstroidManager, text: str, modname: str, path: str | None,
               tree: ast.Module) -> nodes.Module:
        previous, was_tainted, scanned = self._files.pop(path, ({}, set(), {}))
        scanning: dict[int, _Scanned] = {}
        segments = _segments(text, tree, scanned, scanning) if "\r" not in text else {}
        reuse: dict[ast.stmt, tuple[_Kept, int]] = {}
        for statement, (key, first) in segments.items():
            old = previous.get(key)
            if old is not None:
                reuse[statement] = (old, first - old.first)
        ends = {_end(statement): statement for statement in segments}
        builder = _Builder(tree, reuse, set(ends), manager, apply_transforms=False)
        module = builder.string_build(text, modname, path)  # raises: nothing is kept for the file
        self.reused = len(builder.reused)
        # a reused subtree's own bindings were not made again: its tainted definitions are
        # the ones its build found
        tainted = builder.tainted | (was_tainted & builder.definitions)
        flat = {old.node: old.flat for old in previous.values() if old.flat is not None}
        kept: dict[str, _Kept] = {}
        for node in builder.units:
            if node not in tainted:
                key, first = segments[ends[_end(node)]]
                kept[key] = _Kept(first, node, flat.get(node))
        while len(self._files) >= self._max_files:
            del self._files[next(iter(self._files))]
        self._files[path] = (kept, tainted, scanning)
        return module


_NOT_SELF_CONTAINED = re.compile(r"\bglobal\b|#\s*type:")  # see the module's docstring


# What `_scan` found in a definition of the last tree: the definition, its first line then,
# and the candidates in it (itself included), in scan order, each with its first line then.
_Scanned = tuple[ast.stmt, int, list[tuple[ast.stmt, str, int]]]


def _segments(text: str, tree: ast.Module, before: dict[int, _Scanned], now: dict[int, _Scanned]
              ) -> dict[ast.stmt, tuple[str, int]]:
    """The definitions that may be kept (those in the body of the module or of a definition
    there, at any depth): their source text and first line. A definition of the last tree
    handed in again (`reparse.ParseMemo`: the same object has the same text) is not scanned
    again: `before` holds what its scan found, `now` gets what this one finds."""
    candidates: list[tuple[ast.stmt, str, int]] = []
    _scan(tree.body, 0, _Source(text), candidates, before, now)
    found: dict[ast.stmt, tuple[str, int]] = {}
    seen: dict[str, ast.stmt | None] = {}
    for statement, key, first in candidates:
        if key in seen:  # the same text twice: neither is kept
            other = seen[key]
            if other is not None:
                del found[other]
            seen[key] = None
            continue
        seen[key] = statement
        found[statement] = (key, first)
    return found


class _Source:
    """The text's lines and `_Marks`, made when a definition not seen before is scanned."""

    def __init__(self, text: str) -> None:
        self.text = text

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @functools.cached_property
    def marks(self) -> _Marks:
        return _Marks(self.text)


class _Marks:
    """Where `_NOT_SELF_CONTAINED` matches in the text, as (first line, last line): found in
    one search, not once in the text of each definition around them."""

    def __init__(self, text: str) -> None:
        self.spans: list[tuple[int, int]] = []
        line, counted = 1, 0
        for match in _NOT_SELF_CONTAINED.finditer(text):
            line += text.count("\n", counted, match.start())
            self.spans.append((line, line + text.count("\n", match.start(), match.end())))
            counted = match.start()
        self.firsts = [first for first, _ in self.spans]

    def within(self, first: int, last: int) -> bool:
        """Does a match lie within lines `first`..`last`?"""
        index = bisect.bisect_left(self.firsts, first)
        while index < len(self.spans) and self.spans[index][0] <= last:
            if self.spans[index][1] <= last:
                return True
            index += 1
        return False


def _scan(body: list[ast.stmt], column: int, source: _Source, candidates: list[tuple[ast.stmt, str, int]],
          before: dict[int, _Scanned], now: dict[int, _Scanned]) -> None:
    """The candidates of one body (`_segments`), inner definitions first. (A module-level
    function: a nested recursive one is a reference cycle, and what it holds, `candidates`
    and through it most of the stdlib tree, would wait for the cyclic collector.)"""
    spans = [(first_line(statement), last_line(statement)) for statement in body]
    for index, statement in enumerate(body):
        if not isinstance(statement, DEFINITIONS):
            continue
        first, last = spans[index]
        known = before.get(id(statement))
        if known is not None and known[0] is statement:  # the same text, moved by `first - known[1]` lines
            moved = first - known[1]
            mine = [(inner, key, line + moved) for inner, key, line in known[2]] if moved else known[2]
        else:
            mine = []
            _scan(statement.body, statement.body[0].col_offset, source, mine, before, now)
            key = _candidate(statement, column, index, body, spans, source)
            if key is not None:
                mine.append((statement, key, first))
        now[id(statement)] = (statement, first, mine)
        candidates += mine


def _candidate(statement: ast.stmt, column: int, index: int, body: list[ast.stmt], spans: list[tuple[int, int]],
               source: _Source) -> str | None:
    """The text of a definition that may be kept; None if it may not."""
    first, last = spans[index]
    if statement.col_offset != column or (index and spans[index - 1][1] >= first) or (
            index + 1 < len(body) and spans[index + 1][0] <= last):
        return None  # shares a line with another statement
    if source.marks.within(first, last):
        return None
    key = "\n".join(source.lines[first - 1:last])
    return key if key.startswith(" " * column) else None


def _end(node: ast.stmt | nodes.NodeNG) -> tuple[int | None, int | None, int | None]:
    """Where a definition ends, and its column: its own, among those that share no line (a
    class and its last method end together)."""
    return node.end_lineno, node.end_col_offset, node.col_offset


def _definitions(scope: nodes.Module | _Definition) -> Iterator[_Definition]:
    """The definitions `_segments` may choose: those in the body of the module or of a
    definition there, at any depth."""
    for node in scope.body:
        if isinstance(node, (nodes.FunctionDef, nodes.ClassDef)):
            yield node
            yield from _definitions(node)


class _Builder(AstroidBuilder):
    """`brain.build`'s builder (a tree already parsed, no transforms) that reuses the subtrees
    it is given, and tells which definitions bind a name outside themselves (`tainted`)."""

    def __init__(self, tree: ast.Module, reuse: dict[ast.stmt, tuple[_Kept, int]],
                 ends: set[tuple[int | None, int | None, int | None]], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tree = tree
        self._reuse = reuse
        self._ends = ends
        self.reused: list[_Definition] = []
        self.definitions: set[_Definition] = set()  # the built module's, as `_definitions` finds them
        self.units: set[_Definition] = set()  # ... those of `_segments`' definitions
        self.tainted: set[nodes.NodeNG] = set()

    def _data_build(self, data: str, modname: str, path: str | None,
                    is_stub: bool | None = None) -> tuple[nodes.Module, TreeRebuilder]:
        from . import brain

        rebuilder = _Rebuilder(self._manager, data, self._reuse, self.reused, **brain.stub_flag(path, is_stub))
        module = brain.module_of_tree(rebuilder, self._tree, modname, path)
        self.definitions = set(_definitions(module))
        self.units = {node for node in self.definitions if _end(node) in self._ends}
        for walrus in rebuilder.walruses:
            self._taint_reaching(walrus, walrus.frame())
        return module, rebuilder

    def _post_build(self, module: nodes.Module, rebuilder: TreeRebuilder, encoding: str) -> nodes.Module:
        from . import brain

        try:
            return super()._post_build(module, rebuilder, encoding)
        finally:
            brain.release(rebuilder)

    def _taint_reaching(self, node: nodes.NodeNG, binds_in: nodes.NodeNG) -> None:
        """`node` binds a name in the scope `binds_in`: a definition holding `node` but not
        that scope is not self-contained."""
        theirs = self._units_of(binds_in)
        self.tainted.update(unit for unit in self._units_of(node) if unit not in theirs)

    def _units_of(self, node: nodes.NodeNG) -> list[nodes.NodeNG]:
        found: list[nodes.NodeNG] = []
        current: nodes.NodeNG | None = node
        while current is not None:
            if current in self.units:
                found.append(current)
            current = current.parent
        return found


class _Rebuilder(Rebuilder):
    def __init__(self, manager: AstroidManager, data: str, reuse: dict[ast.stmt, tuple[_Kept, int]],
                 reused: list[_Definition], **flags: bool) -> None:
        super().__init__(manager, data, **flags)
        self._reuse = reuse
        self._reused = reused
        self.walruses: list[nodes.NamedExpr] = []  # built here, not in a reused subtree

    def visit_namedexpr(self, node: ast.NamedExpr, parent: nodes.NodeNG) -> nodes.NamedExpr:
        built = super().visit_namedexpr(node, parent)
        self.walruses.append(built)
        return built

    def visit(self, node: Any, parent: nodes.NodeNG) -> Any:
        found = self._reuse.get(node) if isinstance(node, DEFINITIONS) else None
        if found is None:
            return super().visit(node, parent)
        kept, delta = found
        _moved(kept, delta)
        subtree = kept.node
        subtree.parent = parent
        parent.set_local(subtree.name, subtree)  # what visiting the definition does last
        self._reused.append(subtree)
        return subtree


def _moved(kept: _Kept, delta: int) -> None:
    """Shift a kept subtree's line numbers by `delta` and drop its nodes' cached properties.
    (Its nodes are listed once: a walk of every field of every node cost twice the shift.)"""
    if kept.flat is None:
        kept.flat = _flattened(kept.node)
    every, cached_ones = kept.flat
    for node in cached_ones:
        state = node.__dict__
        for name in _shape(type(node))[0]:
            if name in state:
                del state[name]
    if not delta:
        return
    for node in every:
        if node.lineno is not None:
            node.lineno += delta
        if node.end_lineno is not None:
            node.end_lineno += delta
        position = node.__dict__.get("position")
        if position is not None:
            node.position = position._replace(lineno=position.lineno + delta, end_lineno=position.end_lineno + delta)


def _flattened(root: nodes.NodeNG) -> tuple[list[nodes.NodeNG], list[nodes.NodeNG]]:
    """The nodes of a subtree, and those of them whose class has cached properties."""
    every: list[nodes.NodeNG] = []
    cached_ones: list[nodes.NodeNG] = []
    pending = [root]
    pop = pending.pop
    push = pending.append
    node_types = _NODE_TYPES
    while pending:
        node = pop()
        every.append(node)
        cached, fields = _shape(type(node))
        if cached:
            cached_ones.append(node)
        state = node.__dict__
        for name in fields:
            value = state.get(name)
            if value is None:
                continue
            if isinstance(value, node_types):
                push(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, node_types):
                        push(item)
                    elif isinstance(item, (list, tuple)):  # `Dict.items`: pairs
                        pending.extend(part for part in item if isinstance(part, node_types))
    return every, cached_ones


_NODE_TYPES = nodes.NodeNG
_shapes: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _shape(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A node class's cached properties, and the attributes that hold its children."""
    found = _shapes.get(cls)
    if found is None:
        found = _shapes[cls] = (_cached_properties(cls), _child_fields(cls))
    return found


_fields: dict[type, tuple[str, ...]] = {}
_cached: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """The attributes of a node class that hold its children."""
    found = _fields.get(cls)
    if found is None:
        names = tuple(getattr(cls, "_astroid_fields", ())) + tuple(getattr(cls, "_other_other_fields", ()))
        found = _fields[cls] = tuple(name for name in names if name not in ("locals", "globals", "_type"))
    return found


def _cached_properties(cls: type) -> tuple[str, ...]:
    """The `functools.cached_property`s of a node class."""
    found = _cached.get(cls)
    if found is None:
        found = _cached[cls] = tuple({name for klass in cls.__mro__ for name, value in vars(klass).items()
                                      if isinstance(value, functools.cached_property)})
    return found
