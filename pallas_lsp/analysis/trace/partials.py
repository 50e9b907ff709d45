"""Functions the analysed module uses only through `functools.partial` (or hands back with
their arguments, `return f, (a, b)`): what those bind.

An entry point's default is one of its values (`Trace._inputs`) because a caller may
leave the parameter out. A function whose every use in the module is `functools.partial(f,
...)` binding a parameter is never called without it (a call of the partial may replace the
value, not drop it): its default is not a value it takes, and when every partial binds the
same literal, that literal is the value. The uses are read from the text (each `Name` of the
function anywhere in the module), so a use in code the trace never runs still counts.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from astroid import nodes

# A parameter every partial binds, not always to a literal.
VARIES = object()
_LITERALS = (bool, int, float, str, type(None))


class Uses:
    """The module's reads of each name, found when first asked: in the top-level statements
    whose lines hold the name (a walk of the whole tree at each trace cost an editor a tenth
    of its time on a large kernel file)."""

    def __init__(self, module: nodes.Module) -> None:
        self.module = module
        self._names: dict[str, list[nodes.Name]] = {}
        self._line_starts: list[int] | None = None

    def bound(self, func: nodes.FunctionDef) -> dict[str, Any]:
        """The parameters every use of the top-level `func` binds -> the literals they give
        it (`(type, value)` pairs, in the order of the text), or VARIES; nothing unless each
        use is a `functools.partial(func, ...)` (a decorator is a use we do not see)."""
        if func.decorators is not None or func.args.args is None:
            return {}
        found: dict[str, Any] | None = None
        for use in self._reads(func.name):
            call = _partial_call(use)
            if call is None:
                return {}
            binds = _binds(func.args, call)
            found = {name: _joined((), value) for name, value in binds.items()} if found is None else {
                name: _joined(values, binds[name]) for name, values in found.items() if name in binds}
        return found or {}

    def only_partials(self, func: nodes.FunctionDef) -> bool:
        """Is every use of the top-level `func` a `functools.partial(func, ...)`, or the
        function handed back with its arguments (`return func, (a, b)`: the call its caller
        makes, `Trace._calls_handed_back`)?"""
        if func.decorators is not None:
            return False
        uses = self._reads(func.name)
        return bool(uses) and all(_partial_call(use) is not None or _handed_back(use) for use in uses)

    def _reads(self, name: str) -> list[nodes.Name]:
        found = self._names.get(name)
        if found is None:
            lines = self._lines_naming(name)
            found = self._names[name] = []
            pending: list[nodes.NodeNG] = [self.module]
            while pending:  # only into the nodes whose lines hold the name
                node = pending.pop()
                if isinstance(node, nodes.Name) and node.name == name:
                    found.append(node)
                pending.extend(child for child in node.get_children() if lines is None or _may_hold(lines, child))
        return found

    def _lines_naming(self, name: str) -> list[int] | None:
        """The lines whose text holds `name` as a word, in order (None when the module's text
        is not at hand: every line may)."""
        text = getattr(self.module, "file_bytes", None)
        if not isinstance(text, bytes):
            return None
        if self._line_starts is None:
            self._line_starts = [0] + [match.end() for match in re.finditer(rb"\n", text)]
        word = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")
        return sorted({bisect.bisect_right(self._line_starts, match.start()) for match in word.finditer(text)})


def _partial_call(use: nodes.Name) -> nodes.Call | None:
    """The `functools.partial(name, ...)` the name is the function of, if it is."""
    call = use.parent
    if isinstance(call, nodes.Call) and call.args and call.args[0] is use and _is_partial(call.func):
        return call
    return None


def _handed_back(use: nodes.Name) -> bool:
    """Is the name the function of a pair `(func, (arguments...))`?"""
    pair = use.parent
    return (isinstance(pair, nodes.Tuple) and len(pair.elts) == 2 and pair.elts[0] is use
            and isinstance(pair.elts[1], (nodes.Tuple, nodes.List)))


def _may_hold(lines: list[int], node: nodes.NodeNG) -> bool:
    """Do the node's lines (from its first decorator's) hold one of the sorted `lines`? Yes
    when its position is not known."""
    first, last = node.fromlineno, node.tolineno
    if first is None or last is None:
        return True
    decorators = getattr(node, "decorators", None)
    if decorators:
        first = min([first] + [decorator.fromlineno or first for decorator in decorators.nodes])
    return _holds_any(lines, first, last)


def _holds_any(lines: list[int], first: int, last: int) -> bool:
    """Is one of the sorted `lines` within first..last?"""
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= last


def _binds(arguments: nodes.Arguments, call: nodes.Call) -> dict[str, Any]:
    """The parameters `functools.partial(func, ...)` binds, by position (up to a `*args`) or
    keyword -> the literal it gives (`(type, value)`), or VARIES."""
    positional = (arguments.posonlyargs or []) + (arguments.args or [])
    given: list[tuple[str, nodes.NodeNG]] = []
    for parameter, value in zip(positional, call.args[1:]):
        if isinstance(value, nodes.Starred):
            break
        given.append((parameter.name, value))
    by_keyword = {arg.name for arg in (arguments.args or []) + arguments.kwonlyargs}
    given += [(k.arg, k.value) for k in call.keywords or [] if k.arg in by_keyword]
    found: dict[str, Any] = {}
    for name, value in given:
        literal = _literal(value)
        found[name] = VARIES if literal is VARIES else (type(literal), literal)
    return found


def _literal(node: Any, depth: int = 0) -> Any:
    """The value a literal expression makes (a constant, or a tuple of them: `(96, 128)`),
    else VARIES."""
    if isinstance(node, nodes.Const) and type(node.value) in _LITERALS:
        return node.value
    if isinstance(node, nodes.Tuple) and depth < 4:
        items = tuple(_literal(item, depth + 1) for item in node.elts)
        return VARIES if any(item is VARIES for item in items) else items
    return VARIES


def _joined(values: Any, value: Any) -> Any:
    """The literals one more partial adds to those before (VARIES stays)."""
    if values is VARIES or value is VARIES:
        return VARIES
    return values if value in values else values + (value,)


def _is_partial(expr: nodes.NodeNG) -> bool:
    """Does `expr` name `functools.partial` (`from functools import partial`, `functools.partial`)?"""
    if isinstance(expr, nodes.Name):
        return _imported(expr, expr.name) == "functools.partial"
    return (isinstance(expr, nodes.Attribute) and expr.attrname == "partial" and isinstance(expr.expr, nodes.Name)
            and _imported(expr.expr, expr.expr.name) == "functools")


def _imported(node: nodes.Name, name: str) -> str | None:
    """The qualified name `name` is imported as where `node` reads it (one import binds it)."""
    _, assignments = node.lookup(name)
    if len(assignments) != 1:
        return None
    statement = assignments[0]
    if isinstance(statement, nodes.ImportFrom) and not statement.level:
        return f"{statement.modname}.{statement.real_name(name)}"
    if isinstance(statement, nodes.Import):
        return statement.real_name(name)
    return None
