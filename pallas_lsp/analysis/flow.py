"""Data flow: from an expression back to what it can be.

`Flow.evaluate(node)` turns an astroid expression into a lazy value (`values`), following:

* names to their reaching assignments (closures included: astroid's scoped lookup), tuple
  unpacking, lists grown with `append`/`extend` (also under `if`/`else`), module constants;
* parameters to every invocation of their function: direct calls (also through
  `functools.partial`, `*args`, `**kwargs`), kernel scratch (`plgpu.kernel`, `pl.kernel`,
  `pl.pallas_call`, `pl.core_map`: a sequence binds the last parameters, a mapping binds by
  name), `pl.run_scoped` and `pl.with_scoped` (positional and keyword types, lambdas, partials,
  decorators). A function nobody in the analysed code calls is an entry point: its parameters
  are free inputs. A function that escapes into code we do not know gets unknown parameters;
* calls of the analysed code's own functions to their return values, with the parameters
  pinned to that call; dataclass configs to their fields and defaults;
* names imported from other modules of the user's project (astroid resolves them from the file's
  path), so helpers in a sibling module are followed too.

Nothing is decided here: conditions stay symbolic until `solve` concretizes them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

import os
import time

import astroid
from astroid import nodes

from . import api
from . import values as v
from .api import Kind
from .solve import BudgetExceeded, Cancelled, Concretizer
from .values import UNKNOWN

if TYPE_CHECKING:
    from .prefilter import Bindings

_FUNCTIONS = (nodes.FunctionDef, nodes.Lambda)
_EVALUATING = object()
_SEARCHING: Any = object()


# ---------------------------------------------------------------------------
# Invocations: the ways a function's parameters receive values.


@dataclass(eq=False)
class Invocation:
    node: nodes.NodeNG  # where it happens, for messages
    index: int = 0  # position among the function's invocations (its call variable's value)

    def bind(self, conc: Concretizer, func: Any, name: str) -> Any:
        return UNKNOWN


@dataclass(eq=False)
class ArgsInvocation(Invocation):
    """`func(*positional, **keywords)`; `tail` binds `positional` to the *last* parameters.

    `tail` serves kernel scratch and `pl.with_scoped`: the refs come after operands whose
    number is not known where the kernel is built.
    """

    positional: v.Lazy = v.Seq("tuple", ())
    keywords: v.Lazy = v.Mapping(())
    tail: bool = False
    flow: Any = None

    def bind(self, conc: Concretizer, func: Any, name: str) -> Any:
        positional = conc.value(self.positional)
        keywords = conc.value(self.keywords)
        if not isinstance(positional, (tuple, list)) or not isinstance(keywords, dict):
            return UNKNOWN
        return bind_argument(conc, self.flow, func, name, list(positional), keywords, self.tail)


@dataclass(eq=False)
class ScratchInvocation(Invocation):
    """A kernel body: `body(*operands, *scratch)` or `body(*operands, **scratch)`."""

    kind: Kind = Kind.KERNEL
    scratch: v.Lazy | None = None
    flow: Any = None

    def bind(self, conc: Concretizer, func: Any, name: str) -> Any:
        scratch = conc.value(self.scratch) if self.scratch is not None else ()
        if isinstance(scratch, dict):
            positional, keywords = [], scratch
        elif isinstance(scratch, (tuple, list)):
            positional, keywords = list(scratch), {}
        elif scratch is UNKNOWN or self.kind is not Kind.KERNEL:
            return UNKNOWN
        else:  # plgpu.kernel silently ignores a scratch that is neither
            positional, keywords = [], {}
        tail = self.kind is not Kind.CORE_MAP
        return bind_argument(conc, self.flow, func, name, positional, keywords, tail)


def bind_argument(
    conc: Concretizer, flow: Flow, func: Any, name: str, positional: list, keywords: dict, tail: bool
) -> Any:
    """Python's argument binding, for one parameter. Operands before a tail are unknown."""
    arguments = func.args
    if arguments.args is None:  # built from a living object: no signature
        return UNKNOWN
    params = [arg.name for arg in arguments.posonlyargs + arguments.args]
    kwonly = [arg.name for arg in arguments.kwonlyargs]
    if tail:  # kernel scratch: the refs fill the last parameters, or bind by name
        if name in keywords:
            return keywords[name]
        if arguments.vararg or len(positional) > len(params):
            return UNKNOWN
        offset = len(params) - len(positional)
        if name in params:
            position = params.index(name)
            return positional[position - offset] if position >= offset else UNKNOWN
        return _default(conc, flow, arguments, name) if name in kwonly else UNKNOWN
    if name in params:
        position = params.index(name)
        if position < len(positional):
            return positional[position]
        if name in keywords:
            return keywords[name]
        return _default(conc, flow, arguments, name)
    if name == arguments.vararg:
        return tuple(positional[len(params):])
    if name in kwonly:
        return keywords[name] if name in keywords else _default(conc, flow, arguments, name)
    if name == arguments.kwarg:
        return {key: value for key, value in keywords.items() if key not in params + kwonly}
    return UNKNOWN


def _default(conc: Concretizer, flow: Flow, arguments: nodes.Arguments, name: str) -> Any:
    params = arguments.posonlyargs + arguments.args
    names = [arg.name for arg in params]
    if name in names:
        position = names.index(name) - (len(params) - len(arguments.defaults))
        if position >= 0:
            return conc.value(flow.evaluate(arguments.defaults[position]))
        return UNKNOWN
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        if arg.name == name and default is not None:
            return conc.value(flow.evaluate(default))
    return UNKNOWN


# ---------------------------------------------------------------------------


class Flow:
    """Evaluation of expressions of one analysed module (and the modules it pulls in)."""

    def __init__(self, root: nodes.Module) -> None:
        self.root = root
        self.modules: list[nodes.Module] = [root]
        self._memo: dict[nodes.NodeNG, Any] = {}
        self._kinds: dict[nodes.Call, Kind | None] = {}
        self._calls: dict[nodes.NodeNG, list[nodes.Call]] = {}
        self._invocations: dict[Any, list[Invocation]] = {}
        self._by_call: dict[nodes.Call, Invocation] = {}
        self._call_vars: dict[Any, v.Var] = {}
        self._names: dict[nodes.Module, dict[str, list[nodes.Name]]] = {}
        # what the prefilter learnt of the root module's names (engine sets it): it spares
        # astroid lookups whose answer it already knows
        self.bindings: Bindings | None = None
        self.deadline = float("inf")
        self.cancelled: Callable[[], bool] = lambda: False
        # the directory the analysed file's imports are resolved from (engine sets it)
        self.project_root: str | None = None
        self._project_tops: dict[str, bool] = {}
        self._steps = 0

    # -- the API ---------------------------------------------------------------------------

    def api_kind(self, call: nodes.Call) -> Kind | None:
        """What Pallas API function `call` calls, by astroid inference (None if none)."""
        if call in self._kinds:
            return self._kinds[call]
        func = call.func
        if (isinstance(func, nodes.Name) and func.name not in api.CALLEE_NAMES and self.bindings is not None
                and call.root() is self.root and not self.bindings.may_be_imported(func.name)):
            kind = None  # `helper(...)`, `len(...)`: no import can make it an API name
        else:
            kind = self._infer_kind(func)
        self._kinds[call] = kind
        return kind

    def _may_call_project_import(self, func: nodes.NodeNG) -> bool:
        """`f(...)` or `mod.f(...)` of the root module, with `f` / `mod` from an import that
        may lead to a project module (not only to jax, which the brain serves)."""
        base = func.expr if isinstance(func, nodes.Attribute) else func
        if not isinstance(base, nodes.Name):
            return False
        if self.bindings is not None and (not self.bindings.may_be_imported(base.name)
                                          or self.bindings.only_from_jax(base.name)):
            return False
        return _may_name_import(func)

    def callee_kind(self, expr: nodes.NodeNG) -> Kind | None:
        return self._infer_kind(expr)

    def api_name(self, expr: nodes.NodeNG) -> str | None:
        """The qualified API name (`jax.experimental.pallas.mosaic_gpu.kernel`) `expr` names,
        when it names one of `api.KINDS`: it tells `plgpu.kernel` from `pl.kernel`."""
        return self._infer_qname(expr)

    @classmethod
    def _infer_kind(cls, func: nodes.NodeNG) -> Kind | None:
        qname = cls._infer_qname(func)
        return None if qname is None else api.KINDS[qname]

    @staticmethod
    def _infer_qname(func: nodes.NodeNG) -> str | None:
        name = func.attrname if isinstance(func, nodes.Attribute) else getattr(func, "name", None)
        if name not in api.CALLEE_NAMES and not _imported_as_api_name(func):
            return None
        try:
            for inferred in func.infer():
                qname = getattr(inferred, "qname", None)
                if callable(qname) and qname() in api.KINDS:
                    return qname()
        except (astroid.AstroidError, RecursionError, StopIteration):
            return None
        return None

    def qname(self, call: nodes.Call) -> str:
        """The API name of `call`'s callee, as written (`TMEM`, `tcgen05_mma`)."""
        func = call.func
        return func.attrname if isinstance(func, nodes.Attribute) else getattr(func, "name", "")

    def calls(self, module: nodes.NodeNG | None = None) -> list[nodes.Call]:
        """Every call in `module` (the root by default), in source order; walked once, since
        each rule asks for its sites."""
        module = module or self.root
        found = self._calls.get(module)
        if found is None:
            found = self._calls[module] = list(module.nodes_of_class(nodes.Call))
        return found

    def sites(self, *kinds: Kind) -> Iterator[nodes.Call]:
        """Calls of the root module to API functions of the given kinds, in source order."""
        for call in self.calls():
            if self.api_kind(call) in kinds:
                yield call

    def foreign_sites(self, *kinds: Kind) -> Iterator[tuple[nodes.Call, Any, Invocation, nodes.Call]]:
        """API calls inside functions of *other* modules that the root module calls.

        Yields (call in the root module, the function it calls, that invocation, API call in
        the function). JAX's innermost frame in the root file is the root call, so findings
        about such a site belong there.
        """
        for call in self.calls():
            if not self._may_call_project_import(call.func) or self.api_kind(call) is not None:
                continue
            target = self.static_callable(call.func)
            if not isinstance(target, nodes.FunctionDef) or target.root() is self.root:
                continue
            self.invocations(target)
            invocation = self._by_call.get(call)
            if invocation is None:
                continue
            for site in self.calls(target):
                if self.api_kind(site) in kinds:
                    yield call, target, invocation, site

    # -- evaluation ------------------------------------------------------------------------

    def check_time(self) -> None:
        if self.cancelled():
            raise Cancelled()
        if time.monotonic() > self.deadline:
            raise BudgetExceeded()

    def evaluate(self, node: nodes.NodeNG | None) -> v.Lazy:
        if node is None:
            return v.Const(None)
        self._steps += 1
        if self._steps % 256 == 0:
            self.check_time()
        cached = self._memo.get(node)
        if cached is _EVALUATING:
            return v.Opaque("cycle")
        if cached is not None:
            return cached
        self._memo[node] = _EVALUATING
        try:
            result = self._evaluate(node)
        except (astroid.AstroidError, RecursionError, AttributeError, TypeError, ValueError):
            result = v.Opaque("error")
        self._memo[node] = result
        return result

    def _evaluate(self, node: nodes.NodeNG) -> v.Lazy:  # noqa: C901 - one branch per node kind
        if isinstance(node, nodes.Const):
            return v.Const(node.value)
        if isinstance(node, nodes.Name):
            return self._name(node)
        if isinstance(node, nodes.Attribute):
            return self._attribute(node)
        if isinstance(node, nodes.Call):
            return self._call(node)
        if isinstance(node, (nodes.Tuple, nodes.List)):
            kind = "tuple" if isinstance(node, nodes.Tuple) else "list"
            return v.Seq(kind, tuple(self._item(elt) for elt in node.elts))
        if isinstance(node, nodes.Dict):
            return v.Mapping(tuple(
                (None if isinstance(key, nodes.DictUnpack) else self.evaluate(key), self.evaluate(value))
                for key, value in node.items
            ))
        if isinstance(node, nodes.IfExp):
            return v.Ite(self.evaluate(node.test), self.evaluate(node.body), self.evaluate(node.orelse))
        if isinstance(node, nodes.Subscript):
            return v.Index(self.evaluate(node.value), self._subscript_index(node.slice))
        if isinstance(node, nodes.BoolOp):
            return v.Op(node.op, tuple(self.evaluate(value) for value in node.values), node)
        if isinstance(node, nodes.UnaryOp):
            op = "not" if node.op == "not" else node.op + "unary"
            return v.Op(op, (self.evaluate(node.operand),), node)
        if isinstance(node, nodes.BinOp):
            return v.Op(node.op, (self.evaluate(node.left), self.evaluate(node.right)), node)
        if isinstance(node, nodes.Compare):
            return self._compare(node)
        if isinstance(node, nodes.NamedExpr):
            return self.evaluate(node.value)
        if isinstance(node, _FUNCTIONS):
            return v.Func(node)
        return v.Opaque(type(node).__name__)

    def _item(self, node: nodes.NodeNG) -> v.Lazy:
        if isinstance(node, nodes.Starred):
            return v.Star(self.evaluate(node.value))
        return self.evaluate(node)

    def _subscript_index(self, node: nodes.NodeNG) -> v.Lazy:
        if isinstance(node, (nodes.Slice, nodes.Tuple)):
            return v.Opaque("slice")
        return self.evaluate(node)

    def _compare(self, node: nodes.Compare) -> v.Lazy:
        if len(node.ops) != 1:
            return v.Opaque("chained comparison")
        op, right = node.ops[0]
        return v.Op(op, (self.evaluate(node.left), self.evaluate(right)), node)

    # -- names -----------------------------------------------------------------------------

    def _name(self, node: nodes.Name) -> v.Lazy:
        scope, assignments = node.lookup(node.name)
        if not assignments:
            return v.Opaque("undefined or builtin")
        merged = self._branch_merge(assignments)
        if merged is not None:
            return merged
        alternatives = tuple(self._assigned(assignment, node) for assignment in assignments)
        if len(alternatives) == 1:
            return alternatives[0]
        labels = tuple(f"{node.name} as assigned at line {a.lineno}" for a in assignments)
        var = v.Var(("reach", scope, node.name, tuple(assignments)), tuple(range(len(labels))),
                    node.name, labels)
        return v.Choice(var, alternatives)

    def _branch_merge(self, assignments: list) -> v.Lazy | None:
        """`if c: x = a` / `else: x = b` read after the `if`: Ite(c, a, b), not a free choice."""
        if len(assignments) != 2:
            return None
        first, second = (a.statement() for a in assignments)
        branch = first.parent
        if not isinstance(branch, nodes.If) or second.parent is not branch:
            return None
        if first in branch.body and second in branch.orelse:
            then, orelse = assignments
        elif second in branch.body and first in branch.orelse:
            orelse, then = assignments
        else:
            return None
        return v.Ite(self.evaluate(branch.test), self._assigned(then, None), self._assigned(orelse, None))

    def _assigned(self, assignment: nodes.NodeNG, use: nodes.Name | None) -> v.Lazy:
        """The value a name receives at one of its binding sites."""
        if isinstance(assignment, nodes.AssignName):
            return self._assign_name(assignment)
        if isinstance(assignment, nodes.Arguments) and use is not None:  # *args / **kwargs
            return self.parameter(assignment.parent, use.name)
        if isinstance(assignment, nodes.FunctionDef):
            return v.Opaque("decorated def") if assignment.decorators else v.Func(assignment)
        if isinstance(assignment, nodes.ClassDef):
            return v.Func(assignment)
        if isinstance(assignment, (nodes.Import, nodes.ImportFrom)) and use is not None:
            return self._imported(use)
        return v.Opaque(type(assignment).__name__)

    def _assign_name(self, target: nodes.AssignName) -> v.Lazy:
        parent = target.parent
        if isinstance(parent, nodes.Arguments):
            return self.parameter(parent.parent, target.name)
        path: list[int] = []
        node: nodes.NodeNG = target
        while isinstance(parent, (nodes.Tuple, nodes.List)):
            elts = parent.elts
            position = elts.index(node)
            if any(isinstance(elt, nodes.Starred) for elt in elts[: position + 1]):
                return v.Opaque("starred unpacking")
            path.append(position)
            node, parent = parent, parent.parent
        if isinstance(parent, (nodes.Assign, nodes.AnnAssign, nodes.NamedExpr)):
            if parent.value is None:
                return v.Opaque("annotation only")
            value = self.evaluate(parent.value)
            if not path and isinstance(value, (v.Seq, v.Mapping)) and isinstance(parent, nodes.Assign):
                value = self._grown(target, value)
            for position in reversed(path):
                value = v.Index(value, v.Const(position))
            return value
        return v.Opaque(type(parent).__name__)  # for, with, except, augmented assignment, ...

    def _grown(self, target: nodes.AssignName, initial: v.Seq | v.Mapping) -> v.Lazy:
        """`xs = [...]` / `d = dict(...)` then `xs.append(...)`, `xs.extend(...)`, `d[k] = ...`,
        possibly under `if`: the items, conditional ones spread from an Ite."""
        statement = target.statement()
        body = getattr(statement.parent, "body", None)
        if body is None or statement not in body:
            return initial
        growth = _Growth(self, target, isinstance(initial, v.Mapping))
        items = growth.statements(body[body.index(statement) + 1:])
        if items is None:
            return v.Opaque("container grown in a way we do not follow")
        if not items:
            return initial
        if isinstance(initial, v.Mapping):
            return v.Mapping(initial.items + tuple(items))
        return v.Seq(initial.kind, initial.items + tuple(items))

    def _imported(self, use: nodes.Name) -> v.Lazy:
        """A name bound by an import: a function or constant of another module of the project."""
        _, assignments = use.lookup(use.name)
        if not all(self._from_project(a, use.name) for a in assignments):
            return v.Opaque("import from outside the project")
        for inferred in use.infer():
            return self._from_inferred(inferred)
        return v.Opaque("import")

    def _from_project(self, statement: nodes.NodeNG, name: str) -> bool:
        """Does this import bring in a module of the analysed project (not a library)?

        Only those are worth parsing: following `numpy` or `jax._src` would cost seconds and
        tell nothing about TMEM refs. The project is what lies beside the analysed file.
        """
        if isinstance(statement, nodes.ImportFrom):
            if statement.level:
                return True
            top = statement.modname.split(".")[0]
        elif isinstance(statement, nodes.Import):
            modname = next((m for m, alias in statement.names if (alias or m.split(".")[0]) == name), "")
            top = modname.split(".")[0]
        else:
            return False
        if not top or self.project_root is None:
            return False
        if os.path.basename(self.project_root) in ("site-packages", "dist-packages"):
            return top == self.root.name.split(".")[0]  # an installed package: itself only
        known = self._project_tops.get(top)
        if known is None:
            base = os.path.join(self.project_root, top)
            known = os.path.isdir(base) or os.path.isfile(base + ".py")
            self._project_tops[top] = known
        return known

    def _from_inferred(self, inferred: Any) -> v.Lazy:
        if isinstance(inferred, (nodes.FunctionDef, nodes.ClassDef)) and not _is_stub(inferred):
            self._add_module(inferred.root())
            if isinstance(inferred, nodes.FunctionDef) and inferred.decorators:
                return v.Opaque("decorated def")
            return v.Func(inferred)
        if isinstance(inferred, nodes.Const):
            return v.Const(inferred.value)
        return v.Opaque("import")

    def _add_module(self, module: nodes.Module) -> None:
        if module not in self.modules and not getattr(module, "pallas_stub", False):
            self.modules.append(module)

    def _attribute(self, node: nodes.Attribute) -> v.Lazy:
        qualified = _imported_dotted_name(node)
        known = api.dtype_named(qualified) or api.api_value(qualified)
        if known is not None:
            return v.Const(known)
        if isinstance(node.expr, nodes.Name) and self._names_a_module(node.expr):
            statement = node.expr.lookup(node.expr.name)[1][0]
            if not self._from_project(statement, node.expr.name):
                return v.Opaque("attribute of a library module")
            try:
                for inferred in node.infer():
                    return self._from_inferred(inferred)
            except (astroid.AstroidError, StopIteration):
                pass
            return v.Opaque("module attribute")
        return v.Attr(self.evaluate(node.expr), node.attrname)

    @staticmethod
    def _names_a_module(name: nodes.Name) -> bool:
        _, assignments = name.lookup(name.name)
        return len(assignments) == 1 and isinstance(assignments[0], (nodes.Import, nodes.ImportFrom))

    # -- calls -----------------------------------------------------------------------------

    def _call(self, node: nodes.Call) -> v.Lazy:
        kind = self.api_kind(node)
        if kind is Kind.ALLOC:
            return self._alloc(node)
        if kind is Kind.REF_UNION:
            if any(isinstance(arg, nodes.Starred) for arg in node.args):
                return v.Opaque("RefUnion(*groups)")
            return v.UnionAlloc(node, tuple(self.evaluate(arg) for arg in node.args), _bound_name(node))
        if kind is Kind.BARRIER:
            return v.Barrier(node, self.qname(node))
        if kind is Kind.PARTIAL and node.args:
            return v.Partial(self.evaluate(node.args[0]), tuple(self._item(a) for a in node.args[1:]),
                             tuple((kw.arg, self.evaluate(kw.value)) for kw in node.keywords or ()))
        if kind is not None:
            return v.Opaque(f"result of {kind.value}")
        builtin = self._builtin_call(node)
        if builtin is not None:
            return builtin
        made = api.api_value(_imported_dotted_name(node.func), called=True)
        if made is not None:
            return v.Const(made)
        target = self.static_callable(node.func)
        if target is None:
            return v.Opaque("call")
        self.invocations(target)
        invocation = self._by_call.get(node)
        if invocation is None:
            return v.Opaque("call")
        if isinstance(target, nodes.ClassDef):
            return v.Instance(target, invocation) if _is_dataclass(target) else v.Opaque("instance")
        return v.Returned(target, invocation, self._return_value(target))

    def _alloc(self, node: nodes.Call) -> v.Lazy:
        keywords = {kw.arg: kw.value for kw in node.keywords or ()}
        if None in keywords:  # **options: the flag may hide in there
            collective: v.Lazy = v.Opaque("**kwargs")
        else:
            collective = self.evaluate(keywords.get("collective"))
        return v.Alloc(node, self.qname(node), collective, _bound_name(node))

    def _builtin_call(self, node: nodes.Call) -> v.Lazy | None:
        """`dict(a=...)`, `list(xs)`, `tuple(xs)` when the name is the builtin."""
        func = node.func
        if not isinstance(func, nodes.Name) or func.name not in ("dict", "list", "tuple"):
            return None
        scope, _ = func.lookup(func.name)
        if not (isinstance(scope, nodes.Module) and scope.name == "builtins"):
            return None  # shadowed
        if func.name == "dict":
            if node.args:
                return None
            return v.Mapping(tuple(
                (None if kw.arg is None else v.Const(kw.arg), self.evaluate(kw.value))
                for kw in node.keywords or ()
            ))
        if len(node.args) != 1 or node.keywords:
            return None
        return v.Seq("tuple" if func.name == "tuple" else "list", (v.Star(self.evaluate(node.args[0])),))

    def static_callable(self, expr: nodes.NodeNG) -> Any:
        """The function, lambda or class `expr` names, when that is certain."""
        if isinstance(expr, _FUNCTIONS):
            return expr
        if isinstance(expr, (nodes.Name, nodes.Attribute)):
            value = self.evaluate(expr)
            if isinstance(value, v.Func):
                return value.node
        return None

    def _return_value(self, func: Any) -> v.Lazy:
        if isinstance(func, nodes.Lambda):
            return self.evaluate(func.body)
        returns = [
            node for node in func.nodes_of_class(nodes.Return, skip_klass=(nodes.FunctionDef, nodes.Lambda, nodes.ClassDef))
        ]
        if func.is_generator() or len(returns) > 1:
            return v.Opaque("several returns")
        return self.evaluate(returns[0].value) if returns else v.Const(None)

    # -- parameters ------------------------------------------------------------------------

    def parameter(self, func: Any, name: str) -> v.Lazy:
        if self._invocations.get(func) is _SEARCHING:
            return v.LateParam(func, name)  # asked while its invocations are being found
        invocations = self.invocations(func)
        if not any(type(invocation) is not Invocation for invocation in invocations) and (
            not invocations or _is_public(func)
        ):  # an entry point: its inputs come from code we do not see
            return v.FreeRoot(("param", func, name), name)
        alternatives = tuple(v.Param(func, name, invocation) for invocation in invocations)
        if len(alternatives) == 1:
            return alternatives[0]
        return v.Choice(self.call_var(func), alternatives)

    def call_var(self, func: Any) -> v.Var:
        var = self._call_vars.get(func)
        if var is None:
            invocations = self.invocations(func)
            labels = tuple(f"via the call at line {inv.node.lineno}" for inv in invocations)
            var = v.Var(("call", func), tuple(range(len(invocations))), getattr(func, "name", "lambda"), labels)
            self._call_vars[func] = var
        return var

    def bind(self, conc: Concretizer, param: v.Param) -> Any:
        return param.invocation.bind(conc, param.func, param.name)

    def instance_field(self, conc: Concretizer, instance: Any, name: str) -> Any:
        """`config.collective` on `Config(...)`: the argument given, else the class default."""
        fields = [
            stmt.target.name for stmt in instance.cls.body
            if isinstance(stmt, nodes.AnnAssign) and isinstance(stmt.target, nodes.AssignName)
        ]
        if name not in fields:
            return UNKNOWN
        invocation = instance.invocation
        if not isinstance(invocation, ArgsInvocation):
            return UNKNOWN
        positional = conc.value(invocation.positional)
        keywords = conc.value(invocation.keywords)
        if not isinstance(positional, (tuple, list)) or not isinstance(keywords, dict):
            return UNKNOWN
        position = fields.index(name)
        if position < len(positional):
            return positional[position]
        if name in keywords:
            return keywords[name]
        for stmt in instance.cls.body:
            if isinstance(stmt, nodes.AnnAssign) and stmt.target.name == name and stmt.value is not None:
                return conc.value(self.evaluate(stmt.value))
        return UNKNOWN

    # -- kernels ---------------------------------------------------------------------------

    def kernels_running(self, node: nodes.NodeNG) -> list[ScratchInvocation] | None:
        """The kernel invocations (`plgpu.kernel`, `pl.pallas_call`, ...) whose body runs `node`:
        through helper calls, `pl.run_scoped`, and nested bodies (`pl.when`, loops, core_map
        meshes), which run where they are defined. None when a route cannot be followed."""
        return self._kernels_of(node.scope(), 0, set())

    def _kernels_of(self, func: Any, depth: int, seen: set) -> list[ScratchInvocation] | None:
        if not isinstance(func, _FUNCTIONS) or depth > 16:
            return None
        if func in seen:
            return []
        seen.add(func)
        invocations = self.invocations(func)
        if not invocations:
            return None  # an entry point: whoever calls it, we do not see
        found: list[ScratchInvocation] = []
        for invocation in invocations:
            if isinstance(invocation, ScratchInvocation) and invocation.kind is not Kind.CORE_MAP:
                found.append(invocation)
                continue
            if isinstance(invocation, ArgsInvocation):  # a call: runs where the call is
                inner = self._kernels_of(invocation.node.scope(), depth + 1, seen)
            elif isinstance(func.parent, nodes.NodeNG) and isinstance(func.parent.scope(), _FUNCTIONS):
                inner = self._kernels_of(func.parent.scope(), depth + 1, seen)  # a nested body
            else:
                return None
            if inner is None:
                return None
            found.extend(inner)
        return found

    # -- invocations -----------------------------------------------------------------------

    def invocations(self, func: Any) -> list[Invocation]:
        found = self._invocations.get(func)
        if found is _SEARCHING:
            return []
        if found is not None:
            return found
        self._invocations[func] = _SEARCHING
        try:
            found = list(self._find_invocations(func))
        except (astroid.AstroidError, RecursionError):
            found = [Invocation(func)]
        self._invocations[func] = found
        for index, invocation in enumerate(found):
            invocation.index = index
            if isinstance(invocation.node, nodes.Call):
                self._by_call.setdefault(invocation.node, invocation)
        return found

    def _find_invocations(self, func: Any) -> Iterator[Invocation]:
        if isinstance(func, nodes.ClassDef):  # instances: `Config(...)` calls
            yield from (self._use_invocation(reference) for reference in self._references(func))
            return
        decorators = func.decorators.nodes if getattr(func, "decorators", None) else []
        for decorator in decorators:
            yield self._decorator_invocation(decorator)
        if isinstance(func, nodes.Lambda) and not isinstance(func.parent, nodes.Assign):
            yield self._use_invocation(func)
            return
        if decorators and not self._is_with_scoped(decorators):
            return  # the name now means the decorator's result, not this function
        for reference in self._references(func):
            if decorators:  # with_scoped: the caller's arguments, then the scoped refs
                yield self._with_scoped_invocation(reference, decorators)
            else:
                yield self._use_invocation(reference)

    def _references(self, func: Any) -> Iterator[nodes.Name]:
        """Names anywhere in the loaded modules that refer to `func`."""
        name = func.name if isinstance(func, (nodes.FunctionDef, nodes.ClassDef)) else None
        if isinstance(func, nodes.Lambda):
            assign = func.parent
            targets = [t for t in assign.targets if isinstance(t, nodes.AssignName)]
            if len(targets) != 1:
                return
            name = targets[0].name
        for module in list(self.modules):
            for reference in self._names_in(module).get(name, ()):
                if isinstance(reference, nodes.Attribute):  # `module.func`
                    if self._names_a_module(reference.expr):
                        value = self.evaluate(reference)
                        if isinstance(value, v.Func) and value.node is func:
                            yield reference
                    continue
                _, assignments = reference.lookup(name)
                if func in assignments or (isinstance(func, nodes.Lambda) and func.parent in [
                    a.parent for a in assignments
                ]):
                    yield reference
                elif len(assignments) == 1 and isinstance(assignments[0], (nodes.Import, nodes.ImportFrom)):
                    value = self.evaluate(reference)
                    if isinstance(value, v.Func) and value.node is func:
                        yield reference

    def _names_in(self, module: nodes.Module) -> dict[str, list[nodes.NodeNG]]:
        """Names, and `name.attr` attributes by `attr`, of a module."""
        names = self._names.get(module)
        if names is None:
            names = defaultdict(list)
            for name in module.nodes_of_class((nodes.Name, nodes.Attribute)):
                if isinstance(name, nodes.Name):
                    names[name.name].append(name)
                elif isinstance(name.expr, nodes.Name):
                    names[name.attrname].append(name)
            self._names[module] = names
        return names

    def _use_invocation(self, use: nodes.NodeNG) -> Invocation:
        """How the function that `use` refers to gets called, from where it is used."""
        parent = use.parent
        if isinstance(parent, nodes.Call) and parent.func is use:
            return self._call_invocation(parent)
        if isinstance(parent, nodes.Keyword):
            if parent.arg == "body" and isinstance(parent.parent, nodes.Call):
                return self._api_body_invocation(parent.parent, (), (), positional_body=False)
            return Invocation(use)
        if isinstance(parent, nodes.Call) and parent.args and parent.args[0] is use:
            kind = self.api_kind(parent)
            if kind is Kind.PARTIAL:
                return self._partial_invocation(parent)
            if kind is not None:
                return self._api_body_invocation(parent, (), ())
            factory = self._factory(parent.func)
            if factory is not None:  # pl.core_map(mesh)(body), plgpu.kernel(...)(body)
                return factory
        return Invocation(use)

    def _partial_invocation(self, partial: nodes.Call) -> Invocation:
        """`functools.partial(f, *bound)` used somewhere: f receives `bound` first."""
        bound = tuple(self._item(arg) for arg in partial.args[1:])
        bound_keywords = tuple((kw.arg, self.evaluate(kw.value)) for kw in partial.keywords or ())
        parent = partial.parent
        if isinstance(parent, nodes.Call) and parent.func is partial:
            return self._call_invocation(parent, bound, bound_keywords)
        if isinstance(parent, nodes.Call) and parent.args and parent.args[0] is partial:
            if self.api_kind(parent) is not None:
                return self._api_body_invocation(parent, bound, bound_keywords)
        return Invocation(partial)

    def _call_invocation(self, call: nodes.Call, bound: tuple = (), bound_keywords: tuple = ()) -> Invocation:
        positional = v.Seq("tuple", bound + tuple(self._item(arg) for arg in call.args))
        keywords = v.Mapping(
            tuple((v.Const(name) if name else None, value) for name, value in bound_keywords)
            + tuple((None if kw.arg is None else v.Const(kw.arg), self.evaluate(kw.value))
                    for kw in call.keywords or ())
        )
        return ArgsInvocation(call, positional=positional, keywords=keywords, flow=self)

    def _api_body_invocation(
        self, call: nodes.Call, bound: tuple, bound_keywords: tuple, positional_body: bool = True
    ) -> Invocation:
        """The body passed (first, or as `body=`) to a kernel-like API call or `run_scoped`."""
        kind = self.api_kind(call)
        args = call.args[1:] if positional_body else call.args
        keywords = {kw.arg: kw.value for kw in call.keywords or () if kw.arg != "body"}
        return self._api_invocation(call, kind, list(args), keywords, bound, bound_keywords)

    def _api_invocation(self, node, kind, args, keywords, bound=(), bound_keywords=()) -> Invocation:
        if kind in api.SCRATCH_KEYWORDS:
            if bound or bound_keywords or any(key is None for key in keywords):
                return Invocation(node)
            scratch = next((keywords[k] for k in api.SCRATCH_KEYWORDS[kind] if k in keywords), None)
            return ScratchInvocation(node, kind=kind, flow=self,
                                     scratch=None if scratch is None else self.evaluate(scratch))
        if kind is Kind.RUN_SCOPED:
            types = {key: value for key, value in keywords.items() if key != "collective_axes"}
            positional = v.Seq("tuple", bound + tuple(self._item(arg) for arg in args))
            mapping = v.Mapping(
                tuple((v.Const(name) if name else None, value) for name, value in bound_keywords)
                + tuple((None if key is None else v.Const(key), self.evaluate(value)) for key, value in types.items())
            )
            return ArgsInvocation(node, positional=positional, keywords=mapping, flow=self)
        return Invocation(node)

    def _factory(self, expr: nodes.NodeNG) -> Invocation | None:
        """A decorator (or a factory applied to a body): which invocation it gives the body."""
        if not isinstance(expr, nodes.Call):
            return None
        kind = self.api_kind(expr)
        args, keywords = list(expr.args), {kw.arg: kw.value for kw in expr.keywords or ()}
        if kind is Kind.PARTIAL and args:
            kind = self.callee_kind(args[0])
            args = args[1:]
        if kind is Kind.KERNEL and args:  # plgpu.kernel(body, ...) is not a factory
            return None
        if kind is Kind.CORE_MAP:
            args = args[1:]  # the mesh
        if kind in (Kind.KERNEL, Kind.PALLAS_CALL, Kind.CORE_MAP, Kind.RUN_SCOPED):
            return self._api_invocation(expr, kind, args, keywords)
        return None

    def _decorator_invocation(self, decorator: nodes.NodeNG) -> Invocation:
        return self._factory(decorator) or Invocation(decorator)

    def _is_with_scoped(self, decorators: list) -> bool:
        return len(decorators) == 1 and isinstance(decorators[0], nodes.Call) and (
            self.api_kind(decorators[0]) is Kind.WITH_SCOPED
        )

    def _with_scoped_invocation(self, reference: nodes.Name, decorators: list) -> Invocation:
        call = reference.parent
        if not (isinstance(call, nodes.Call) and call.func is reference):
            return Invocation(reference)
        decorator = decorators[0]
        types = {kw.arg: kw.value for kw in decorator.keywords or () if kw.arg != "collective_axes"}
        positional = v.Seq("tuple", tuple(self._item(a) for a in call.args) + tuple(self._item(a) for a in decorator.args))
        keywords = v.Mapping(
            tuple((None if kw.arg is None else v.Const(kw.arg), self.evaluate(kw.value)) for kw in call.keywords or ())
            + tuple((None if key is None else v.Const(key), self.evaluate(value)) for key, value in types.items())
        )
        return ArgsInvocation(call, positional=positional, keywords=keywords, flow=self)


class _Growth:
    """The items added to one list (or dict) variable by a run of statements, if we can tell."""

    def __init__(self, flow: Flow, target: nodes.AssignName, mapping: bool) -> None:
        self.flow = flow
        self.target = target
        self.mapping = mapping

    def statements(self, body: list) -> list | None:
        items: list = []
        for statement in body:
            grown = self.statement(statement)
            if grown is _READ:
                break  # the container is used from here on: later growth is not ours to see
            if grown is None:
                return None
            items.extend(grown)
        return items

    def statement(self, statement: nodes.NodeNG) -> Any:
        if isinstance(statement, nodes.If) and self._mentions_target(statement.body + statement.orelse):
            then, orelse = self.statements(statement.body), self.statements(statement.orelse)
            if then is None or orelse is None:
                return None
            if not then and not orelse:
                return []
            test = self.flow.evaluate(statement.test)
            if self.mapping:
                return [(None, v.Ite(test, v.Mapping(tuple(then)), v.Mapping(tuple(orelse))))]
            return [v.Star(v.Ite(test, v.Seq("list", tuple(then)), v.Seq("list", tuple(orelse))))]
        mutation = self._mutation(statement)
        if mutation is not None:
            return mutation
        if not self._mentions_target([statement]):
            return []
        if self._may_mutate(statement):
            return None  # a loop, a rebinding, an insert: we do not follow those
        return _READ

    def _mutation(self, statement: nodes.NodeNG) -> list | None:
        if self.mapping:
            return self._item_assignment(statement)
        if not isinstance(statement, nodes.Expr) or not isinstance(statement.value, nodes.Call):
            return None
        call = statement.value
        func = call.func
        if not (isinstance(func, nodes.Attribute) and self._is_target(func.expr)):
            return None
        if func.attrname == "append" and len(call.args) == 1:
            return [self.flow.evaluate(call.args[0])]
        if func.attrname == "extend" and len(call.args) == 1:
            return [v.Star(self.flow.evaluate(call.args[0]))]
        return None

    def _item_assignment(self, statement: nodes.NodeNG) -> list | None:
        """`d[key] = value`."""
        if not isinstance(statement, nodes.Assign) or len(statement.targets) != 1:
            return None
        target = statement.targets[0]
        if not (isinstance(target, nodes.Subscript) and self._is_target(target.value)):
            return None
        return [(self.flow.evaluate(target.slice), self.flow.evaluate(statement.value))]

    def _is_target(self, node: nodes.NodeNG) -> bool:
        if not isinstance(node, nodes.Name) or node.name != self.target.name:
            return False
        return self.target in node.lookup(node.name)[1]

    def _mentions_target(self, statements: list) -> bool:
        return any(
            n.name == self.target.name
            for statement in statements
            for n in statement.nodes_of_class((nodes.Name, nodes.AssignName))
        )

    def _may_mutate(self, statement: nodes.NodeNG) -> bool:
        if isinstance(statement, (nodes.For, nodes.While, nodes.With, nodes.Try)):
            return True
        for node in statement.nodes_of_class((nodes.AssignName, nodes.Attribute, nodes.Subscript)):
            if isinstance(node, nodes.AssignName) and node.name == self.target.name:
                return True
            if isinstance(node, nodes.Attribute) and self._is_target(node.expr) and node.attrname in _MUTATORS:
                return True
            if isinstance(node, nodes.Subscript) and self._is_target(node.value) and not isinstance(
                node.parent, (nodes.Call, nodes.Expr)
            ) and node.ctx != astroid.Context.Load:
                return True
        return False


_READ: Any = object()
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})


def _bound_name(call: nodes.Call) -> str:
    """The name an allocation is given where it is written (`acc_tmem=plgpu.TMEM(...)`)."""
    parent = call.parent
    if isinstance(parent, nodes.Keyword) and parent.arg:
        return parent.arg
    if isinstance(parent, nodes.Dict):
        for key, value in parent.items:
            if value is call and isinstance(key, nodes.Const) and isinstance(key.value, str):
                return key.value
    if isinstance(parent, (nodes.Assign, nodes.AnnAssign)):
        targets = parent.targets if isinstance(parent, nodes.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], nodes.AssignName):
            return targets[0].name
    return ""


def _may_name_import(func: nodes.NodeNG) -> bool:
    """Cheap test: `f(...)` or `mod.f(...)` where `f` / `mod` was bound by an import."""
    base = func.expr if isinstance(func, nodes.Attribute) else func
    if not isinstance(base, nodes.Name):
        return False
    _, assignments = base.lookup(base.name)
    return len(assignments) == 1 and isinstance(assignments[0], (nodes.Import, nodes.ImportFrom))


def _imported_dotted_name(node: nodes.NodeNG) -> str | None:
    """`jnp.float16` -> 'jax.numpy.float16' when `jnp` was bound by `import jax.numpy as jnp`
    (or `from jax import numpy as jnp`); None unless the chain starts at an import."""
    if isinstance(node, nodes.Attribute):
        base = _imported_dotted_name(node.expr)
        return None if base is None else f"{base}.{node.attrname}"
    if not isinstance(node, nodes.Name):
        return None
    _, assignments = node.lookup(node.name)
    if len(assignments) != 1:
        return None
    statement = assignments[0]
    if not isinstance(statement, (nodes.Import, nodes.ImportFrom)):
        return None
    for name, alias in statement.names:
        if isinstance(statement, nodes.Import):
            if alias == node.name:
                return name
            if alias is None and name.split(".")[0] == node.name:
                return node.name
        elif isinstance(statement, nodes.ImportFrom) and (alias or name) == node.name and not statement.level:
            return f"{statement.modname}.{name}"
    return None


def _imported_as_api_name(func: nodes.NodeNG) -> bool:
    """`from ...mosaic_gpu import kernel as gpu_kernel`: an API name under an alias."""
    if not isinstance(func, nodes.Name):
        return False
    _, assignments = func.lookup(func.name)
    if len(assignments) != 1 or not isinstance(assignments[0], nodes.ImportFrom):
        return False
    return any(
        (alias or name) == func.name and name in api.CALLEE_NAMES for name, alias in assignments[0].names
    )


def _is_public(func: Any) -> bool:
    """Module-level functions (and methods of module-level classes) can be called from other
    modules: uses we cannot follow do not make their parameters unknowable."""
    parent = func.parent
    if isinstance(parent, nodes.ClassDef):
        parent = parent.parent
    return isinstance(func, nodes.FunctionDef) and isinstance(parent, nodes.Module)


def _is_stub(node: nodes.NodeNG) -> bool:
    return bool(getattr(node.root(), "pallas_stub", False))


def _is_dataclass(cls: nodes.ClassDef) -> bool:
    if not cls.decorators:
        return False
    return any("dataclass" in decorator.as_string() for decorator in cls.decorators.nodes)
