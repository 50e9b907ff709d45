"""Text edits for fixes, computed once from astroid nodes and shared by every frontend."""

from __future__ import annotations

from astroid import nodes

from .context import Context
from .findings import Edit, Span
from .source import apply_edits as apply_edits  # where it lived: `fixes.apply_edits` still works


def keyword(call: nodes.Call, name: str) -> nodes.Keyword | None:
    """The `name=` argument of `call`, if written."""
    return next((kw for kw in call.keywords or () if kw.arg == name), None)


def set_keyword(ctx: Context, call: nodes.Call, name: str, value: str) -> tuple[Edit, ...]:
    """`name=value` in `call`: the existing argument's value replaced, or the argument added."""
    if any(kw.arg is None for kw in call.keywords or ()):
        return ()  # `**options` may already carry it
    existing = keyword(call, name)
    if existing is not None:
        span = ctx.span(existing.value)
        return () if span is None else (Edit(span, value),)
    arguments = list(call.args) + list(call.keywords or ())
    if not arguments:  # `f()`: just inside the closing parenthesis
        span = ctx.span(call)
        if span is None:
            return ()
        inside = Span(span.end_line, span.end_col - 1, span.end_line, span.end_col - 1, span.path)
        return (Edit(inside, f"{name}={value}"),)
    last = max(arguments, key=lambda node: (node.end_lineno, node.end_col_offset))
    span = ctx.span(last)
    if span is None:
        return ()
    end = Span(span.end_line, span.end_col, span.end_line, span.end_col, span.path)
    return (Edit(end, f", {name}={value}"),)


def set_argument(ctx: Context, call: nodes.Call, func: nodes.FunctionDef, name: str, value: str) -> tuple[Edit, ...]:
    """Make `call` (a call of `func`) pass `value` for the parameter `name`: the positional
    argument replaced where it is passed by position, else the keyword set or added. A call
    that reaches `func` through something else (`map(func, flags)`, a partial) only has a
    keyword it already passes set."""
    if any(isinstance(arg, nodes.Starred) for arg in call.args):
        return ()  # `*args` may already carry it
    if not names_callee(call, func):
        return set_keyword(ctx, call, name, value) if keyword(call, name) is not None else ()
    positional = [arg.name for arg in (func.args.posonlyargs or []) + (func.args.args or [])]
    if isinstance(func.parent, nodes.ClassDef) and positional and positional[0] in ("self", "cls"):
        return ()  # bound methods shift positions; not worth guessing
    if name in positional and positional.index(name) < len(call.args):
        span = ctx.span(call.args[positional.index(name)])
        return () if span is None else (Edit(span, value),)
    return set_keyword(ctx, call, name, value)


def names_callee(call: nodes.Call, func: nodes.FunctionDef) -> bool:
    """Does the call's text name the function it calls (`helper(...)`, `mod.helper(...)`)? Only
    then are its arguments written where the function's parameters are."""
    callee = call.func
    shown = callee.attrname if isinstance(callee, nodes.Attribute) else callee.name if isinstance(callee, nodes.Name) else ""
    return shown == func.name


def rename_keyword(ctx: Context, call: nodes.Call, old: str, new: str) -> tuple[Edit, ...]:
    """`old=value` becomes `new=value` (the name only; the value keeps its text)."""
    existing = keyword(call, old)
    span = ctx.span(existing) if existing is not None else None
    if span is None:
        return ()
    return (Edit(Span(span.line, span.col, span.line, span.col + len(old), span.path), new),)


def insert_before(ctx: Context, node: nodes.NodeNG, text: str) -> tuple[Edit, ...]:
    """`text` written just before `node` (e.g. `out_type=` before a positional argument)."""
    span = ctx.span(node)
    if span is None:
        return ()
    return (Edit(Span(span.line, span.col, span.line, span.col, span.path), text),)


def wrap(ctx: Context, node: nodes.NodeNG, before: str, after: str) -> tuple[Edit, ...]:
    """`node` written between `before` and `after` (e.g. in a list)."""
    span = ctx.span(node)
    if span is None:
        return ()
    return (Edit(Span(span.line, span.col, span.line, span.col, span.path), before),
            Edit(Span(span.end_line, span.end_col, span.end_line, span.end_col, span.path), after))


def remove_keyword(ctx: Context, call: nodes.Call, name: str) -> tuple[Edit, ...]:
    """Delete `name=...` from `call`, with the comma that separates it from what precedes."""
    existing = keyword(call, name)
    if existing is None:
        return ()
    arguments = sorted(list(call.args) + list(call.keywords or ()), key=lambda n: (n.lineno, n.col_offset))
    position = arguments.index(existing)
    span = ctx.span(existing)
    if span is None:
        return ()
    if position > 0:
        previous = ctx.span(arguments[position - 1])
        if previous is None:
            return ()
        return (Edit(Span(previous.end_line, previous.end_col, span.end_line, span.end_col, span.path), ""),)
    if len(arguments) > 1:
        following = ctx.span(arguments[1])
        if following is None:
            return ()
        return (Edit(Span(span.line, span.col, following.line, following.col, span.path), ""),)
    return (Edit(span, ""),)
