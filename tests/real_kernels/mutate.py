"""Single-edit mutants of real Pallas Mosaic GPU code (standard library only).

Each mutant changes one call's arguments and keeps every line where it was (a deleted span
keeps its newlines), so a line in the mutant is the same line in the original file:

- `collective-drop`: `TMEM(..., collective=True)` loses the keyword;
- `collective-false`: `TMEM(..., collective=<expression>)` gets `collective=False`;
- `collective-true`: a TMEM without `collective=` (or with `collective=False`) gets
  `collective=True` (mixed collective TMEM, collective TMEM in a kernel without a cluster);
- `refunion-member-*`: the same three on a TMEM written inside a `RefUnion(...)` call;
- `otc-drop`: `Barrier(..., orders_tensor_core=True)` (or `ClusterBarrier`) loses it;
- `packed-with-layout`: a TMEM with `layout=` gets `packed=True` too;
- `packed-drop`: a TMEM loses its `packed=` (a narrow dtype without `packed`);
- `cluster-drop` / `cluster-one`: a `kernel(..., cluster=...)` call loses its cluster, or
  gets one of a single block per cluster dimension.

JAX decides whether a mutant is a bug; the kind is only what was done.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field

KINDS = (
    "collective-drop", "collective-false", "collective-true",
    "refunion-member-drop", "refunion-member-false", "refunion-member-true",
    "otc-drop", "packed-with-layout", "packed-drop", "cluster-drop", "cluster-one",
)


@dataclass(frozen=True)
class Mutant:
    kind: str
    line: int  # first line of the mutated call
    col: int
    what: str  # a short human description
    text: str  # the whole mutated source
    scope: tuple[str, ...] = field(default=())  # enclosing classes/functions, outermost first

    @property
    def key(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:20]

    @property
    def ident(self) -> str:
        return f"{self.kind}@{self.line}:{self.col}"


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


class _Editor:
    def __init__(self, text: str):
        self.text = text
        self.starts = _offsets(text)
        self.lines = text.splitlines(keepends=True)

    def pos(self, line: int, col: int) -> int:
        # ast columns are UTF-8 byte offsets
        raw = self.lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="replace")
        return self.starts[line - 1] + len(raw)

    def start(self, node) -> int:
        return self.pos(node.lineno, node.col_offset)

    def end(self, node) -> int:
        return self.pos(node.end_lineno, node.end_col_offset)

    def replace(self, start: int, end: int, new: str) -> str:
        kept_newlines = self.text[start:end].count("\n") - new.count("\n")
        return self.text[:start] + new + "\n" * max(kept_newlines, 0) + self.text[end:]


def _arguments(call: ast.Call) -> list[ast.AST]:
    items: list[ast.AST] = [*call.args, *call.keywords]
    return sorted(items, key=lambda n: (n.lineno, n.col_offset))


def _drop_keyword(ed: _Editor, call: ast.Call, kw: ast.keyword) -> str:
    items = _arguments(call)
    i = items.index(kw)
    if i + 1 < len(items):  # up to the next argument
        start, end = ed.start(kw), ed.start(items[i + 1])
    elif i > 0:  # from the end of the previous one
        start, end = ed.end(items[i - 1]), ed.end(kw)
    else:
        start, end = ed.start(kw), ed.end(kw)
    return ed.replace(start, end, "")


def _set_value(ed: _Editor, kw: ast.keyword, new: str) -> str:
    return ed.replace(ed.start(kw.value), ed.end(kw.value), new)


def _add_keyword(ed: _Editor, call: ast.Call, text: str) -> str:
    items = _arguments(call)
    if items:
        at = ed.end(items[-1])
        return ed.text[:at] + f", {text}" + ed.text[at:]
    at = ed.end(call) - 1  # before ")"
    return ed.text[:at] + text + ed.text[at:]


def _drop_cluster(text: str, call: ast.Call) -> str:
    """`cluster=` and `cluster_names=` both removed from the call at `call`'s position."""
    for name in ("cluster_names", "cluster"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and (node.lineno, node.col_offset) == (call.lineno, call.col_offset):
                kw = _keyword(node, name)
                if kw is not None:
                    text = _drop_keyword(_Editor(text), node, kw)
                break
    return text


def _keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def _is_const(node: ast.AST | None, *values) -> bool:
    return isinstance(node, ast.Constant) and any(node.value is v for v in values)


def _has_star_kwargs(call: ast.Call) -> bool:
    return any(kw.arg is None for kw in call.keywords)


def _is_tmem(call: ast.Call) -> bool:
    name = _name(call.func)
    if name == "TMEM":
        return True
    # functools.partial(plgpu.TMEM, ...)
    return name == "partial" and bool(call.args) and _name(call.args[0]) == "TMEM"


def _is_kernel(call: ast.Call) -> bool:
    name = _name(call.func)
    return name in ("kernel", "_kernel") and _keyword(call, "cluster") is not None


class _Walker(ast.NodeVisitor):
    def __init__(self):
        self.scope: list[str] = []
        self.union_depth = 0
        self.sites: list[tuple[ast.Call, tuple[str, ...], bool]] = []

    def _scoped(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Call(self, node: ast.Call):
        self.sites.append((node, tuple(self.scope), self.union_depth > 0))
        union = _name(node.func) == "RefUnion"
        self.union_depth += union
        self.generic_visit(node)
        self.union_depth -= union


BIG = 1500  # lines: a test file this long is analysed one test method at a time


def test_spans(tree: ast.Module) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(class, method) -> (first line with decorators, def line, last line) of each test method."""
    spans = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    first = min([item.lineno, *(d.lineno for d in item.decorator_list)])
                    spans[(node.name, item.name)] = (first, item.lineno, item.end_lineno)
    return spans


def sliced(text: str, spans, keep: tuple[str, ...]) -> str:
    """`text` with every test method but `keep` (class, method) reduced to `def name(self): pass`,
    each line where it was: what the linter needs to judge one test's kernels."""
    lines = text.split("\n")
    for key, (first, def_line, last) in spans.items():
        if key == tuple(keep[:2]):
            continue
        indent = lines[def_line - 1][: len(lines[def_line - 1]) - len(lines[def_line - 1].lstrip())]
        for n in range(first, last + 1):
            lines[n - 1] = ""
        lines[def_line - 1] = f"{indent}def {key[1]}(self): pass"
    return "\n".join(lines)


def mutants(text: str, kinds: tuple[str, ...] = KINDS) -> list[Mutant]:
    """Every single-edit mutant of `text` of the given kinds (each parses)."""
    tree = ast.parse(text)
    walker = _Walker()
    walker.visit(tree)
    ed = _Editor(text)
    out: list[Mutant] = []
    big = text.count("\n") > BIG
    spans = test_spans(tree) if big else {}

    def add(kind, call, what, new_text, scope):
        if kind not in kinds:
            return
        try:
            if not big:
                ast.parse(new_text)
            elif tuple(scope[:2]) in spans:
                ast.parse(sliced(new_text, spans, scope))
            # else: outside any test method of a big test file; no harness runs it
        except SyntaxError:
            return
        out.append(Mutant(kind, call.lineno, call.col_offset, what, new_text, scope))

    for call, scope, in_union in walker.sites:
        prefix = "refunion-member-" if in_union else "collective-"
        if _is_tmem(call):
            kw = _keyword(call, "collective")
            if kw is not None and not _is_const(kw.value, False, None):
                if _is_const(kw.value, True):
                    add(prefix + "drop", call, "collective=True removed", _drop_keyword(ed, call, kw), scope)
                else:
                    add(prefix + "false", call, f"collective={ast.unparse(kw.value)} -> False",
                        _set_value(ed, kw, "False"), scope)
            elif kw is not None:
                add(prefix + "true", call, f"collective={ast.unparse(kw.value)} -> True",
                    _set_value(ed, kw, "True"), scope)
            elif not _has_star_kwargs(call):
                add(prefix + "true", call, "collective=True added", _add_keyword(ed, call, "collective=True"), scope)
            layout, packed = _keyword(call, "layout"), _keyword(call, "packed")
            if layout is not None and packed is None and not _is_const(layout.value, None):
                add("packed-with-layout", call, "packed=True added beside layout=",
                    _add_keyword(ed, call, "packed=True"), scope)
            if packed is not None and not _is_const(packed.value, None):
                add("packed-drop", call, f"packed={ast.unparse(packed.value)} removed",
                    _drop_keyword(ed, call, packed), scope)
        elif _name(call.func) in ("Barrier", "ClusterBarrier") or (
            _name(call.func) == "partial" and call.args and _name(call.args[0]) in ("Barrier", "ClusterBarrier")
        ):
            kw = _keyword(call, "orders_tensor_core")
            if kw is not None and not _is_const(kw.value, False, None):
                add("otc-drop", call, f"orders_tensor_core={ast.unparse(kw.value)} removed",
                    _drop_keyword(ed, call, kw), scope)
        elif _is_kernel(call):
            kw = _keyword(call, "cluster")
            add("cluster-drop", call, f"cluster={ast.unparse(kw.value)} (and cluster_names) removed",
                _drop_cluster(text, call), scope)
            ones = "(1,)"
            if isinstance(kw.value, ast.Tuple) and kw.value.elts:
                ones = "(" + ", ".join("1" for _ in kw.value.elts) + ("," if len(kw.value.elts) == 1 else "") + ")"
            if ast.unparse(kw.value).replace(" ", "") not in ("(1,)", "(1,1)", "(1,1,1)"):
                add("cluster-one", call, f"cluster={ast.unparse(kw.value)} -> {ones}", _set_value(ed, kw, ones), scope)
    return out
