"""The abstract interpreter: runs a kernel file's Python the way JAX would trace it.

Statements run forward in frames (closures see their defining frame, methods their class's
enclosing one), calls bind their arguments by Python's rules and run the callee's body with
them (memoized per function, arguments and path guard), and the JAX/Pallas API is either a
native handler (`stubs.NATIVE`: allocations, MMAs, kernels) or an executable Python stub that
calls its function arguments (`stubs.PYTHON`: `lax.fori_loop`, `pl.when`, `pl.loop`, ...).

Conditions on values nobody in the analysed code supplies (an entry point's parameters) are not
decided here: `if config.collective:` runs both branches under guards, and the values they
produce are `Guarded`. A value that cannot be followed is `UNKNOWN`, and nothing that depends
on it is decided later.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

import astroid
from astroid import nodes
from astroid.nodes import _base_nodes

from .. import api
from ..project import BudgetExceeded, Cancelled, budget_clock
from ..values import UNKNOWN
from . import objects as o
from .objects import TRUE, Guard, conjoin, guarded, split

if TYPE_CHECKING:
    from .resolver import Resolver

MAX_DEPTH = 40  # nested calls
MAX_UNROLL = 32  # iterations of a Python loop over known values
MAX_NESTED_UNROLL = 8  # ... of the loops nested in an unrolled one, multiplied
_MISSING: Any = object()
ABSENT: Any = object()  # what a name a class or module did not have was (`shared_log`)
# What a class's attribute written under a name we cannot tell may have been (its methods stay)
_DATA = (int, float, str, bytes, tuple, list, dict, set, type(None), o.Instance)
WRITES_NAMES: Any = object()  # in `Interpreter.writes`: a `global` or `nonlocal` ran
WRITES_IMPORTED: Any = object()  # ... an import ran
_PRIMITIVE = (bool, int, float, complex, str, bytes, type(None))


class Frame:
    """A namespace: a module's, a function call's, a class body's or a comprehension's."""

    __slots__ = ("declared_global", "declared_nonlocal", "parent", "vars")

    def __init__(self, parent: Frame | None = None) -> None:
        self.vars: dict[str, Any] = {}
        self.parent = parent
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()

    def lookup(self, name: str) -> Any:
        frame: Frame | None = self
        while frame is not None:
            value = frame.vars.get(name, _MISSING)
            if value is not _MISSING:
                return value
            frame = frame.parent
        return _MISSING

    def module_frame(self) -> Frame:
        frame = self
        while frame.parent is not None:
            frame = frame.parent
        return frame

    def assign(self, name: str, value: Any) -> None:
        if name in self.declared_global:
            self.module_frame().vars[name] = value
            return
        if name in self.declared_nonlocal:
            frame = self.parent
            while frame is not None and name not in frame.vars:
                frame = frame.parent
            (frame or self).vars[name] = value
            return
        self.vars[name] = value


@dataclass
class Site:
    """One evaluation of an API call the rules care about."""

    kind: str  # "mma", "commit", "copy", "alloc", "union", "kernel", "run_scoped"
    node: nodes.Call
    arguments: dict[str, Any]  # bound to the API's signature
    guard: Guard
    chain: o.Chain  # the calls of the analysed code that led here, outermost first
    kernel: nodes.NodeNG | None  # the kernel entry (`plgpu.kernel(...)`) it runs in, if known
    value: Any = None  # what the call made (allocations)
    meshes: tuple[nodes.NodeNG, ...] = ()  # the `pl.core_map(...)` calls whose bodies it runs in


class EntryExhausted(Exception):
    """One entry point took more steps than any kernel needs (pure-Python code that branches
    and loops on values we do not know): what it recorded stands, the rest is not followed."""


class _Signal(Exception):
    """A path that ends: `return`, `raise`, `break`, `continue` (its args: the statement's
    kind; none when the outcomes of an `if` all ended, in different ways)."""


_RAISED = ("Raise",)  # the args of a `_Signal` that an exception raised


@dataclass
class _Call:
    returns: list[tuple[Guard, Any]] = field(default_factory=list)  # (guard, value)
    function: nodes.NodeNG | None = None  # the function running (what `super()` needs of it)


class Interpreter:
    def __init__(self, root: nodes.Module, resolver: Resolver, deadline: float = float("inf"),
                 cancelled: Callable[[], bool] = lambda: False) -> None:
        from . import stubs  # the stubs call back into the interpreter

        self.root = root
        self.resolver = resolver  # imports: jax -> stubs, project modules -> their trees
        self.stubs = stubs
        self.deadline = deadline
        self.cancelled = cancelled
        self.guard: Guard = TRUE
        self.stack: list[nodes.NodeNG] = []  # call nodes of the analysed code
        self.calls: list[_Call] = []
        self.kernels: list[nodes.NodeNG] = []
        self.meshes: list[nodes.NodeNG] = []  # core_map bodies being run
        self.sites: list[Site] = []
        self.executed: set[nodes.NodeNG] = set()  # function nodes whose body ran
        self.known_calls: set[nodes.NodeNG] = set()  # ... at least once with every argument known
        self.closures: dict[nodes.NodeNG, list[o.Closure]] = {}
        self.escaped: list[Any] = []  # closures (`reuse.Replay`s too, while `Trace` replays kept runs)
        self.modules: dict[nodes.Module, o.ModuleObj] = {}
        self.poisoned: set[int] = set()  # containers grown by loops we did not unroll
        self.failed_modules: set[nodes.Module] = set()  # project modules whose top level raised
        self.repeated_refs: set[int] = set()  # allocations a kernel's scratch holds twice (`_identity`)
        # (held names, name, value before) of writes to classes and modules by code that may
        # never run (`Trace._maybe_run` undoes them afterwards); None outside such code
        self.shared_log: list[tuple[dict[str, Any], str, Any]] | None = None
        self.mutated: set[int] = set()
        self.loop_depth = 0
        self.branch_logs: list[dict[int, tuple[Any, Any]]] = []  # per running `if` outcome: containers it changed
        self.unrolled = 1  # iterations of the enclosing unrolled loops, multiplied
        self.frame: Frame | None = None  # the frame of the function (or module) running now
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._generators: dict[nodes.NodeNG, bool] = {}
        self._free: dict[nodes.NodeNG, tuple[str, ...]] = {}  # function -> the names it reads from outside
        self._yields: dict[nodes.NodeNG, bool] = {}  # function -> is a `yield` anywhere inside?
        self._local: dict[nodes.NodeNG, bool] = {}  # call node -> in the analysed module?
        self._opaque: dict[Any, Any] = {}  # `objects.opaque_var`'s answers for this analysis
        self._active: dict[nodes.NodeNG, int] = {}
        self._steps = 0
        # Did the function `run` last ran raise on every path? (`call` ends the caller's path
        # then: the code after a call that always raises never runs)
        self.raised = False
        self.entry_limit = float("inf")  # `Trace` gives each entry point a number of steps
        # What `trace.reuse` needs to keep an entry point's run for the next analysis: every
        # closure made, in order, and (while it watches, a list) the objects written to
        # (containers changed, attributes set; `WRITES_NAMES` for `global`/`nonlocal`,
        # `WRITES_IMPORTED` for an import).
        self.closure_log: list[o.Closure] = []
        self.writes: list[Any] | None = None
        # What `Trace` needs to replay the runs of imported modules' functions handed to
        # unread code (`reuse.EscapedRun`): every write made outside the top level of a module
        # other than the analysed one (`loose_writes`: the state those top levels made is the
        # same in every analysis while their files are; these are what can change it), and
        # whether that state is still only theirs (`world_clean`: no `global`/`nonlocal` of
        # their code ran outside their top level, none of their top levels ran inside a branch
        # or loop of the importer or was cut short, and none imported the analysed module).
        self.loose_writes: list[Any] = []
        self.construction_writes: list[Any] = []  # ... and those made inside such a top level
        self.world_clean = True
        self.constructing = 0  # top levels of other modules running now
        self.construction_sites = 0  # ... which recorded sites (none usually do)

    # -- budget ----------------------------------------------------------------------------

    def tick(self) -> None:
        self._steps += 1
        if self._steps > self.entry_limit or not self._steps & 511:
            self._check_budget()

    def _check_budget(self) -> None:
        if self._steps > self.entry_limit:
            raise EntryExhausted()
        if self._steps & 511 == 0:
            if self.cancelled():
                raise Cancelled()
            if budget_clock() > self.deadline:
                raise BudgetExceeded()

    # -- modules ---------------------------------------------------------------------------

    def module(self, node: nodes.Module) -> o.ModuleObj:
        found = self.modules.get(node)
        if found is not None:
            if node is self.root:  # the analysed module imported (by itself, or by a module it imports)
                self.world_clean = False
            return found
        frame = Frame()
        frame.vars["__name__"] = node.name
        found = self.modules[node] = o.ModuleObj(node, frame)
        other = node is not self.root
        if other and (self.loop_depth or self.branch_logs or self.unrolled != 1 or self.meshes):
            self.world_clean = False  # what its top level makes depends on where it is imported
        sites = len(self.sites)
        saved = self.guard, self.stack, self.kernels, self.frame
        self.guard, self.stack, self.kernels, self.frame = TRUE, [], [], frame
        self.constructing += other
        try:
            self.block(node.body, frame)
        except _Signal as signal:
            if other and signal.args == _RAISED:  # its top level raised: so does every import of it
                self.failed_modules.add(node)
        except EntryExhausted:
            self.world_clean = False  # its state is what the budget let it make
            raise
        finally:
            self.constructing -= other
            self.guard, self.stack, self.kernels, self.frame = saved
            if other and len(self.sites) != sites:
                self.construction_sites += 1
        return found

    def wrote(self, obj: Any) -> None:
        """A container, instance or namespace is about to change (see `writes`, `loose_writes`)."""
        if self.writes is not None:
            self.writes.append(obj)
        (self.construction_writes if self.constructing else self.loose_writes).append(obj)

    def _names_written(self, node: nodes.Global | nodes.Nonlocal) -> None:
        if self.writes is not None:
            self.writes.append(WRITES_NAMES)
        if not self.constructing and node.root() is not self.root:
            self.world_clean = False  # another module's code rebinding its names

    # -- statements ------------------------------------------------------------------------

    def block(self, statements: Iterable[nodes.NodeNG], frame: Frame) -> None:
        """Run statements; a `_Signal` leaves the block (the path ended)."""
        for statement in statements:
            self.statement(statement, frame)

    def statement(self, node: nodes.NodeNG, frame: Frame) -> None:  # noqa: C901 - one branch per kind
        self.tick()
        if isinstance(node, nodes.Expr):
            self.ev(node.value, frame)
        elif isinstance(node, nodes.Assign):
            value = self.ev(node.value, frame)
            for target in node.targets:
                self.assign(target, value, frame)
        elif isinstance(node, nodes.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.ev(node.value, frame), frame)
        elif isinstance(node, nodes.AugAssign):
            current = self.name(node.target.name, frame) if isinstance(node.target, nodes.AssignName) else UNKNOWN
            if isinstance(node.target, (nodes.AssignAttr, nodes.Subscript)):
                current = self._aug_current(node.target, frame)
            right = self.ev(node.value, frame)
            if type(current) is dict and node.op == "|=" and type(right) is dict:
                self.changing(current)  # `dict.__ior__` updates the dict itself
                current.update(right)
                value = current
            elif type(current) is list and node.op == "+=":
                items = self.iterate(right)  # `list.__iadd__` extends the list itself (and its aliases)
                self.changing(current)
                if items is UNKNOWN:
                    self.poisoned.add(id(current))
                else:
                    current.extend(items)
                value = current
            else:
                value = self.binary(node.op.rstrip("="), current, right)
            self.assign(node.target, value, frame)
        elif isinstance(node, nodes.If):
            self.branch(node.test, node.body, node.orelse, frame)
        elif isinstance(node, nodes.For):
            self.for_loop(node, frame)
        elif isinstance(node, nodes.While):
            self.while_loop(node, frame)
        elif isinstance(node, nodes.Return):
            value = self.ev(node.value, frame) if node.value is not None else None
            if self.calls:
                self.calls[-1].returns.append((self.guard, value))
            raise _Signal("Return")
        elif isinstance(node, (nodes.FunctionDef, nodes.AsyncFunctionDef)):
            native = self.stubs.stub_function(node)
            frame.assign(node.name, native if native is not None else self.define_function(
                node, frame, stub=hasattr(node.root(), "pallas_trace_stub")))
        elif isinstance(node, nodes.ClassDef):
            frame.assign(node.name, self.define_class(node, frame))
        elif isinstance(node, (nodes.Import, nodes.ImportFrom)):
            if self.writes is not None:
                self.writes.append(WRITES_IMPORTED)
            try:
                bound = list(self.resolver.imported(self, node))
            except o.ImportFails:
                raise _Signal(*_RAISED) from None
            for name, value in bound:
                if name == o.STAR_IMPORTS:  # a library module whose names are looked up when read
                    frame.vars[name] = (*frame.vars.get(name, ()), value)
                else:
                    frame.assign(name, value)
        elif isinstance(node, nodes.With):
            for item, bound_to in node.items:
                self.ev(item, frame)
                if bound_to is not None:
                    self.assign(bound_to, UNKNOWN, frame)
            self.block(node.body, frame)
        elif isinstance(node, nodes.Try) and node.handlers and any(self.resolver.may_fail(s) for s in node.body):
            # `try: import <a library we do not read> except ImportError:`: either may run
            self._caught(node, frame)
            self.opaque_loop(node, None, frame, bodies=[node.body + node.orelse, *(h.body for h in node.handlers)])
            self.block(node.finalbody, frame)
        elif isinstance(node, nodes.Try):
            try:
                try:
                    self.block(node.body, frame)
                except _Signal as signal:
                    if signal.args != _RAISED or not node.handlers:
                        raise
                    self._handled(node, frame)
                else:
                    self.block(node.orelse, frame)
            finally:
                self.block(node.finalbody, frame)
        elif isinstance(node, (nodes.Raise, nodes.Break, nodes.Continue)):
            raise _Signal(type(node).__name__)
        elif isinstance(node, nodes.Global):
            frame.declared_global.update(node.names)
            self._names_written(node)
        elif isinstance(node, nodes.Nonlocal):
            frame.declared_nonlocal.update(node.names)
            self._names_written(node)
        elif isinstance(node, nodes.Delete):
            for target in node.targets:
                if isinstance(target, nodes.DelName):
                    frame.vars.pop(target.name, None)
                elif isinstance(target, nodes.DelAttr):
                    self.delete_attribute(self.ev(target.expr, frame), target.attrname)
                elif isinstance(target, nodes.Subscript):
                    self.delete_item(self.ev(target.value, frame), self.ev(target.slice, frame))
        elif isinstance(node, nodes.Match):
            self.opaque_loop(node, None, frame, bodies=[case.body for case in node.cases])
        elif isinstance(node, nodes.Assert):
            self._asserted(node.test, frame)
        # pass, type aliases: nothing to follow

    def _asserted(self, test: nodes.NodeNG, frame: Frame) -> None:
        """`assert test`: where the test is false, AssertionError ends the path (the path goes on
        under the guard that makes it true). A test we cannot decide tells nothing."""
        outcomes = self.truth(self.ev(test, frame))
        if any(truth is UNKNOWN for _, truth in outcomes):
            return
        held = [guard for guard, truth in outcomes if truth]
        if not held:
            raise _Signal(*_RAISED)
        if len(held) == 1:
            self.guard = held[0]

    def _handled(self, node: nodes.Try, frame: Frame) -> None:
        """The `try` body raised: a handler runs (its exception's type we do not know: the
        only one, or one of several, which the way they end is not decided by)."""
        self._caught(node, frame)
        if len(node.handlers) == 1:
            self.block(node.handlers[0].body, frame)
            return
        self.opaque_loop(node, None, frame, bodies=[handler.body for handler in node.handlers])

    def _caught(self, node: nodes.Try, frame: Frame) -> None:
        """`except ... as error`: the exception, whichever it is, is not known."""
        for handler in node.handlers:
            if handler.name is not None:
                self.assign(handler.name, UNKNOWN, frame)

    def _aug_current(self, target: nodes.AssignAttr | nodes.Subscript, frame: Frame) -> Any:
        if isinstance(target, nodes.AssignAttr):
            return self.attribute(self.ev(target.expr, frame), target.attrname)
        return self.item(self.ev(target.value, frame), self.ev(target.slice, frame), target)

    def branch(self, test: nodes.NodeNG, body: list[nodes.NodeNG], orelse: list[nodes.NodeNG], frame: Frame) -> None:
        """`if`: each outcome of the test runs its branch under its guard; afterwards each
        variable is the guarded join of what the live branches left."""
        outcomes = self.truth_of(test, frame)
        if len(outcomes) == 1:
            guard, taken = outcomes[0]
            saved = self.guard
            self.guard = guard
            try:
                self.block(body if taken else orelse, frame)
            finally:
                self.guard = saved
            return
        before = dict(frame.vars)
        saved = self.guard
        live: list[tuple[Guard, dict[str, Any]]] = []
        changed: dict[int, tuple[Any, Any]] = {}  # containers the outcomes changed, with their state before
        ended: list[tuple[Guard, dict[int, Any]]] = []  # per live outcome: those containers' contents after
        endings: set[tuple[Any, ...]] = set()  # how the outcomes that ended did
        for guard, taken in outcomes:
            frame.vars = dict(before)
            self.guard = guard
            self.branch_logs.append({})
            alive = False
            try:
                self.block(body if taken else orelse, frame)
                live.append((guard, frame.vars))
                alive = True
            except _Signal as signal:
                endings.add(signal.args)
            finally:
                log = self.branch_logs.pop()
            for key, (container, old) in log.items():
                changed.setdefault(key, (container, old))
            if alive:
                ended.append((guard, {key: changed[key][0].copy() for key in changed}))
            for container, old in changed.values():  # the next outcome starts from before
                _restore(container, old)
        self.guard = saved
        if not live:
            frame.vars = before
            raise _Signal(*(next(iter(endings)) if len(endings) == 1 else ()))
        self._join_containers(changed, ended)
        if len(live) == 1:
            self.guard, frame.vars = live[0]
            return
        frame.vars = _join(live, before)

    def _join_containers(self, changed: dict[int, tuple[Any, Any]], ended: list[tuple[Guard, dict[int, Any]]]) -> None:
        """Each changed list or dict gets what the live outcomes left in it: the same, or one
        item per outcome under its guard; a list of different lengths is unknown."""
        for key, (container, old) in changed.items():
            versions = [(guard, state.get(key, old)) for guard, state in ended]
            if self.branch_logs and key not in self.branch_logs[-1]:
                self.branch_logs[-1][key] = (container, old)  # an enclosing branch restores it too
            if len(versions) == 1:
                _restore(container, versions[0][1])
            elif isinstance(container, dict):
                keys = list(dict.fromkeys(k for _, state in versions for k in state))
                _restore(container, {k: guarded((g, state.get(k, UNKNOWN)) for g, state in versions) for k in keys})
            elif len({len(state) for _, state in versions}) == 1:
                _restore(container, [guarded((g, state[i]) for g, state in versions)
                                     for i in range(len(versions[0][1]))])
            else:
                _restore(container, versions[0][1])
                self.poisoned.add(key)

    def truth_of(self, test: nodes.NodeNG, frame: Frame) -> list[tuple[Guard, bool]]:
        """The outcomes of a condition as (guard, taken), under the current path guard; an
        undecidable one is a free variable of its own."""
        outcomes = []
        for guard, truth in self.truth(self.ev(test, frame)):
            if truth is UNKNOWN:
                var = o.opaque_var(test, self._opaque)
                for value in o.BOOL:
                    both = conjoin(guard, frozenset({(var, value)}))
                    if both is not None:
                        outcomes.append((both, value))
            else:
                outcomes.append((guard, truth))
        return outcomes or [(self.guard, True)]

    def for_loop(self, node: nodes.For, frame: Frame) -> None:
        """A loop over known items is unrolled: up to MAX_UNROLL iterations, and nested loops
        up to MAX_NESTED_UNROLL in all (a sweep over autotuning configs tells us nothing more
        per config, and each config runs the helpers it calls again)."""
        items = self.iterate(self.ev(node.iter, frame))
        if items is UNKNOWN or self.unrolled * max(len(items), 1) > (
                MAX_NESTED_UNROLL if self.unrolled > 1 else MAX_UNROLL):
            self.opaque_loop(node, node.target, frame)
            return
        self.unrolled *= max(len(items), 1)
        try:
            for item in items:
                self.assign(node.target, item, frame)
                if not self._iteration(node.body, frame):
                    return
            self.block(node.orelse, frame)
        finally:
            self.unrolled //= max(len(items), 1)

    def _iteration(self, body: list[nodes.NodeNG], frame: Frame) -> bool:
        """One run of a loop's body; False when it breaks out of the loop."""
        try:
            self.block(body, frame)
        except _Signal as signal:
            if signal.args == ("Break",):
                return False
            if signal.args != ("Continue",):
                raise
        return True

    def while_loop(self, node: nodes.While, frame: Frame) -> None:
        """A `while` whose test is decided before every iteration (a counter, a worklist of
        known items) runs as Python runs it, up to MAX_UNROLL iterations; from the first test
        it cannot decide on, the rest of it is an `opaque_loop`."""
        for _ in range(MAX_UNROLL + 1):
            outcomes = self.truth_of(node.test, frame)
            if len(outcomes) != 1 or outcomes[0][0] != self.guard:
                break
            if not outcomes[0][1]:
                self.block(node.orelse, frame)
                return
            if not self._iteration(node.body, frame):
                return
        self.opaque_loop(node, None, frame)

    def opaque_loop(self, node: nodes.For | nodes.While | nodes.Match | nodes.Try, target: nodes.NodeNG | None,
                    frame: Frame, bodies: list[list[nodes.NodeNG]] | None = None) -> None:
        """A loop we cannot unroll: its body runs once on unknown items, to see the calls in
        it; whatever it rebinds or grows is unknown afterwards. (`bodies`: a match's cases or
        a try's handlers, one of which runs.)"""
        before = dict(frame.vars)
        self.loop_depth += 1
        try:
            for body in bodies if bodies is not None else [node.body]:  # type: ignore[union-attr]  # a Match gives bodies
                if target is not None:
                    self.assign(target, UNKNOWN, frame)
                try:
                    self.block(body, frame)
                except _Signal:
                    pass
        finally:
            self.loop_depth -= 1
        if not self.loop_depth:
            self.poisoned |= self.mutated
            self.mutated = set()
        for name, value in list(frame.vars.items()):
            if before.get(name, _MISSING) is not value:
                frame.vars[name] = UNKNOWN
        if bodies is None:
            try:
                self.block(getattr(node, "orelse", []), frame)
            except _Signal:
                pass

    def assign(self, target: nodes.NodeNG, value: Any, frame: Frame) -> None:
        if isinstance(target, nodes.AssignName):
            frame.assign(target.name, value)
        elif isinstance(target, (nodes.Tuple, nodes.List)):
            self.unpack(target.elts, value, frame)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
        elif isinstance(target, nodes.AssignAttr):
            self.set_attribute(self.ev(target.expr, frame), target.attrname, value)
        elif isinstance(target, nodes.Subscript):
            container = self.ev(target.value, frame)
            key = self.ev(target.slice, frame)
            if isinstance(container, o.DictOf):  # `obj.__dict__["name"] = value`
                self.set_attribute(container.owner, key, value)
            elif isinstance(container, dict) and isinstance(key, _PRIMITIVE):
                self.changing(container)
                container[key] = value
            elif isinstance(container, list) and isinstance(key, int) and -len(container) <= key < len(container):
                self.changing(container)
                container[key] = value
            elif isinstance(container, list) and isinstance(key, slice):  # `refs[1:3] = ...`
                items = self.iterate(value)
                self.changing(container)
                if items is UNKNOWN:
                    self.poisoned.add(id(container))
                else:
                    container[key] = items
        elif isinstance(target, nodes.Starred):
            self.assign(target.value, value, frame)

    def set_attribute(self, target: Any, name: Any, value: Any) -> None:
        """`target.<name> = value`, however it is spelled (`setattr`, `object.__setattr__`,
        `vars(target)[name] = value`): a name we do not know may have been any attribute."""
        for guard, obj in split(target):
            held = self._attributes_to_change(obj, name)
            if held is None:
                continue
            if not isinstance(name, str):
                for known, old in held.items():
                    if not isinstance(obj, (o.ClassObj, o.ModuleObj)) or isinstance(old, _DATA):
                        held[known] = UNKNOWN
                if isinstance(obj, o.Instance):
                    obj.opaque = True
            elif isinstance(obj, o.Namespace):
                held[name] = value
            else:
                previous = held.get(name, _MISSING)
                held[name] = value if guard == TRUE or previous is _MISSING else (
                    guarded([(guard, value), (TRUE, previous)]))

    def delete_attribute(self, target: Any, name: Any) -> None:
        """`del target.<name>` (`delattr`): reads go to the class again (a class's, to its bases)."""
        for guard, obj in split(target):
            held = self._attributes_to_change(obj, name) if isinstance(name, str) else None
            if held is None:
                continue
            if guard == TRUE:
                held.pop(name, None)
            elif name in held:
                held[name] = UNKNOWN  # deleted on one path only

    def _attributes_to_change(self, obj: Any, name: Any) -> dict[str, Any] | None:
        """What holds `obj`'s attributes (a class's or module's are its names: `Config.x = 1`,
        `settings.X = 1`), about to change under `name` (any of them, when not a string);
        None for an object whose attributes we do not keep."""
        if not isinstance(obj, (o.Namespace, o.Instance, o.ClassObj, o.ModuleObj)):
            return None
        self.wrote(obj)
        held = obj.env.vars if isinstance(obj, (o.ClassObj, o.ModuleObj)) else obj.attributes
        if self.shared_log is not None and isinstance(obj, (o.ClassObj, o.ModuleObj)):
            names = [name] if isinstance(name, str) else list(held)
            self.shared_log.extend((held, known, held.get(known, ABSENT)) for known in names)
        return held

    def delete_item(self, container: Any, key: Any) -> None:
        """`del container[key]`: the item (or slice) gone, or the container's contents unknown."""
        if isinstance(container, dict):
            self.changing(container)
            if isinstance(key, _PRIMITIVE) and key in container:
                del container[key]
            else:
                self.poisoned.add(id(container))
        elif isinstance(container, list):
            self.changing(container)
            if isinstance(key, slice) or (isinstance(key, int) and -len(container) <= key < len(container)):
                del container[key]
            else:
                self.poisoned.add(id(container))

    def unpack(self, targets: list[nodes.NodeNG], value: Any, frame: Frame) -> None:
        star = next((i for i, t in enumerate(targets) if isinstance(t, nodes.Starred)), None)
        if isinstance(value, o.TailTuple):
            self.unpack_tail(targets, star, value.suffix, frame)
            return
        if star is None:
            for index, target in enumerate(targets):
                self.assign(target, self.item(value, index), frame)
            return
        items = self.iterate(value)
        after = len(targets) - star - 1
        if items is UNKNOWN or len(items) < star + after:
            for target in targets:
                self.assign(target, UNKNOWN, frame)
            return
        for index in range(star):
            self.assign(targets[index], items[index], frame)
        self.assign(targets[star], list(items[star:len(items) - after]), frame)
        for index in range(after):
            self.assign(targets[star + 1 + index], items[len(items) - after + index], frame)

    def unpack_tail(self, targets: list[nodes.NodeNG], star: int | None, suffix: tuple[Any, ...], frame: Frame) -> None:
        """Unpack operands-then-scratch: the targets at the end take the scratch refs."""
        after = len(targets) - (star + 1 if star is not None else 0)
        if (star is None and len(targets) < len(suffix)) or after > len(suffix) and star is not None:
            after = 0
        ends = list(suffix[len(suffix) - after:]) if after else []
        for index, target in enumerate(targets):
            position = index - (len(targets) - len(ends))
            self.assign(target, ends[position] if position >= 0 else UNKNOWN, frame)

    def changing(self, container: Any) -> None:
        """A list or dict is about to change: inside a loop we run only once its contents end
        unknown; inside a branch its contents before are kept, to run the other outcome from."""
        self.wrote(container)
        if self.loop_depth:
            self.mutated.add(id(container))
        if self.branch_logs:
            log = self.branch_logs[-1]
            if id(container) not in log:
                log[id(container)] = (container, container.copy())

    # -- definitions -----------------------------------------------------------------------

    def define_function(self, node: nodes.FunctionDef | nodes.Lambda, frame: Frame, stub: bool = False) -> Any:
        defaults = self._defaults(node.args, frame)
        closure = o.Closure(node, frame, stub)
        object.__setattr__(closure, "defaults", defaults)
        if not stub:
            self.closures.setdefault(node, []).append(closure)
            self.closure_log.append(closure)
        value: Any = closure
        decorators = node.decorators.nodes if isinstance(node, nodes.FunctionDef) and node.decorators else []
        for decorator in reversed(decorators):
            wrapper = self.ev(decorator, frame)
            if isinstance(wrapper, o.Parameters):  # the test method runs once per case
                object.__setattr__(closure, "parameters", getattr(closure, "parameters", ()) + (wrapper,))
                continue
            if isinstance(wrapper, o.Library) and wrapper.qname in _ABSTRACT:
                object.__setattr__(closure, "abstract", True)  # a subclass's override is what runs
                continue
            if _is_unknown_callable(wrapper):
                self.escape(value)
                continue  # an unknown decorator (jit, parameterized, ...): calls still run the body
            if isinstance(wrapper, o.Native) and wrapper.qname in self.stubs.METHOD_DECORATORS:
                value = self.stubs.METHOD_DECORATORS[wrapper.qname](value)
                continue
            saved = self.stack
            self.stack = self.stack + [decorator]
            try:
                value = self.invoke(wrapper, [value], {}, decorator)
            finally:
                self.stack = saved
        return value

    def _defaults(self, arguments: nodes.Arguments, frame: Frame) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if arguments.args is None:
            return found
        assert arguments.defaults is not None and arguments.kw_defaults is not None  # with args, always lists
        default: nodes.NodeNG | None
        positional = (arguments.posonlyargs or []) + arguments.args
        for arg, default in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
            found[arg.name] = self.ev(default, frame)
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if default is not None:
                found[arg.name] = self.ev(default, frame)
        return found

    def define_class(self, node: nodes.ClassDef, frame: Frame) -> Any:
        bases = tuple(self.ev(base, frame) for base in node.bases)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
        body = Frame(frame)
        model = any(self.stubs.is_model_base(base) for base in bases)  # its fields are its __init__'s
        cls = o.ClassObj(node, body, bases, dataclass=model, keyword_only=model,
                         enum=self.stubs.makes_enum(bases), flag=self.stubs.makes_flag(bases))
        saved = self.calls
        self.calls = []
        try:
            for statement in node.body:
                if isinstance(statement, (nodes.FunctionDef, nodes.AsyncFunctionDef)):
                    body.vars[statement.name] = self.define_function(statement, frame)  # methods skip the class scope
                else:
                    self.statement(statement, body)
        except _Signal:
            pass
        finally:
            self.calls = saved
        self.stubs.make_members(self, cls)
        value: Any = cls
        for decorator in reversed(node.decorators.nodes if node.decorators else []):
            wrapper = self.ev(decorator, frame)
            if not _runs_code(wrapper):
                value = self.stubs.class_decorator(self, wrapper, value)
                continue
            stack = self.stack  # a decorator of the analysed code: it gets the class, its result is bound
            self.stack = stack + [decorator]
            try:
                value = self.invoke(wrapper, [value], {}, decorator)
            finally:
                self.stack = stack
        return value

    # -- expressions -----------------------------------------------------------------------

    def ev(self, node: nodes.NodeNG | None, frame: Frame) -> Any:
        if node is None:
            return None
        self._steps += 1  # `tick`, inlined: this runs for every expression
        if self._steps > self.entry_limit or not self._steps & 511:
            self._check_budget()
        try:
            kind = type(node)
            if kind is nodes.Name:  # the commonest two, inline
                value = frame.lookup(node.name)  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
                return self.name(node.name, frame) if value is _MISSING else value  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
            if kind is nodes.Const:
                return node.value  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
            if kind is nodes.Call:  # the next two, inline too: a handler is one more frame
                return self.call(node, frame)  # type: ignore[arg-type]  # mypy cannot narrow through `kind`
            if kind is nodes.Attribute:
                return self.attribute(self.ev(node.expr, frame), node.attrname)  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
            handler = _EXPRESSIONS.get(kind)
            if handler is not None:
                return handler(self, node, frame)
            return self._ev(node, frame)
        except (_Signal, BudgetExceeded, EntryExhausted):
            raise
        except o.ImportFails:  # a module read through an attribute (`pkg.sub`) whose import raises
            raise _Signal(*_RAISED) from None
        except RecursionError:
            raise
        except (astroid.AstroidError, AttributeError, TypeError, ValueError, IndexError, KeyError):
            return UNKNOWN

    def _ev(self, node: nodes.NodeNG, frame: Frame) -> Any:  # noqa: C901
        if isinstance(node, nodes.Const):
            return node.value
        if isinstance(node, nodes.Name):
            return self.name(node.name, frame)
        if isinstance(node, nodes.Attribute):
            return self.attribute(self.ev(node.expr, frame), node.attrname)
        if isinstance(node, nodes.Call):
            return self.call(node, frame)
        if isinstance(node, nodes.Subscript):
            return self.item(self.ev(node.value, frame), self.ev(node.slice, frame), node)
        if isinstance(node, (nodes.Tuple, nodes.List, nodes.Set)):
            items = self.elements(node.elts, frame)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
            if items is UNKNOWN:
                return UNKNOWN
            if isinstance(node, nodes.Tuple):
                return tuple(items)
            return list(items) if isinstance(node, nodes.List) else UNKNOWN
        if isinstance(node, nodes.Dict):
            return self.mapping(node.items, frame)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
        if isinstance(node, nodes.IfExp):
            return self.conditional(node, frame)
        if isinstance(node, nodes.BoolOp):
            return self.boolean(node, frame)
        if isinstance(node, nodes.UnaryOp):
            return self.unary(node.op, self.ev(node.operand, frame))
        if isinstance(node, nodes.BinOp):
            return self.binary(node.op, self.ev(node.left, frame), self.ev(node.right, frame))
        if isinstance(node, nodes.Compare):
            return self.compare(node, frame)
        if isinstance(node, nodes.Lambda):
            return self.define_function(node, frame)
        if isinstance(node, nodes.NamedExpr):
            value = self.ev(node.value, frame)
            self.assign(node.target, value, frame)
            return value
        if isinstance(node, nodes.Slice):
            parts = [self.ev(part, frame) for part in (node.lower, node.upper, node.step)]
            return slice(*parts) if all(isinstance(p, (int, type(None), o.TailLength)) for p in parts) else UNKNOWN
        if isinstance(node, (nodes.ListComp, nodes.GeneratorExp, nodes.DictComp, nodes.SetComp)):
            return self.comprehension(node, frame)
        if isinstance(node, nodes.Starred):
            return self.ev(node.value, frame)
        return UNKNOWN

    def name(self, name: str, frame: Frame) -> Any:
        value = frame.lookup(name)
        if value is _MISSING:
            value = self.stubs.BUILTINS.get(name, _MISSING)
        if value is _MISSING:  # bound by `from <library module> import *`, if anything
            starred = frame.lookup(o.STAR_IMPORTS)
            value = self.stubs.resolve(f"{starred[-1]}.{name}") if starred is not _MISSING else UNKNOWN
        return value

    def elements(self, elts: list[nodes.NodeNG], frame: Frame) -> list[Any] | Any:
        items: list[Any] = []
        for elt in elts:
            if isinstance(elt, nodes.Starred):
                spread = self.iterate(self.ev(elt.value, frame))
                if spread is UNKNOWN:
                    return UNKNOWN
                items.extend(spread)
            else:
                items.append(self.ev(elt, frame))
        return items

    def mapping(self, pairs: list[tuple[nodes.NodeNG, nodes.NodeNG]], frame: Frame) -> dict[Any, Any] | Any:
        result: dict[Any, Any] = {}
        for key, value in pairs:
            if isinstance(key, nodes.DictUnpack):
                spread = self.ev(value, frame)
                if not isinstance(spread, dict):
                    return UNKNOWN
                result.update(spread)
                continue
            concrete = self.ev(key, frame)
            if not isinstance(concrete, _PRIMITIVE):
                return UNKNOWN
            result[concrete] = self.ev(value, frame)
        return result

    def conditional(self, node: nodes.IfExp, frame: Frame) -> Any:
        alternatives = []
        saved = self.guard
        try:
            for guard, taken in self.truth_of(node.test, frame):
                self.guard = guard
                alternatives.append((guard, self.ev(node.body if taken else node.orelse, frame)))
        finally:
            self.guard = saved
        return guarded(alternatives)

    def boolean(self, node: nodes.BoolOp, frame: Frame) -> Any:
        """`a and b`, `a or b`: the operand that decides, under the guard it decides in."""
        return guarded(self._chain(list(node.values), self.guard, node.op == "or", frame))

    # (Recursive methods, not nested functions: a recursive closure is a reference cycle, and
    # the frames it holds would wait for the cyclic collector.)
    def _chain(self, values: list[nodes.NodeNG], guard: Guard, stop_on: bool, frame: Frame) -> list[tuple[Guard, Any]]:
        first = self.ev(values[0], frame)
        if len(values) == 1:
            return [(guard, first)]
        found = []
        for inner_guard, value in split(first):
            both = conjoin(guard, inner_guard)
            if both is None:
                continue
            for truth_guard, truth in self.truth(value, both):
                if truth is UNKNOWN:
                    return [(guard, UNKNOWN)]
                if truth == stop_on:
                    found.append((truth_guard, value))
                else:
                    saved = self.guard
                    self.guard = truth_guard
                    try:
                        found.extend(self._chain(values[1:], truth_guard, stop_on, frame))
                    finally:
                        self.guard = saved
        return found

    def comprehension(self, node: nodes.ListComp | nodes.SetComp | nodes.DictComp | nodes.GeneratorExp,
                      frame: Frame) -> Any:
        results: list[Any] = []
        if not self._generate(node, list(node.generators), Frame(frame), frame, results):
            return UNKNOWN
        if isinstance(node, nodes.DictComp):
            if not all(isinstance(key, _PRIMITIVE) for key, _ in results):
                return UNKNOWN
            return dict(results)
        if isinstance(node, nodes.SetComp):
            return UNKNOWN
        return results if isinstance(node, nodes.ListComp) else o.OneShot(results, "a generator expression")

    def _generate(self, node: nodes.ListComp | nodes.SetComp | nodes.DictComp | nodes.GeneratorExp,
                  generators: list[nodes.Comprehension], inner: Frame, frame: Frame, results: list[Any]) -> bool:
        """The comprehension's elements from `generators` on, into `results`; False when they
        cannot be known."""
        if not generators:
            if isinstance(node, nodes.DictComp):
                results.append((self.ev(node.key, inner), self.ev(node.value, inner)))
            else:
                results.append(self.ev(node.elt, inner))
            return True
        generator = generators[0]
        items = self.iterate(self.ev(generator.iter, inner if generator is not node.generators[0] else frame))
        if items is UNKNOWN:
            return False
        for item in items:
            self.assign(generator.target, item, inner)
            keep = True
            for condition in generator.ifs:
                outcomes = self.truth(self.ev(condition, inner))
                if len(outcomes) != 1 or outcomes[0][1] is UNKNOWN:
                    return False
                keep = keep and outcomes[0][1]
            if keep and not self._generate(node, generators[1:], inner, frame, results):
                return False
        return True

    # -- operations ------------------------------------------------------------------------

    def truth(self, value: Any, under: Guard | None = None) -> list[tuple[Guard, Any]]:
        """Python truthiness as (guard, True | False | UNKNOWN) alternatives, pruned by the
        path guard (or `under`)."""
        return o.truth_alternatives(value, self.guard if under is None else under)

    def lift(self, function: Callable[..., Any], *values: Any) -> Any:
        """Apply `function` to every combination of the values' alternatives."""
        for value in values:
            if type(value) is o.Guarded:
                break
        else:
            return function(*values)
        combos: list[tuple[Guard, list[Any]]] = [(TRUE, [])]
        for value in values:
            combos = [
                (both, items + [item])
                for guard, items in combos
                for item_guard, item in split(value)
                if (both := conjoin(guard, item_guard)) is not None
            ]
            if len(combos) > o.MAX_ALTERNATIVES:
                return UNKNOWN
        return guarded((guard, function(*items)) for guard, items in combos)

    def unary(self, op: str, value: Any) -> Any:
        if op == "not":
            return guarded((guard, UNKNOWN if truth is UNKNOWN else not truth) for guard, truth in self.truth(value, TRUE))
        return self.lift(lambda item: self.stubs.flag_inverse(item) if op == "~" and type(item) is o.Instance
                         else _fold(_UNARY.get(op), item), value)

    def binary(self, op: str, left: Any, right: Any) -> Any:
        if type(left) is not o.Guarded and type(right) is not o.Guarded:
            return self._binary(op, left, right)
        return self.lift(lambda a, b: self._binary(op, a, b), left, right)

    def _binary(self, op: str, left: Any, right: Any) -> Any:
        if type(left) is o.Instance or type(right) is o.Instance:
            return self.stubs.member_operation(op, left, right)  # flags combine; other objects are unknown
        return _fold(_BINARY.get(op), left, right)

    def compare(self, node: nodes.Compare, frame: Frame) -> Any:
        left = self.ev(node.left, frame)
        result: Any = True
        for op, right_node in node.ops:
            right = self.ev(right_node, frame)
            outcome = self.lift(lambda a, b, op=op: self._identity(op, a, b), left, right)
            result = outcome if result is True else self.lift(
                lambda a, b: UNKNOWN if UNKNOWN in (a, b) else (a and b), result, outcome)
            left = right
        return result

    def _identity(self, op: str, left: Any, right: Any) -> Any:
        """`_compare`, and `is` between allocations: two of them are two refs; one is one ref in
        a kernel body that got it once (the same spec given twice, `[spec] * 2`, is two refs)."""
        if op in ("is", "is not") and isinstance(left, o.Alloc) and isinstance(right, o.Alloc):
            if left is not right:
                return op == "is not"
            if self.kernels and id(left) not in self.repeated_refs:
                return op == "is"
            return UNKNOWN
        contained = self.stubs.flag_contains(left, right) if op in ("in", "not in") else None
        if contained is not None:  # one flag's bits in another's
            return contained == (op == "in")
        return _compare(op, left, right)

    def attribute(self, value: Any, name: str) -> Any:
        """`value.<name>`; a property whose getter raises on every path raises here."""
        if type(value) is not o.Guarded:
            self.raised = False
            found = self.stubs.attribute(self, value, name)
            if self.raised:
                self.raised = False
                raise _Signal(*_RAISED)
            return found
        return self.lift(lambda obj: self._attribute_or_unknown(obj, name), value)

    def _attribute_or_unknown(self, obj: Any, name: str) -> Any:
        self.raised = False
        found = self.stubs.attribute(self, obj, name)
        if self.raised:  # (on one of the alternatives)
            self.raised = False
            return UNKNOWN
        return found

    def item(self, value: Any, index: Any, node: nodes.NodeNG | None = None) -> Any:
        """`value[index]`; `node`, the subscript, lets a read run code (a `defaultdict`'s factory):
        not for one of several values, whose reads would all change their containers."""
        if type(value) is not o.Guarded and type(index) is not o.Guarded:
            return self.stubs.item(self, value, index, node)
        return self.lift(lambda obj, key: self.stubs.item(self, obj, key), value, index)

    def iterate(self, value: Any) -> list[Any] | Any:
        """The items of a known iterable, else UNKNOWN. An iterator is spent after: what it
        yields again is taken as unknown (empty in Python; the trace keeps no such order
        across branches and loops, and a kernel body short of refs binds them as operands)."""
        if isinstance(value, o.OneShot):
            if id(value) in self.poisoned:
                return UNKNOWN
            self.poisoned.add(id(value))
            return list(value)
        if isinstance(value, (tuple, list)):
            if id(value) in self.poisoned or len(value) > MAX_UNROLL * 4:
                return UNKNOWN
            return list(value)
        if isinstance(value, range):
            return list(value) if len(value) <= MAX_UNROLL else UNKNOWN
        if isinstance(value, dict):
            return list(value) if id(value) not in self.poisoned else UNKNOWN
        if isinstance(value, o.ClassObj) and value.enum:
            return self.stubs.enum_members(value)
        if isinstance(value, o.Instance):
            items = self.stubs.tuple_items(value)  # a named tuple
            return UNKNOWN if items is None else items
        if isinstance(value, o.Union):
            return [self.item(value, index) for index in range(len(value.groups))]
        if isinstance(value, o.Member) and isinstance(value.ref, o.Union):
            return [self.item(value, index) for index in range(len(value.ref.groups))]
        return UNKNOWN

    # -- calls -----------------------------------------------------------------------------

    def call(self, node: nodes.Call, frame: Frame) -> Any:
        callee = self.ev(node.func, frame)
        args, tail = self.call_arguments(node.args, frame)
        kwargs: dict[str, Any] | Any = {}
        for keyword in node.keywords or ():
            value = self.ev(keyword.value, frame)
            if keyword.arg is None:
                if not isinstance(value, dict) or kwargs is UNKNOWN:
                    kwargs = UNKNOWN
                else:
                    kwargs.update(value)
            elif kwargs is not UNKNOWN:
                kwargs[keyword.arg] = value
        if kwargs is UNKNOWN:
            for value in args + (tail or []):
                self.escape(value)
            self.escape(callee)
            return UNKNOWN
        results = []
        raised = False
        saved = self.guard
        try:
            for guard, target in split(callee):
                both = conjoin(saved, guard)
                if both is None:
                    continue
                self.guard = both
                self.raised = False
                if tail is None:
                    value = self.invoke(target, args, kwargs, node)
                else:
                    value = self.invoke_spread(target, args, tail, kwargs, node)
                if self.raised:  # a function of the analysed code raised on every path
                    raised = True
                    continue
                results.append((both, value))
        finally:
            self.guard = saved
            self.raised = False
        if raised and not results:
            raise _Signal(*_RAISED)
        return guarded(results) if results else UNKNOWN

    def call_arguments(self, elts: list[nodes.NodeNG], frame: Frame) -> tuple[list[Any], list[Any] | None]:
        """A call's positional arguments, each evaluated once: all of them and None, or, when a
        `*spread` has items we cannot count, those before it and the known ones after it (a
        kernel body's `*refs` spreads its scratch refs at the end)."""
        prefix: list[Any] = []
        tail: list[Any] | None = None
        for elt in elts:
            if isinstance(elt, nodes.Starred):
                value = self.ev(elt.value, frame)
                items = self.iterate(value)
                if items is UNKNOWN:
                    tail = list(value.suffix) if isinstance(value, o.TailTuple) else []
                    continue
                (prefix if tail is None else tail).extend(items)
            else:
                (prefix if tail is None else tail).append(self.ev(elt, frame))
        return prefix, tail

    def invoke_spread(self, callee: Any, prefix: list[Any], tail: list[Any], kwargs: dict[str, Any],
                      node: nodes.NodeNG) -> Any:
        """Call with `prefix`, a run of arguments we cannot count, then `tail`: a function of the
        analysed code binds what Python's binding makes certain (`spread_bind`); anything else
        gets its arguments as unknown code does."""
        while True:
            if isinstance(callee, o.Bound):
                callee, prefix = callee.func, [callee.self_value] + prefix
            elif isinstance(callee, o.Partial):
                callee, prefix, kwargs = callee.func, list(callee.args) + prefix, {**dict(callee.keywords), **kwargs}
            else:
                break
        if isinstance(callee, o.Closure):
            preset = self.spread_bind(callee, prefix, tail, kwargs)
            if preset is None:
                return UNKNOWN  # the call raises a TypeError
            return self.run(callee, [], kwargs, node, preset)
        for value in prefix + tail + list(kwargs.values()):
            self.escape(value)
        self.escape(callee)
        return UNKNOWN

    def spread_bind(self, closure: o.Closure, prefix: list[Any], tail: list[Any], kwargs: dict[str, Any]
                    ) -> dict[str, Any] | None:
        """The parameters `f(*prefix, *<some items>, *tail, **kwargs)` certainly binds: the
        leading ones take `prefix`; without `*args` and defaults, the call fills every
        positional parameter, so the last ones take `tail`; a `*args` parameter that starts
        within `prefix` ends with `tail`. The rest are unknown; None for a TypeError."""
        arguments = closure.node.args
        if arguments.args is None:
            return None
        positional = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args]
        if any(name in kwargs for name in positional[: len(prefix)]):
            return None
        bound: dict[str, Any] = dict(zip(positional, prefix))
        rest = positional[len(prefix):]
        if not rest:
            if arguments.vararg:
                bound[arguments.vararg] = o.TailTuple(tuple(tail))
            elif len(prefix) > len(positional) or tail:
                return None
            return bound
        bound.update({name: UNKNOWN for name in rest if name not in kwargs})
        if arguments.vararg:
            bound[arguments.vararg] = UNKNOWN
            return bound
        defaults = getattr(closure, "defaults", {})
        if any(name in defaults or name in kwargs for name in rest):
            return bound
        if len(tail) > len(rest):
            return None
        bound.update(zip(rest[len(rest) - len(tail):], tail))
        return bound

    def invoke(self, callee: Any, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG,
               preset: dict[str, Any] | None = None) -> Any:
        if isinstance(callee, o.Closure):
            return self.run(callee, args, kwargs, node, preset)
        if isinstance(callee, o.Bound):
            return self.run(callee.func, [callee.self_value] + args, kwargs, node, preset)
        if isinstance(callee, o.Partial):
            return self.invoke(callee.func, list(callee.args) + args, {**dict(callee.keywords), **kwargs}, node, preset)
        if isinstance(callee, o.Native):
            return self.stubs.call_native(self, callee, args, kwargs, node)
        if isinstance(callee, o.ClassObj):
            return self.stubs.instantiate(self, callee, args, kwargs, node)
        if isinstance(callee, self.stubs.Method):
            return self.stubs.call_method(self, callee, args, kwargs)
        if isinstance(callee, o.Instance):  # a callable object: its class's __call__
            method = self.stubs.class_attribute(callee.cls, "__call__")
            if isinstance(method, o.Closure):
                return self.run(method, [callee] + args, kwargs, node, preset)
        if isinstance(callee, o.Kernel):  # a kernel applied to its operands (PLS015 counts them)
            if isinstance(node, nodes.Call):
                self.record("kernel_apply", node, {"kernel": callee.node, "args": tuple(args),
                                                   "kwargs": tuple(kwargs)})
            return UNKNOWN
        if isinstance(callee, o.Library) and callee.qname in self.stubs.LIBRARY_CALLS:
            return self.stubs.LIBRARY_CALLS[callee.qname](self, node, args, kwargs)
        if isinstance(callee, o.Library) and self.resolver.readable(callee.qname):
            function = self.resolver.library_function(self, callee.qname)  # JAX's kernel building blocks
            if function is not None:
                return self.invoke(function, args, kwargs, node, preset)
        for value in list(args) + list(kwargs.values()):
            self.escape(value)
        if isinstance(callee, (o.Library, api.ApiValue)):
            return self.stubs.library_call(callee)
        return UNKNOWN

    def escape(self, value: Any) -> None:
        """A function handed to code we do not read still runs: trace it later, with
        unknown arguments, if nothing calls it meanwhile."""
        for _, item in split(value):
            if isinstance(item, o.Closure) and not item.stub:
                self.escaped.append(item)
            elif isinstance(item, o.Partial):
                self.escape(item.func)
            elif isinstance(item, o.Bound):
                self.escape(item.func)

    def run(self, closure: o.Closure, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG,
            preset: dict[str, Any] | None = None) -> Any:
        """Call a function of the analysed code (or a stub) with these arguments."""
        func = closure.node
        self.raised = False
        depth = self._active.get(func, 0)
        if (depth >= 1 and not closure.stub) or depth >= MAX_DEPTH or len(self.stack) > MAX_DEPTH:
            return UNKNOWN  # recursion: kernels do not recurse, and following it explodes
            # (a stub's inner function nests legitimately: `pl.when` inside `pl.when`)
        frame = Frame(closure.env)
        bound = self.bind(closure, args, kwargs, preset)
        if bound is None:
            return UNKNOWN
        frame.vars.update(bound)
        anchor = self.anchor()
        key = _memo_key(func, closure.env, bound, self.guard, anchor, self.kernel_run(),
                        self._free_values(func, closure.env))
        if key is not None and key in self._memo:
            result, self.raised = self._memo[key]
            return result
        self.executed.add(func)
        if not any(value is UNKNOWN for value in bound.values()):
            self.known_calls.add(func)
        pushed = not closure.stub and isinstance(node, nodes.NodeNG) and node.root() is not None
        saved_stack = self.stack
        if pushed:
            self.stack = self.stack + [node]
        self._active[func] = depth + 1
        self.calls.append(_Call(function=func))
        saved_guard, saved_frame = self.guard, self.frame
        self.frame = frame
        raised = False
        try:
            if isinstance(func, nodes.Lambda):
                result = self.ev(func.body, frame)
            else:
                try:
                    self.block(func.body, frame)
                    self.calls[-1].returns.append((self.guard, None))
                except _Signal:
                    pass
                returns = self.calls[-1].returns
                generator = self._is_generator(func)  # (its body runs when it is iterated)
                raised = not returns and not generator
                result = UNKNOWN if generator else (guarded(returns) if returns else None)
        finally:
            self.calls.pop()
            self._active[func] = depth
            self.stack = saved_stack
            self.guard, self.frame = saved_guard, saved_frame
        if key is not None:
            self._memo[key] = (result, raised)
        self.raised = raised
        return result

    def _free_values(self, func: nodes.FunctionDef | nodes.Lambda, env: Frame | None) -> tuple[Any, ...]:
        """What the names the function reads from outside itself hold now. Python reads a
        closure's free variables when it runs, not when it is defined: `for acc in accs:` around
        `@pl.loop` or `@pl.when` bodies runs the same function object with a different `acc`
        each time, so the call is the same call only when these are the same too."""
        names = _free_names(func, self._free, self._yields)
        if env is None or not names:
            return ()
        return tuple((name, _by_identity(env.lookup(name))) for name in names)

    def _is_generator(self, func: nodes.FunctionDef) -> bool:
        """astroid walks the body each time it is asked (twice), and a function runs many
        times. astroid only ever finds `yield` nodes inside the function: without one (the walk
        for its free names looked) it is not a generator, and astroid is not asked."""
        found = self._generators.get(func)
        if found is None:
            _free_names(func, self._free, self._yields)
            found = self._generators[func] = self._yields.get(func, True) and bool(func.is_generator())
        return found

    def bind(self, closure: o.Closure, args: list[Any], kwargs: dict[str, Any],
             preset: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Python's argument binding; None when the call would raise a TypeError."""
        arguments = closure.node.args
        if arguments.args is None:
            return None
        defaults = getattr(closure, "defaults", {})
        positional = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args]
        kwonly = [arg.name for arg in arguments.kwonlyargs]
        bound: dict[str, Any] = dict(preset or {})
        extra_kwargs: dict[str, Any] = {}
        free_positional = [name for name in positional if name not in bound]
        if len(args) > len(free_positional) and not arguments.vararg:
            return None
        for name, value in zip(free_positional, args):
            bound[name] = value
        if arguments.vararg and arguments.vararg not in bound:
            bound[arguments.vararg] = tuple(args[len(free_positional):])
        for name, value in kwargs.items():
            if name in bound and name in positional[: len(args)]:
                return None
            if name in positional or name in kwonly:
                bound[name] = value
            elif arguments.kwarg:
                extra_kwargs[name] = value
            else:
                return None
        for name in positional + kwonly:
            if name not in bound:
                if name in defaults:
                    bound[name] = defaults[name]
                elif preset is not None:
                    bound[name] = UNKNOWN  # kernel operands: not ours to know
                else:
                    return None
        if arguments.kwarg and arguments.kwarg not in bound:
            bound[arguments.kwarg] = extra_kwargs
        return bound

    # -- where we are ----------------------------------------------------------------------

    def anchor(self) -> nodes.NodeNG | None:
        """The innermost call of the analysed file on the way here: where JAX's traceback
        last points into it."""
        for node in reversed(self.stack):
            local = self._local.get(node)
            if local is None:
                local = self._local[node] = node.root() is self.root
            if local:
                return node
        return None

    def kernel_run(self) -> tuple[nodes.NodeNG, ...] | None:
        """The kernel invocation we are in: the calls up to its `plgpu.kernel(...)` (a kernel
        made by a factory called twice runs twice, and each run records its own sites)."""
        if not self.kernels:
            return None
        kernel = self.kernels[-1]
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index] is kernel:
                return tuple(self.stack[: index + 1])
        return (kernel,)

    def record(self, kind: str, node: nodes.Call, arguments: dict[str, Any], value: Any = None) -> None:
        self.sites.append(Site(kind, node, arguments, self.guard, tuple(self.stack),
                               self.kernels[-1] if self.kernels else None, value, tuple(self.meshes)))


def _carries_refs(values: list[Any], depth: int = 0) -> bool:
    """Does any of these values hold a ref (an allocation, a union, a barrier)?"""
    for value in values:
        if isinstance(value, (o.Alloc, o.Union, o.Member, o.View, o.Barrier)):
            return True
        if depth < 3 and isinstance(value, (tuple, list)) and _carries_refs(list(value), depth + 1):
            return True
        if depth < 3 and isinstance(value, dict) and _carries_refs(list(value.values()), depth + 1):
            return True
        if isinstance(value, o.Guarded) and _carries_refs([v for _, v in value.alternatives], depth + 1):
            return True
    return False


# The commonest expressions by exact node type (one dict lookup instead of a chain of
# isinstance tests); every other kind goes through `Interpreter._ev`.
_EXPRESSIONS: dict[type, Callable[[Interpreter, Any, Frame], Any]] = {
    nodes.Const: lambda self, node, frame: node.value,
    nodes.Name: lambda self, node, frame: self.name(node.name, frame),
    nodes.Attribute: lambda self, node, frame: self.attribute(self.ev(node.expr, frame), node.attrname),
    nodes.Call: Interpreter.call,
    nodes.Subscript: lambda self, node, frame: self.item(self.ev(node.value, frame), self.ev(node.slice, frame), node),
    nodes.Compare: Interpreter.compare,
    nodes.BinOp: lambda self, node, frame: self.binary(node.op, self.ev(node.left, frame), self.ev(node.right, frame)),
    nodes.JoinedStr: lambda self, node, frame: self.lift(
        lambda *parts: _formatted(parts), *[self.ev(part, frame) for part in node.values]),
    nodes.FormattedValue: lambda self, node, frame: self.lift(
        lambda value, spec: _format_value(value, node.conversion, spec),
        self.ev(node.value, frame), self.ev(node.format_spec, frame) if node.format_spec is not None else ""),
}


def _formatted(parts: tuple[Any, ...]) -> Any:
    """An f-string of known parts (each formatted by `_format_value`)."""
    return "".join(parts) if all(isinstance(part, str) for part in parts) else UNKNOWN


_CONVERSIONS: dict[int, Callable[[Any], str]] = {ord("r"): repr, ord("s"): str, ord("a"): ascii}


def _format_value(value: Any, conversion: int, spec: Any) -> Any:
    """`{value!conversion:spec}` of a plain value, as Python formats it."""
    if not isinstance(value, (bool, int, float, str, type(None))) or not isinstance(spec, str):
        return UNKNOWN
    converted = _CONVERSIONS.get(conversion)
    try:
        return format(converted(value) if converted is not None else value, spec)
    except (TypeError, ValueError):
        return UNKNOWN


def _restore(container: Any, contents: Any) -> None:
    if isinstance(container, dict):
        container.clear()
        container.update(contents)
    else:
        container[:] = contents


def _join(live: list[tuple[Guard, dict[str, Any]]], before: dict[str, Any]) -> dict[str, Any]:
    """The variables after an `if`: what no outcome rebound stays; the rest is joined."""
    changed: set[str] = set()
    for _, variables in live:
        changed.update(name for name, value in variables.items() if before.get(name, _MISSING) is not value)
        changed.update(before.keys() - variables.keys())  # `del`
    joined = {name: value for name, value in before.items() if name not in changed}
    for name in changed:
        values = [(guard, variables.get(name, UNKNOWN)) for guard, variables in live]
        first = values[0][1]
        joined[name] = first if all(value is first for _, value in values) else guarded(values)
    return joined


_UNARY = {"-": operator.neg, "+": operator.pos, "~": operator.invert}
_BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "/": operator.truediv,
    "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift,
    "|": operator.or_, "&": operator.and_, "^": operator.xor,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}


def _foldable(value: Any) -> bool:
    if isinstance(value, o.NotSequence):
        return False  # (compared as objects, not as their items)
    if isinstance(value, (tuple, list)):
        return all(_foldable(item) for item in value)
    return isinstance(value, _PRIMITIVE)


def _fold(function: Any, *operands: Any) -> Any:
    if function in (operator.add, operator.sub) and len(operands) == 2 and isinstance(operands[0], o.TailLength) \
            and isinstance(operands[1], int) and not isinstance(operands[1], bool):
        length, number = operands
        return o.TailLength(length.tail, length.offset + (number if function is operator.add else -number))
    if function is None or not all(_foldable(operand) for operand in operands):
        return _combined(function, *operands)
    try:
        result = function(*operands)
    except (TypeError, ValueError, ArithmeticError, OverflowError):
        return UNKNOWN
    if isinstance(result, (int, float)) and abs(result) > 1 << 64:
        return UNKNOWN
    return result


def _combined(function: Any, left: Any, right: Any) -> Any:
    """Containers of objects (refs, specs) joined as Python joins them: concatenated
    (`(a_smem,) + scratch`), repeated (`[spec] * 2`: the same object twice), or two dicts'
    union (`base | {"collective": False}`: the right one's entries win)."""
    if isinstance(left, o.NotSequence) or isinstance(right, o.NotSequence):
        return UNKNOWN  # (no `+` or `*`: a set's operators, or a TypeError)
    if function is operator.add and isinstance(left, tuple) and isinstance(right, tuple):
        return left + right
    if function is operator.add and isinstance(left, list) and isinstance(right, list):
        return left + right
    if function is operator.mul:
        sequence, count = (left, right) if isinstance(left, (tuple, list)) else (right, left)
        if isinstance(sequence, (tuple, list)) and isinstance(count, int) and not isinstance(count, bool) \
                and len(sequence) * max(count, 0) <= MAX_UNROLL * 4:
            return sequence * count
    if function is operator.or_ and type(left) is dict and type(right) is dict:
        return {**left, **right}
    if function is operator.or_ and isinstance(left, dict) and isinstance(right, dict):
        kept = left if isinstance(left, o.DefaultDict) else right  # `defaultdict | dict`, either way round
        if isinstance(kept, o.DefaultDict) and type(left if kept is right else right) in (dict, o.DefaultDict):
            return o.DefaultDict(kept.factory, {**left, **right})
    return UNKNOWN


def _compare(op: str, left: Any, right: Any) -> Any:
    member = _member_compare(op, left, right)
    if member is not None:
        return member
    if op in ("is", "is not"):
        for subject, other in ((left, right), (right, left)):
            if other is None:
                if isinstance(subject, o.Free):
                    var = o.none_var(subject)
                    truth = op == "is"
                    return o.Guarded(((frozenset({(var, True)}), truth), (frozenset({(var, False)}), not truth)))
                if subject is UNKNOWN or isinstance(subject, o.Operand):  # a None operand stays None
                    return UNKNOWN
                return (subject is None) == (op == "is")
        if isinstance(left, _PRIMITIVE) and isinstance(right, _PRIMITIVE):
            same = type(left) is type(right) and left == right
            return same == (op == "is")
        return UNKNOWN
    for subject, other in ((left, right), (right, left)):
        if isinstance(subject, o.Free) and isinstance(other, _PRIMITIVE) and op in ("==", "!="):
            var = o.equals_var(subject, "==", other)
            truth = op == "=="
            return o.Guarded(((frozenset({(var, True)}), truth), (frozenset({(var, False)}), not truth)))
    if op in ("in", "not in") and isinstance(right, (tuple, list)) and not isinstance(right, o.OneShot) \
            and isinstance(left, _PRIMITIVE) and all(
            isinstance(item, _PRIMITIVE) for item in right):
        return _COMPARE[op](left, right)
    if _foldable(left) and _foldable(right):
        try:
            return _COMPARE[op](left, right)
        except TypeError:
            return UNKNOWN
    return UNKNOWN


def _member_compare(op: str, left: Any, right: Any) -> Any:
    """An enum member compared: it is itself, and equal to nothing else (a plain `Enum`'s
    member is not its value). None: no member is compared."""
    if not (_is_member(left) or _is_member(right)):
        return None
    if op not in ("is", "is not", "==", "!=") or not all(
            _is_member(side) or isinstance(side, _PRIMITIVE) for side in (left, right)):
        return UNKNOWN
    return (left is right) == (op in ("is", "=="))


def _is_member(value: Any) -> bool:
    """A plain enum's member, compared as enums compare (by identity): not one of a class that
    defines its own equality."""
    return isinstance(value, o.Instance) and value.cls.enum and not any(
        "__eq__" in klass.env.vars or "__ne__" in klass.env.vars for klass in value.cls.mro())


_ABSTRACT = frozenset({"abc.abstractmethod", "abc.abstractproperty"})


def _is_unknown_callable(value: Any) -> bool:
    return value is UNKNOWN or isinstance(value, (o.Library, o.Free))


def _memo_key(func: Any, env: Any, bound: dict[str, Any], guard: Guard, anchor: Any,
              kernel: Any, free: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    try:
        frozen = tuple(sorted((name, _freeze(value)) for name, value in bound.items()))
        key = (func, env, frozen, guard, anchor, kernel, free)  # the frame itself: an id may be reused
        hash(key)
        return key
    except _Unfreezable:
        return None
    except TypeError:
        return None


class _Unfreezable(Exception):
    pass


def _freeze(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, (list, dict, set)):
        raise _Unfreezable()  # the callee may mutate it: run it every time
    if isinstance(value, o.Instance):
        return value  # by identity, and kept alive by the key
    return value


class _Identity:
    """A value compared by identity (and kept alive by the key holding it)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def _runs_code(callee: Any) -> bool:
    """Is calling `callee` running a function of the analysed code (or of a module it imports)?"""
    if isinstance(callee, (o.Bound, o.Partial)):
        return _runs_code(callee.func)
    return isinstance(callee, o.Closure) and not callee.stub


def _by_identity(value: Any) -> Any:
    """A free variable's value for a memo key: a container by identity (what it holds is the
    callee's to read; the argument that would be a copy is not), anything else as it is (a
    value that cannot be hashed leaves the call unmemoized)."""
    return _Identity(value) if isinstance(value, (list, dict, set)) else value


_SCOPES = (nodes.FunctionDef, nodes.Lambda, nodes.ClassDef, nodes.ListComp, nodes.SetComp, nodes.DictComp,
           nodes.GeneratorExp)


def _free_names(scope: nodes.LocalsDictNodeNG, known: dict[nodes.NodeNG, tuple[str, ...]],
                yields: dict[nodes.NodeNG, bool]) -> tuple[str, ...]:
    """The names read inside `scope` (its nested scopes included) that are not its own or a
    nested scope's locals: its free variables and the globals it reads. Each nested scope's
    answer is kept in `known`, so a function's body is walked once whatever encloses it.
    `yields` learns on the way whether a `yield` is anywhere inside the scope."""
    found = known.get(scope)
    if found is not None:
        return found
    names: dict[str, None] = {}
    own = scope.locals
    stack: list[Any] = list(scope.get_children())  # nodes; mypy cannot narrow through `kind`
    pop, push, category = stack.pop, stack.extend, _CATEGORIES
    yielded = False
    while stack:
        node = pop()
        kind = category.get(type(node))
        if kind is None:
            kind = _category(type(node))
        if kind is _READ:
            if node.name not in own:
                names[node.name] = None
        elif kind is _SCOPE:
            names.update((name, None) for name in _free_names(node, known, yields) if name not in own)
            yielded = yielded or yields.get(node, True)
        elif kind is _INNER:
            push(node.get_children())
        elif kind is _YIELD:
            yielded = True
            push(node.get_children())
    yields[scope] = yielded
    found = known[scope] = tuple(names)
    return found


# What `_free_names` does with a node, by its class: a name read, a nested scope, a node
# with children, or one without (no child fields, `NodeNG.get_children` not overridden).
_READ, _SCOPE, _INNER, _LEAF, _YIELD = "read", "scope", "inner", "leaf", "yield"
_CATEGORIES: dict[type, str] = {}
_CHILDLESS = (getattr(getattr(_base_nodes, "NoChildrenNode", None), "get_children", None),)  # astroid 3 and 4


def _category(kind: type) -> str:
    if issubclass(kind, nodes.Name):
        found = _READ
    elif issubclass(kind, nodes.Yield):  # `yield` and `yield from`
        found = _YIELD
    elif issubclass(kind, _SCOPES):
        found = _SCOPE
    elif getattr(kind, "get_children", None) in _CHILDLESS or (
            not getattr(kind, "_astroid_fields", None) and getattr(kind, "get_children", None) is nodes.NodeNG.get_children):
        found = _LEAF
    else:
        found = _INNER
    _CATEGORIES[kind] = found
    return found
