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

import functools
import itertools
import operator
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import astroid
from astroid import nodes
from astroid.nodes import _base_nodes

from .. import api
from ..project import BudgetExceeded, Cancelled, budget_clock
from ..values import UNKNOWN, Var
from . import objects as o
from .objects import TRUE, Guard, conjoin, guarded, split

if TYPE_CHECKING:
    from .kept_calls import CallKeeper
    from .resolver import Resolver
    from .world import World

MAX_DEPTH = 40  # nested calls
MAX_RECURSION = 8  # levels of a function calling itself (`_bounded_recursion`)
MAX_UNROLL = 32  # iterations of a Python loop over known values
MAX_NESTED_UNROLL = 8  # ... of the loops nested in an unrolled one, multiplied
_MISSING: Any = object()
ABSENT: Any = object()  # what a name a class or module did not have was (`shared_log`)
# What a class's attribute written under a name we cannot tell may have been (its methods stay)
_DATA = (int, float, str, bytes, tuple, list, dict, set, type(None), o.Instance)
WRITES_NAMES: Any = object()  # in `Interpreter.writes`: a `global` or `nonlocal` ran
WRITES_IMPORTED: Any = object()  # ... an import ran
_PRIMITIVE = o.PRIMITIVE


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
            (self.holder(name) or self).vars[name] = value
            return
        self.vars[name] = value

    def holder(self, name: str) -> Frame | None:
        """The enclosing frame that binds `name` (the one a `nonlocal` of it rebinds)."""
        frame = self.parent
        while frame is not None and name not in frame.vars:
            frame = frame.parent
        return frame


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
    # made while `try` bodies with `except` clauses ran (or `with` bodies whose manager may
    # swallow), innermost last: what each does with an error (`objects.Handler`)
    handled: tuple[o.Handler, ...] = ()
    built: o.Chain | None = None  # a kernel run where it is applied: the calls that led to where it was built
    # the "kernel" site of the run of a kernel body it was recorded in (one closure run over two
    # environments, or a loop's iterations, make runs whose calls are the same)
    run: Site | None = field(default=None, compare=False, repr=False)
    # a "kernel" site: applied where JAX only traces (`jax.make_jaxpr`, `jax.eval_shape`), so
    # that the run is never lowered
    traced_only: bool = field(default=False, compare=False, repr=False)


class EntryExhausted(Exception):
    """One entry point took more steps than any kernel needs (pure-Python code that branches
    and loops on values we do not know): what it recorded stands, the rest is not followed."""


class _Signal(Exception):
    """A path that ends: `return`, `raise`, `break`, `continue` (its args: the statement's
    kind; none when the outcomes of an `if` all ended, in different ways)."""


_RAISED = ("Raise",)  # the args of a `_Signal` that an exception raised (of a class not known)


class Suspended(BaseException):
    """A `@contextmanager` generator stopped at its `yield` (`Interpreter.suspend_next`): the
    `with` body runs now, what follows the `yield` when it is left. A `finally` it is in does
    not run (the frame is suspended, not left)."""


def may_answer(frame: Frame, name: str) -> bool:
    """May reading `name` from the module of this frame find something the module made: it
    binds the name, or a module `__getattr__` or a star import may answer it?"""
    names = frame.vars
    return name in names or "__getattr__" in names or o.STAR_IMPORTS in names


def _raise(error: str | bool) -> _Signal:
    """The `_Signal` of an exception raised: of this builtin class, or (True) of one not known."""
    return _Signal("Raise", error) if isinstance(error, str) else _Signal(*_RAISED)


def _ended_so(endings: set[tuple[Any, ...]]) -> tuple[Any, ...]:
    """How a statement whose outcomes all ended ends: as they all did; raising (of a class
    not known unless they all raised one) when they all raised; else none of the kinds."""
    if len(endings) == 1:
        return next(iter(endings))
    if all(map(_raises, endings)):
        return _RAISED
    return ()


def _raises(ending: tuple[Any, ...] | None) -> bool:
    """Did a path end by raising (a `_Signal`'s args)?"""
    return ending is not None and ending[:1] == _RAISED


def _error(ending: tuple[Any, ...]) -> str | bool:
    """The builtin class of the exception a raising path ended with; True: not known."""
    return ending[1] if len(ending) > 1 else True


@dataclass
class _Iteration:
    """What one run of an unrolled loop's body changed: the names as it began, the containers
    changed on any path, the names rebound on the paths that left it early (and their guards)."""

    start: dict[str, Any]
    containers: dict[int, Any] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    exits: list[Guard] = field(default_factory=list)
    attributes: dict[int, tuple[dict[str, Any], set[Any]]] = field(default_factory=dict)  # instances': names set

    def absorb(self, other: _Iteration) -> None:
        self.containers.update(other.containers)
        self.names.update(other.names)
        for key, (held, names) in other.attributes.items():
            self.attributes.setdefault(key, (held, set()))[1].update(names)


@dataclass
class _Attempt:
    """A body run where what it raises may be caught (a `try` with `except` clauses, a `with`
    whose manager may suppress): the state as it began, and how it ended."""

    before: dict[str, Any]  # the names
    saved: Guard
    returns: list[tuple[Guard, Any]]  # the running function's returns, from `mark` on the body's
    mark: int
    ending: tuple[Any, ...] | None = None  # the `_Signal` it ended with on every path
    log: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # the containers it changed
    partly: bool = False  # it raised on paths the trace dropped
    # ... all of them under one setting of a deployed input (`Interpreter.raises_when`): the
    # variable, its value where the body raises, and what it raises then
    because: tuple[Var, Any, str] | None = None


@dataclass(frozen=True)
class _Refusal:
    """What Python refuses a builtin's call with, on one alternative of its arguments."""

    error: str | bool | None


@dataclass
class _Call:
    returns: list[tuple[Guard, Any]] = field(default_factory=list)  # (guard, value)
    function: nodes.NodeNG | None = None  # the function running (what `super()` needs of it)
    # A generator function's (what it yielded so far is its frame's `_YIELDED`), and the loops
    # it started in (a `yield` in a loop it does not unroll yields we cannot count)
    generator: bool = False
    loop_depth: int = 0
    suspends: bool = False  # (a `@contextmanager` entered: it stops at its `yield`)


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
        self.tracing_only = 0  # inside `jax.make_jaxpr` or `jax.eval_shape` (`Site.traced_only`)
        self.kernel_sites: list[Site | None] = []  # ... the "kernel" site of each body run (`Site.run`)
        self.meshes: list[nodes.NodeNG] = []  # core_map bodies being run
        self.sites: list[Site] = []
        self.executed: set[nodes.NodeNG] = set()  # function nodes whose body ran
        self.known_calls: set[nodes.NodeNG] = set()  # ... at least once with every argument known
        self.closures: dict[nodes.NodeNG, list[o.Closure]] = {}
        self.escaped: list[Any] = []  # closures (`reuse.Replay`s too, while `Trace` replays kept runs)
        # `functools.partial`s of the analysed module's functions, as made (and its methods bound
        # to a receiver, as handed on: `escape`), and the ids of those called (`Trace._run_escaped`
        # runs the others the program still holds with what they bind); those handed to code we
        # do not read are held here: that code may keep them
        self.partials = o.MadePartials()
        self.partials_handed_on: list[o.Partial] = []
        self.classes_made: list[o.ClassObj] = []  # classes whose metaclass's `__new__` is running
        self.environment: dict[str, Any] = {}  # what the code wrote to `os.environ` (`stubs._environment_get`)
        self.partials_called: list[o.Partial] = []
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
        # when each answer was taken, in writes made so far (`write_epoch`): the same call on the
        # same objects reads what they hold, so a write since makes the answer one to take again
        self.memo_epochs: dict[tuple[Any, ...], int] = {}
        self.cache_answers: dict[tuple[Any, ...], tuple[Any, Any]] = {}  # (`run`, `functools.lru_cache`'s)
        self.write_epoch = 0
        # replays and records runs of imported modules' functions across traces (`kept_calls`)
        self.keeper: CallKeeper | None = None
        self._generators: dict[nodes.NodeNG, bool] = {}
        self._free: dict[nodes.NodeNG, tuple[str, ...]] = {}  # function -> the names it reads from outside
        self._yields: dict[nodes.NodeNG, bool] = {}  # function -> is a `yield` anywhere inside?
        self._local: dict[nodes.NodeNG, bool] = {}  # call node -> in the analysed module?
        # the analysed file's text and where its lines start (`_text_of`; None: not read yet)
        self._lines: tuple[bytes | None, list[int] | None] = (None, None)
        # `bind`'s parameter names of each function (its positional ones, keyword-only ones, both)
        self._signatures: dict[nodes.Arguments, tuple[list[str], list[str], list[str]]] = {}
        # `anchor`'s and `kernel_run`'s last answers, with what they were found from
        self._anchored: tuple[list[nodes.NodeNG] | None, nodes.NodeNG | None] = (None, None)
        self._kernel_run: tuple[list[nodes.NodeNG] | None, Any, Any, tuple[Any, ...] | None] = (None, None, None, None)
        self._opaque: dict[Any, Any] = {}  # `objects.opaque_var`'s answers for this analysis
        self._active: dict[nodes.NodeNG, int] = {}
        self._steps = 0
        # Did the function `run` last ran raise on every path? (`call` ends the caller's path
        # then: the code after a call that always raises never runs) True, or the builtin
        # class of what it raised when that is known (a `try` then runs the handler for it)
        self.raised: bool | str = False
        # The next function `run` runs is a `@contextmanager` a `with` enters: it stops at its
        # `yield` (`Suspended`), unmemoized
        self.suspend_next = False
        self.suspended_frame: Frame | None = None  # (where the `@contextmanager` run stopped)
        self.attempts = 0  # bodies running whose raises may be caught (`_attempt`)
        self.raise_conditions: list[tuple[Var, Any, str]] = []  # (`raises_when`)
        # Paths that raised while others went on (a test, assert or call we could not decide
        # dropped them), counted: a `try` whose body adds to it may end in a handler instead
        self.dropped_raises = 0
        # what the `try` bodies with `except` clauses running now do with an error (`Site.handled`)
        self.handling: list[o.Handler] = []
        # What JAX surely raises at the call a site recorded (`refusals.refused`, given by
        # `Trace`: the checks the rules report, which this module does not import)
        self.refused: Callable[[Site], str | None] | None = None
        # ... and paths that left a loop's body early, by kind (an undecided test whose one
        # outcome continues or breaks): the unrolled loop forgets what the others changed
        self.dropped_exits = {"Break": 0, "Continue": 0}
        self.iterations: list[_Iteration] = []  # the unrolled iterations running now
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
        # their code ran outside their top level, and none of their top levels was cut short).
        self.loose_writes: list[Any] = []
        self.construction_writes: list[Any] = []  # ... and those made inside such a top level
        self.names_declared = 0  # `global` and `nonlocal` statements run (a call that runs one is not memoized)
        self.world_clean = True
        # the modules whose state the analysed file's text makes (`read_names_of`), and the
        # reads of their names through their module objects by code outside any top level
        self.from_text: set[nodes.Module] = {root}
        self.text_reads = 0
        self.constructing = 0  # top levels of other modules running now
        self.top_levels: list[nodes.Module] = []  # the modules whose top levels run now, innermost last
        self.construction_sites = 0  # ... which recorded sites (none usually do)
        self.world: World | None = None  # other modules' top levels kept across traces (`world`)
        self.imports_run = 0  # import statements run outside any top level

    def replay_run(self, sites: list[Site], executed: set[nodes.NodeNG], known: set[nodes.NodeNG],
                   closures: list[o.Closure], partials: tuple[list[o.Partial], list[o.Partial]] = ([], [])) -> None:
        """What a kept run left, as making it would have (`reuse.Units`, `kept_calls`): its
        sites, the functions it ran (with every argument known, `known`), the closures it made,
        and the partials of the analysed module's functions it made and called."""
        self.partials.extend(partials[0])
        self.partials_called.extend(partials[1])
        self.sites.extend(sites)
        self.executed |= executed
        self.known_calls |= known
        for closure in closures:
            self.closures.setdefault(closure.node, []).append(closure)
        self.closure_log.extend(closures)

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

    def module(self, node: nodes.Module, read: bool = True) -> o.ModuleObj:
        """The module, its top level run once per trace (or taken as a kept run left it,
        `world`); `read=False`: only run (a package before its submodules), not read by the
        module whose top level runs now."""
        found = self.modules.get(node)
        world = self.world
        if found is not None:
            if world is not None and read:
                world.read(node, found)
            return found
        other = node is not self.root
        if world is not None and other:
            kept = world.take(self, node)  # as a kept run of its top level left it
            if kept is not None:
                return kept
        frame = Frame()
        frame.vars["__name__"] = node.name
        found = self.modules[node] = o.ModuleObj(node, frame) if other or world is None \
            else world.analysed_module(node, frame)
        if world is None or not other:
            self._top_level(node, frame, other)
            return found
        recording = world.begin(self, node)
        try:
            self._top_level(node, frame, other)
        except BaseException:
            world.abandon(self, recording)
            raise
        world.end(self, recording)
        return found

    def _top_level(self, node: nodes.Module, frame: Frame, other: bool) -> None:
        sites = len(self.sites)
        saved = self._enter_top_level(frame)
        self.constructing += other
        self.top_levels.append(node)
        try:
            self.block(node.body, frame)
        except _Signal as signal:
            if other and _raises(signal.args):  # its top level raised: so does every import of it
                self.failed_modules.add(node)
        except EntryExhausted:
            self.world_clean = False  # its state is what the budget let it make
            raise
        finally:
            self.constructing -= other
            self.top_levels.pop()
            self._leave_top_level(saved)
            if other and len(self.sites) != sites:
                self.construction_sites += 1

    # What a path carries that a module's top level does not see: Python runs it once, on its
    # own, wherever the first import of it is (in a branch, a loop, a function that may never
    # run). Its writes are not undone with the importer's branch, and so what it makes is the
    # same in every analysis (`reuse.EscapedRun` keeps runs on that state).
    def _enter_top_level(self, frame: Frame) -> dict[str, Any]:
        fresh = {"guard": TRUE, "stack": [], "calls": [], "kernels": [], "meshes": [], "frame": frame,
                 "loop_depth": 0, "branch_logs": [], "unrolled": 1, "iterations": [],
                 "dropped_exits": {"Break": 0, "Continue": 0}, "shared_log": None, "classes_made": []}
        saved = {name: getattr(self, name) for name in fresh}
        for name, value in fresh.items():
            setattr(self, name, value)
        return saved

    def _leave_top_level(self, saved: dict[str, Any]) -> None:
        for name, value in saved.items():
            setattr(self, name, value)

    def read_names_of(self, module: o.ModuleObj, name: str | None = None) -> None:
        """Code reads a module's names through its module object (`m.x`, `from m import x`,
        `vars(m)`; `name`: the one read, None: any of them). The analysed module's names are
        its text's, and so are those of a module whose top level read them (`from_text`):
        another top level that reads them joins those modules; a run that reads them is not
        kept (`text_reads`). A top level that reads a name the analysed module has not bound
        yet, in an import cycle with it (tokamax's attention op module reads its kernel
        module's `Config` before the kernel module defines it), reads its absence only: the
        world notes the name (`World.absent_read`), and the run is kept while it is absent."""
        if module.node not in self.from_text:
            return
        if self.constructing:
            if name is not None and module.node is self.root and self.world is not None \
                    and not may_answer(module.env, name):
                self.world.absent_read(name)
                return
            self.from_text.add(self.top_levels[-1])
        else:
            self.text_reads += 1

    def wrote(self, obj: Any) -> None:
        """A container, instance or namespace is about to change (see `writes`, `loose_writes`;
        what the top level of a module in `from_text` changes counts as a loose write: if it
        is another module's, that module's state is the text's too)."""
        self.write_epoch += 1
        if self.writes is not None:
            self.writes.append(obj)
        if self.constructing and self.top_levels[-1] not in self.from_text:
            self.construction_writes.append(obj)
        else:
            self.loose_writes.append(obj)

    def _names_written(self, node: nodes.Global | nodes.Nonlocal, frame: Frame) -> None:
        """`global` or `nonlocal`: the frames holding the names may be rebound. Other modules'
        code writing so to a frame their top levels made changes the world (`loose_writes`);
        a `nonlocal` of a call's own frame, made since, does not."""
        self.names_declared += 1
        if self.writes is not None:
            self.writes.append(WRITES_NAMES)
        if node.root() is self.root:
            return
        if isinstance(node, nodes.Global):
            self.wrote(frame.module_frame())
            return
        for name in node.names:
            holder = frame.holder(name)
            if holder is None:
                self.world_clean = False  # not bound yet: where it will be is not known
            else:
                self.wrote(holder)

    # -- statements ------------------------------------------------------------------------

    def block(self, statements: Iterable[nodes.NodeNG], frame: Frame) -> None:
        """Run statements; a `_Signal` leaves the block (the path ended)."""
        for statement in statements:
            self.statement(statement, frame)

    def statement(self, node: nodes.NodeNG, frame: Frame) -> None:  # noqa: C901 - one branch per kind
        self.tick()
        if isinstance(node, nodes.Expr):  # (the commonest kinds first)
            self.ev(node.value, frame)
        elif isinstance(node, nodes.Assign):
            value = self.ev(node.value, frame)
            if value is UNKNOWN:
                value = self._module_input(node.targets, node.value, frame)
            for target in node.targets:
                self.assign(target, value, frame)
        elif isinstance(node, nodes.Return):
            value = self.ev(node.value, frame) if node.value is not None else None
            if self.calls:
                self.calls[-1].returns.append((self.guard, self._ended(self.calls[-1], value, frame)))
            raise _Signal("Return")
        elif isinstance(node, nodes.AnnAssign):
            if node.value is not None:
                value = self.ev(node.value, frame)
                self.assign(node.target, self._module_input([node.target], node.value, frame) if value is UNKNOWN else value,
                            frame)
        elif isinstance(node, nodes.AugAssign):
            current = self.name(node.target.name, frame) if isinstance(node.target, nodes.AssignName) else UNKNOWN
            if isinstance(node.target, (nodes.AssignAttr, nodes.Subscript)):
                current = self._aug_current(node.target, frame)
            right = self.ev(node.value, frame)
            if type(current) in (dict, o.OrderedDict) and node.op == "|=" and type(right) in (dict, o.OrderedDict):
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
        elif isinstance(node, (nodes.FunctionDef, nodes.AsyncFunctionDef)):
            native = self.stubs.stub_function(node)
            frame.assign(_identifier(node, node.name), native if native is not None else self.define_function(
                node, frame, stub=hasattr(node.root(), "pallas_trace_stub")))
        elif isinstance(node, nodes.ClassDef):
            frame.assign(_identifier(node, node.name), self.define_class(node, frame))
        elif isinstance(node, (nodes.Import, nodes.ImportFrom)):
            self._importing()
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
            self.with_block(node, list(node.items), frame)
        elif isinstance(node, nodes.Try) and node.handlers and any(self.resolver.may_fail(s) for s in node.body):
            # `try: import <a library we do not read> except ImportError:`: either may run
            self._caught(node, frame)
            self.handling.append((self._catches(node, frame), False))  # (the handlers' sites too: the loop runs them with the body)
            try:
                self.opaque_loop(node, None, frame, bodies=[node.body + node.orelse, *(h.body for h in node.handlers)])
            finally:
                self.handling.pop()
            self.block(node.finalbody, frame)
        elif isinstance(node, nodes.Try):
            returns = self.calls[-1].returns if self.calls else []
            mark = len(returns)
            suspended = False
            try:
                if node.handlers:
                    self._try_handled(node, frame)
                else:
                    self.block(node.body, frame)
            except Suspended:
                suspended = True
                raise
            finally:
                if not suspended:
                    self._finally(node, frame, returns, mark)
        elif isinstance(node, nodes.Raise):
            raise _raise(self._raised_class(node, frame) or True)
        elif isinstance(node, (nodes.Break, nodes.Continue)):
            raise _Signal(type(node).__name__)
        elif isinstance(node, nodes.Global):
            frame.declared_global.update(node.names)
            self._names_written(node, frame)
        elif isinstance(node, nodes.Nonlocal):
            frame.declared_nonlocal.update(node.names)
            self._names_written(node, frame)
        elif isinstance(node, nodes.Delete):
            for target in node.targets:
                if isinstance(target, nodes.DelName):
                    frame.vars.pop(target.name, None)
                elif isinstance(target, nodes.DelAttr):
                    self.delete_attribute(self.ev(target.expr, frame), _attribute_name(target))
                elif isinstance(target, nodes.Subscript):
                    self.delete_item(self.ev(target.value, frame), self.ev(target.slice, frame))
        elif isinstance(node, nodes.Match):
            self.match_statement(node, frame)
        elif isinstance(node, nodes.Assert):
            self._asserted(node.test, frame)
        # pass, type aliases: nothing to follow

    def _importing(self) -> None:
        """An import runs: an entry point's unit that imports is not kept (`reuse.Units`)."""
        if self.writes is not None:
            self.writes.append(WRITES_IMPORTED)
        self.imports_run += not self.constructing

    def import_by_name(self, call: nodes.Call, modname: str) -> Any:
        """`importlib.import_module("pkg.mod")`: the module `import pkg.mod` would find from
        the calling file (the module itself, not its top-level package)."""
        self._importing()
        statement = nodes.Import(names=[(modname, None)], lineno=call.lineno, col_offset=call.col_offset,
                                 end_lineno=call.end_lineno, end_col_offset=call.end_col_offset, parent=call.parent)
        return self.resolver.module(self, statement, modname, modname.split(".")[0])

    def with_block(self, node: nodes.With, items: list[tuple[nodes.NodeNG, nodes.NodeNG | None]], frame: Frame) -> None:
        """`with a as x, b as y: body`: each manager entered in turn (`x` is what its
        `__enter__` gives), the body run, and the managers exited in reverse order, however
        the body ends (an exception's details are unknown to `__exit__`)."""
        if not items:
            self.block(node.body, frame)
            return
        (expression, bound_to), rest = items[0], items[1:]
        manager = self.ev(expression, frame)
        entered = self.enter(manager, expression)
        if bound_to is not None:
            self.assign(bound_to, entered, frame)
        suppresses = self.stubs.may_suppress(manager)
        try:
            if suppresses:
                self._suppressing(node, lambda: self.with_block(node, rest, frame), frame, manager)
            else:
                self.with_block(node, rest, frame)
        except _Signal as signal:
            self.stubs.exited(self, manager, expression, raised=_raises(signal.args))
            raise
        # (after a suppressing manager the body may have raised: `__exit__` is told it does not know)
        self.stubs.exited(self, manager, expression, raised=suppresses)

    def _suppressing(self, node: nodes.With, run: Callable[[], None], frame: Frame, manager: Any) -> None:
        """The body of a `with` whose manager may swallow what it raises: `try: body except:
        pass`, decided as a `try` is (`_try_handled`): a body that raised on every path ends
        there, and one that raised only on paths the trace dropped ends either way, so each
        name it rebound may or may not be after it. (A call JAX refuses raises where the
        manager swallows it: `refusals`.)"""
        swallowed = self.stubs.suppressed(manager)
        attempt = self._attempt(run, frame, (swallowed, False))
        ending = attempt.ending
        if _raises(ending) or not attempt.partly:
            self.pass_log(attempt.log)
            if ending is not None and _raises(ending) and o.catches(swallowed, _error(ending)) is False:
                raise _Signal(*ending)  # (`suppress(KeyError)` around `1 // 0`)
            if ending is not None and not _raises(ending):
                raise _Signal(*ending)  # (a `return` or `break` in the body)
            return
        self._body_or_handler(node, frame, attempt, orelse=lambda: None, handler=lambda: None)

    def enter(self, manager: Any, node: nodes.NodeNG) -> Any:
        """What entering `manager` gives, per alternative (run under its guard; an `__enter__`
        that raises on every path: the block never runs)."""
        return self.per_alternative(split(manager), lambda item: self.stubs.entered(self, item, node))

    def yielded(self, items: list[Any] | Any, frame: Frame) -> None:
        """`yield` (`yield from`) in the function running: what it yields is known while every
        `yield` runs in the loops the call started in (a loop run once for unknown items
        yields we cannot count). What it yielded so far is a name of its frame (a tuple),
        which branches join as any name's: `if tall: yield 96` yields per path."""
        call = self.calls[-1] if self.calls else None
        if call is None or not call.generator:
            return
        if items is UNKNOWN or self.loop_depth != call.loop_depth:
            frame.vars[_YIELDED] = UNKNOWN
            return
        extended = tuple(items)
        frame.vars[_YIELDED] = self.lift(lambda before: before + extended if isinstance(before, tuple) else UNKNOWN,
                                         frame.vars.get(_YIELDED, UNKNOWN))
        if call.suspends:
            self.suspended_frame = frame
            raise Suspended()

    def resume(self, suspended: tuple[nodes.FunctionDef, Frame, tuple[tuple[list[nodes.NodeNG], nodes.Try | None], ...]],
               raised: bool, guard: Guard) -> None:
        """A `with` leaves a `@contextmanager` generator stopped at its `yield`: its code after
        the `yield` runs in its frame (when the body raised, only the `finally` blocks around
        the `yield`, and what they raise is what the `with` raises). A `return` there ends it."""
        both = conjoin(self.guard, guard)
        if both is None:
            return
        function, frame, levels = suspended
        saved_guard, saved_frame, self.guard, self.frame = self.guard, self.frame, both, frame
        self.calls.append(_Call(function=function, generator=True, loop_depth=self.loop_depth))
        ending: tuple[Any, ...] | None = None
        try:
            for after, around in levels:
                if not raised and ending is None:
                    try:
                        self.block(after, frame)
                        if around is not None:
                            self.block(around.orelse, frame)
                    except _Signal as signal:
                        ending = signal.args
                if around is not None:
                    self.block(around.finalbody, frame)
        finally:
            self.calls.pop()
            self.guard, self.frame = saved_guard, saved_frame
        if ending is not None and _raises(ending):
            raise _Signal(*ending)

    @staticmethod
    def _ended(call: _Call, value: Any, frame: Frame) -> Any:
        """What a path that ends in a function gives its caller: the value it returns, or in a
        generator what it yielded until then (a tuple, per path; UNKNOWN when not known)."""
        return frame.vars.get(_YIELDED, UNKNOWN) if call.generator else value

    def _asserted(self, test: nodes.NodeNG, frame: Frame) -> None:
        """`assert test`: where the test is false, AssertionError ends the path (the path goes on
        under the guard that makes it true). A test we cannot decide tells nothing."""
        outcomes = self.truth(self.ev(test, frame))
        if any(truth is UNKNOWN for _, truth in outcomes):
            self.dropped_raises += 1  # it may fail
            return
        held = [guard for guard, truth in outcomes if truth]
        if not held:
            raise _raise("AssertionError")
        if len(held) < len(outcomes):
            self.dropped_raises += 1
        if len(held) == 1:
            self.guard = held[0]

    def _finally(self, node: nodes.Try, frame: Frame, returns: list[tuple[Guard, Any]], mark: int) -> None:
        """`finally:` runs however the `try` ended; where it ends on every path itself (`return`
        in `finally`), its ending wins: what the `try` returned (from `mark` on) is not."""
        if not node.finalbody:
            return
        middle = len(returns)
        try:
            self.block(node.finalbody, frame)
        except _Signal:
            del returns[mark:middle]
            raise

    def _try_handled(self, node: nodes.Try, frame: Frame) -> None:
        """`try` with `except` clauses. A body that raised on every path runs a handler; one
        that raised only on paths the trace dropped (`dropped_raises` grew: a call, test or
        assert it could not decide) ends either way, as the two outcomes of an undecided test:
        the body's own ending (and `else`), or a handler's."""
        attempt = self._attempt(lambda: self.block(node.body, frame), frame, catches=self._handles(node, frame))
        ending = attempt.ending
        if _raises(ending) or not attempt.partly:
            self.pass_log(attempt.log)
            if ending is not None and _raises(ending):
                self._handled(node, frame, _error(ending))
            elif ending is not None:
                raise _Signal(*ending)
            else:
                self.block(node.orelse, frame)
            return
        error = True if attempt.because is None else attempt.because[2]
        self._body_or_handler(node, frame, attempt, orelse=lambda: self.block(node.orelse, frame),
                              handler=lambda: self._handled(node, frame, error))

    def _attempt(self, run: Callable[[], None], frame: Frame, catches: o.Handler | None) -> _Attempt:
        """Run a body whose exceptions may be caught: its sites are handled (`Site.handled`) as
        `catches` says, unless every handler raises the error again (None: it still ends the
        program), and the raises it dropped are the catcher's, not the enclosing code's."""
        returns = self.calls[-1].returns if self.calls else []
        attempt = _Attempt(dict(frame.vars), self.guard, returns, len(returns))
        dropped, conditions = self.dropped_raises, len(self.raise_conditions)
        self.attempts += 1
        self.branch_logs.append({})
        if catches is not None:
            self.handling.append(catches)
        suspended = False
        try:
            run()
        except _Signal as signal:
            attempt.ending = signal.args
        except Suspended:
            suspended = True
            raise
        finally:
            self.attempts -= 1
            if catches is not None:
                self.handling.pop()
            attempt.log = self.branch_logs.pop()
            if suspended:  # (a `@contextmanager` at its `yield`: what it changed so far stands)
                self.pass_log(attempt.log)
        attempt.partly = self.dropped_raises != dropped
        found = set(self.raise_conditions[conditions:])
        del self.raise_conditions[conditions:]
        if len(found) == 1 and self.dropped_raises - dropped == 1:
            attempt.because = found.pop()
        self.dropped_raises = dropped
        return attempt

    def raises_when(self, var: Var, value: Any, error: str) -> None:
        """The code running raises `error` where the deployed input `var` is `value` (`os.environ[name]`
        where the variable is unset): the path ends there when the guard says so; else, in
        a `try`, the body ends either way, as that setting chooses."""
        chosen = dict(self.guard).get(var, _MISSING)
        if chosen is _MISSING:
            self.dropped_raises += 1
            if self.attempts:
                self.raise_conditions.append((var, value, error))
        elif chosen == value:
            self.raised = error

    def _body_or_handler(self, node: nodes.Try | nodes.With, frame: Frame, attempt: _Attempt,
                         orelse: Callable[[], None], handler: Callable[[], None]) -> None:
        """The body ran (ending so); under one outcome of an undecided variable it went on (to
        `orelse`), under the other the handler ran instead, from what the body may have rebound
        (unknown) and the containers as they were. Afterwards, as after an `if`."""
        before, saved, ending, log = attempt.before, attempt.saved, attempt.ending, attempt.log
        raised, raising = (o.raises_var(node, self._opaque), True) if attempt.because is None else attempt.because[:2]
        went_on = frozenset({(raised, not raising)})
        normal, caught = conjoin(self.guard, went_on), conjoin(saved, frozenset({(raised, raising)}))
        reached = dict(frame.vars)
        live: list[tuple[Guard, dict[str, Any]]] = []
        endings: set[tuple[Any, ...]] = set()
        changed = dict(log)
        ended: list[tuple[Guard, dict[int, Any]]] = []
        found, mark = attempt.returns, attempt.mark
        found[mark:] = [(both, value) for guard, value in found[mark:] if (both := conjoin(guard, went_on)) is not None]
        if ending is not None or normal is None:
            endings.add(ending or ())
            self._left_early(ending or (), frame)
        else:
            self.guard = normal
            if self._outcome(orelse, frame, changed, endings):
                live.append((normal, frame.vars))
                ended.append((normal, {key: changed[key][0].copy() for key in changed}))
        for container, old in changed.values():  # the handler starts from before
            _restore(container, old)
        if caught is not None:
            frame.vars = {name: value if reached.get(name, _MISSING) is value else UNKNOWN
                          for name, value in {**before, **reached}.items()}
            self.guard = caught
            if self._outcome(handler, frame, changed, endings):
                live.append((caught, frame.vars))
                ended.append((caught, {key: changed[key][0].copy() for key in changed}))
            for container, old in changed.values():
                _restore(container, old)
        self.guard = saved
        if any(map(_raises, endings)) and live:
            self.dropped_raises += 1  # `else` or a handler raised: the try does, on some paths
        self._rejoin(endings, live, changed, ended, before, frame)

    def _left_early(self, ending: tuple[Any, ...], frame: Frame) -> None:
        """A path that continues or breaks: the names it rebound in the running iteration."""
        if self.iterations and ending in (("Break",), ("Continue",)):
            iteration = self.iterations[-1]
            iteration.exits.append(self.guard)
            iteration.names.update(name for name, value in frame.vars.items()
                                   if iteration.start.get(name, _MISSING) is not value)

    def _rejoin(self, endings: set[tuple[Any, ...]], live: list[tuple[o.Guard, dict[str, Any]]],
                changed: dict[int, tuple[Any, Any]], ended: list[tuple[o.Guard, dict[int, Any]]],
                before: dict[str, Any], frame: Frame) -> None:
        """After the outcomes of a branch or a `try`: the paths that went on rejoin (their names
        and containers joined), or, when none did, the statement ends as they all did."""
        self._count_exits(endings, bool(live))
        if not live:
            frame.vars = before
            raise _Signal(*_ended_so(endings))
        split = self._join_containers(changed, ended)
        if len(live) == 1:
            self.guard, frame.vars = live[0]
            return
        frame.vars = _join(live, before)
        for name, value in frame.vars.items():  # each path's own list; other holders: unknown
            if id(value) in split and value is changed[id(value)][0]:
                frame.vars[name] = split[id(value)]
        if endings and all(_raises(ending) or ending == ("Return",) for ending in endings):
            _keep_live(frame.vars, [guard for guard, _ in live])

    def _count_exits(self, endings: set[tuple[Any, ...]], live: bool) -> None:
        """Outcomes that continued or broke out of a loop while others went on."""
        for kind in self.dropped_exits:
            if (kind,) in endings and live:
                self.dropped_exits[kind] += 1

    def _outcome(self, run: Callable[[], None], frame: Frame, changed: dict[int, tuple[Any, Any]],
                 endings: set[tuple[Any, ...]]) -> bool:
        """Run one outcome of a `try`, logging the containers it changes into `changed`; False
        when it ended (how: into `endings`)."""
        self.branch_logs.append({})
        try:
            run()
            return True
        except _Signal as signal:
            endings.add(signal.args)
            self._left_early(signal.args, frame)
            return False
        finally:
            for key, entry in self.branch_logs.pop().items():
                changed.setdefault(key, entry)

    def pass_log(self, log: dict[int, tuple[Any, Any]]) -> None:
        """Containers changed by code that ran on the path as it is: an enclosing branch
        restores them too."""
        if self.branch_logs:
            for key, entry in log.items():
                self.branch_logs[-1].setdefault(key, entry)

    def _handled(self, node: nodes.Try, frame: Frame, error: str | bool = True) -> None:
        """The `try` body raised `error` (a builtin class; True: not known): the first handler
        that catches it runs; none does: it goes on. Where that is not known (the error's class
        or a handler's), a handler runs: the only one, or one of several, which the way they
        end is not decided by."""
        self._caught(node, frame)
        chosen = self._handler_for(node, frame, error)
        if chosen is None:
            raise _raise(error)
        if chosen is not UNKNOWN:
            self.block(chosen.body, frame)
            return
        if len(node.handlers) == 1:
            self.block(node.handlers[0].body, frame)
            return
        self.opaque_loop(node, None, frame, bodies=[handler.body for handler in node.handlers])

    def _handler_for(self, node: nodes.Try, frame: Frame, error: str | bool) -> Any:
        """The first `except` clause catching `error`; None when none does; UNKNOWN when a
        clause before it may or may not."""
        for handler in node.handlers:
            if handler.type is None:
                return handler
            classes = self.stubs.exception_classes([handler.type], _binds(frame))
            hit = o.catches(classes, error)
            if hit is not False:
                return handler if hit is True else UNKNOWN
        return None

    def _handles(self, node: nodes.Try, frame: Frame) -> o.Handler | None:
        """What a `try` does with its body's errors (`objects.Handler`): None when every
        handler raises the error again (`raise`: it still ends the program); the builtin class
        they raise in its place (`raise RuntimeError(...) from error`: None, not known, when
        they raise other ones)."""
        catches = self._catches(node, frame)
        if not _reraises(node):
            return (catches, False)
        raised = {self._raised_class(found, frame) for handler in node.handlers
                  for found in handler.nodes_of_class(nodes.Raise, skip_klass=(nodes.FunctionDef, nodes.Lambda))}
        if raised == {""}:
            return None  # (bare `raise`s)
        return (catches, raised.pop() if len(raised) == 1 else None)

    def _raised_class(self, node: nodes.Raise, frame: Frame) -> str | None:
        """The builtin exception class a `raise` raises: "" for a bare `raise` (the one being
        handled), None when not a builtin's (or not known)."""
        if node.exc is None:
            return ""
        made = node.exc.func if isinstance(node.exc, nodes.Call) else node.exc
        found = None if isinstance(made, nodes.Tuple) else self.stubs.exception_classes([made], _binds(frame))
        return next(iter(found)) if found else None

    def _catches(self, node: nodes.Try, frame: Frame) -> frozenset[str] | None:
        """The builtin exception classes a `try`'s handlers catch (a bare `except:` catches
        them all); None when one names anything else."""
        if any(handler.type is None for handler in node.handlers):
            return frozenset({"BaseException"})
        return self.stubs.exception_classes([handler.type for handler in node.handlers if handler.type is not None],
                                            _binds(frame))

    def _caught(self, node: nodes.Try, frame: Frame) -> None:
        """`except ... as error`: the exception, whichever it is, is not known."""
        for handler in node.handlers:
            if handler.name is not None:
                self.assign(handler.name, UNKNOWN, frame)

    def _aug_current(self, target: nodes.AssignAttr | nodes.Subscript, frame: Frame) -> Any:
        if isinstance(target, nodes.AssignAttr):
            return self.attribute(self.ev(target.expr, frame), _attribute_name(target))
        return self.item(self.ev(target.value, frame), self.ev(target.slice, frame), target)

    def branch(self, test: nodes.NodeNG, body: list[nodes.NodeNG], orelse: list[nodes.NodeNG], frame: Frame) -> None:
        """`if`: each outcome of the test runs its branch under its guard; afterwards each
        variable is the guarded join of what the live branches left."""
        self.branches([(guard, functools.partial(self.block, body if taken else orelse, frame))
                       for guard, taken in self.truth_of(test, frame)], frame)

    def branches(self, outcomes: list[tuple[Guard, Callable[[], None]]], frame: Frame) -> None:
        """Run each outcome's code under its guard (an `if`'s two branches, a `match`'s cases);
        afterwards each variable and container is the guarded join of what the live ones left."""
        if len(outcomes) == 1:
            guard, run = outcomes[0]
            saved = self.guard
            self.guard = guard
            try:
                run()
            finally:
                self.guard = saved
            return
        before = dict(frame.vars)
        saved = self.guard
        live: list[tuple[Guard, dict[str, Any]]] = []
        changed: dict[int, tuple[Any, Any]] = {}  # containers the outcomes changed, with their state before
        ended: list[tuple[Guard, dict[int, Any]]] = []  # per live outcome: those containers' contents after
        endings: set[tuple[Any, ...]] = set()  # how the outcomes that ended did
        for guard, run in outcomes:
            frame.vars = dict(before)
            self.guard = guard
            self.branch_logs.append({})
            alive = False
            try:
                run()
                live.append((guard, frame.vars))
                alive = True
            except _Signal as signal:
                endings.add(signal.args)
                self._left_early(signal.args, frame)
            finally:
                log = self.branch_logs.pop()
            for key, (container, old) in log.items():
                changed.setdefault(key, (container, old))
            if alive:
                ended.append((guard, {key: changed[key][0].copy() for key in changed}))
            for container, old in changed.values():  # the next outcome starts from before
                _restore(container, old)
        self.guard = saved
        if any(map(_raises, endings)) and (live or len({ending[:1] for ending in endings}) > 1):
            self.dropped_raises += 1
        self._rejoin(endings, live, changed, ended, before, frame)

    def match_statement(self, node: nodes.Match, frame: Frame) -> None:
        """`match`: on each alternative of the subject the cases are tried in order; the first
        whose pattern (and `if`) holds runs, with its captures bound. A test we cannot decide
        is a free variable of its own, as an `if`'s is: the cases it separates run as
        alternatives, joined afterwards."""
        pending: list[tuple[Guard, Any]] = [(both, subject) for guard, subject in split(self.ev(node.subject, frame))
                                            if (both := conjoin(self.guard, guard)) is not None]
        chosen: list[tuple[Guard, Callable[[], None]]] = []
        for case in node.cases:
            still: list[tuple[Guard, Any]] = []
            for guard, subject in pending:
                for outcome, matched, captures in self._case_outcomes(case, subject, guard, frame):
                    if matched:
                        chosen.append((outcome, functools.partial(self._run_case, case, captures, frame)))
                    else:
                        still.append((outcome, subject))
            pending = still
            if len(chosen) + len(pending) > o.MAX_ALTERNATIVES:
                self.opaque_loop(node, None, frame, bodies=[case.body for case in node.cases])
                return
        outcomes = chosen + [(guard, lambda: None) for guard, _ in pending]
        if outcomes:  # (none: no alternative of the subject holds on this path)
            self.branches(outcomes, frame)

    def _run_case(self, case: nodes.MatchCase, captures: dict[str, Any], frame: Frame) -> None:
        for name, value in captures.items():
            frame.assign(name, value)
        self.block(case.body, frame)

    def _case_outcomes(self, case: nodes.MatchCase, subject: Any, guard: Guard, frame: Frame
                       ) -> list[tuple[Guard, bool, dict[str, Any]]]:
        """Whether a case is taken, as (guard, taken, captures): its pattern, then its `if`
        (read with the captures bound; what a walrus there binds is bound in the case too)."""
        outcomes = self._pattern(case.pattern, subject, guard, frame)
        if case.guard is None:
            return outcomes
        found: list[tuple[Guard, bool, dict[str, Any]]] = []
        for outcome, matched, captures in outcomes:
            if not matched:
                found.append((outcome, matched, captures))
                continue
            inner = Frame(frame)
            inner.vars.update(captures)
            saved = self.guard
            self.guard = outcome
            try:
                test = self.ev(case.guard, inner)
            finally:
                self.guard = saved
            bound = dict(inner.vars)  # (the captures, and what a walrus in the `if` bound)
            found.extend((both, taken, bound) for both, taken in self.decided(test, case.guard, outcome))
        return found

    def _pattern(self, pattern: nodes.NodeNG, subject: Any, guard: Guard, frame: Frame
                 ) -> list[tuple[Guard, bool, dict[str, Any]]]:
        """Does `subject` match `pattern`: (guard, matched, captures) per outcome."""
        if isinstance(pattern, str):  # `*rest` of a sequence pattern: captures what is left
            return [(guard, True, {pattern: subject})]
        if type(subject) is o.Guarded:
            return [found for inner, item in subject.alternatives if (both := conjoin(guard, inner)) is not None
                    for found in self._pattern(pattern, item, both, frame)]
        if isinstance(pattern, nodes.MatchAs):
            found: list[tuple[Guard, bool, dict[str, Any]]] = [(guard, True, {})] if pattern.pattern is None \
                else self._pattern(pattern.pattern, subject, guard, frame)
            if pattern.name is None:
                return found
            return [(outcome, matched, {**captures, pattern.name.name: subject} if matched else captures)
                    for outcome, matched, captures in found]
        if isinstance(pattern, nodes.MatchOr):
            return self._either(pattern.patterns, subject, guard, frame)
        if isinstance(pattern, (nodes.MatchValue, nodes.MatchSingleton)):
            value = self.ev(pattern.value, frame) if isinstance(pattern, nodes.MatchValue) else pattern.value
            test = self._identity("==" if isinstance(pattern, nodes.MatchValue) else "is", subject, value)
            return [(outcome, matched, {}) for outcome, matched in self.decided(test, pattern, guard,
                                                                                self._pattern_var(pattern))]
        parts = self._pattern_parts(pattern, subject, frame)
        if parts is None:  # not decided here
            return [(outcome, matched, {}) for outcome, matched in self.decided(UNKNOWN, pattern, guard,
                                                                                self._pattern_var(pattern))]
        if not isinstance(parts, list):  # it cannot match
            return [(guard, False, {})]
        return self._all_of(parts, guard, frame)

    def _either(self, alternatives: Sequence[nodes.NodeNG], subject: Any, guard: Guard, frame: Frame
                ) -> list[tuple[Guard, bool, dict[str, Any]]]:
        """`p | q`: each alternative tried where the ones before it did not match."""
        found: list[tuple[Guard, bool, dict[str, Any]]] = []
        pending = [guard]
        for alternative in alternatives:
            still = []
            for outcome in pending:
                for inner, matched, captures in self._pattern(alternative, subject, outcome, frame):
                    if matched:
                        found.append((inner, True, captures))
                    else:
                        still.append(inner)
            pending = still
        return found + [(outcome, False, {}) for outcome in pending]

    def _all_of(self, parts: list[tuple[Any, Any]], guard: Guard, frame: Frame
                ) -> list[tuple[Guard, bool, dict[str, Any]]]:
        """Every (pattern, value) of `parts` matches, in order (the first that does not ends it)."""
        found: list[tuple[Guard, bool, dict[str, Any]]] = [(guard, True, {})]
        for part, item in parts:
            extended: list[tuple[Guard, bool, dict[str, Any]]] = []
            for outcome, matched, captures in found:
                if not matched:
                    extended.append((outcome, False, captures))
                    continue
                for inner, part_matched, more in self._pattern(part, item, outcome, frame):
                    extended.append((inner, part_matched, {**captures, **more}))
            found = extended
        return found

    def _pattern_var(self, pattern: nodes.NodeNG) -> Var:
        """Whether a pattern we cannot decide matches: a variable of its own, named after its
        case (`platform matches "gpu"`)."""
        key = ("match", pattern)
        found = self._opaque.get(key)
        if found is None:
            case = pattern
            while not isinstance(case.parent, (nodes.MatchCase, nodes.Match)) and case.parent is not None:
                case = case.parent
            match = case.parent.parent if isinstance(case.parent, nodes.MatchCase) else None
            subject = match.subject.as_string() if isinstance(match, nodes.Match) else "the subject"
            found = self._opaque[key] = Var(("cond", pattern), o.BOOL, f"{subject} matches {case.as_string()}")
        return found

    def _pattern_parts(self, pattern: nodes.NodeNG, subject: Any, frame: Frame) -> list[tuple[Any, Any]] | bool | None:
        """A sequence or class pattern on `subject`: the (pattern, value) pairs that must all
        match too (a name for a `*rest`), False when it cannot match, None when we cannot tell."""
        if isinstance(pattern, nodes.MatchSequence):
            if isinstance(subject, (str, bytes, dict, bool, int, float, type(None))):
                return False
            items = self.iterate(subject) if isinstance(subject, (tuple, list)) else UNKNOWN
            if items is UNKNOWN:
                return None
            star = next((i for i, p in enumerate(pattern.patterns) if isinstance(p, nodes.MatchStar)), None)
            if star is None:
                return list(zip(pattern.patterns, items)) if len(items) == len(pattern.patterns) else False
            after = len(pattern.patterns) - star - 1
            if len(items) < star + after:
                return False
            starred = pattern.patterns[star]
            assert isinstance(starred, nodes.MatchStar)
            return [*zip(pattern.patterns[:star], items[:star]),
                    *zip(pattern.patterns[star + 1:], items[len(items) - after:]),
                    *([(starred.name.name, list(items[star:len(items) - after]))] if starred.name else [])]
        if isinstance(pattern, nodes.MatchClass):
            parts: list[tuple[Any, Any]] | bool | None = self.stubs.class_pattern(
                self, self.ev(pattern.cls, frame), pattern, subject)
            return parts
        if isinstance(pattern, nodes.MatchMapping):
            return self._mapping_parts(pattern, subject, frame)
        return None

    def _mapping_parts(self, pattern: nodes.MatchMapping, subject: Any, frame: Frame
                       ) -> list[tuple[Any, Any]] | bool | None:
        """`case {"rows": r, **rest}`: a dict we know all of matches when it has every key;
        its values go to the sub-patterns, the other items to `rest`."""
        if not isinstance(subject, dict):
            return False if isinstance(subject, (str, bytes, tuple, list, bool, int, float, type(None))) else None
        keys = [self.ev(key, frame) for key in pattern.keys]
        if id(subject) in self.poisoned or not all(isinstance(key, _PRIMITIVE) for key in keys):
            return None
        if any(key not in subject for key in keys):
            return False
        parts: list[tuple[Any, Any]] = list(zip(pattern.patterns, (subject[key] for key in keys)))
        if pattern.rest is not None:
            parts.append((pattern.rest.name, {key: value for key, value in subject.items() if key not in keys}))
        return parts

    def _join_containers(self, changed: dict[int, tuple[Any, Any]], ended: list[tuple[Guard, dict[int, Any]]]
                         ) -> dict[int, Any]:
        """Each changed list or dict gets what the live outcomes left in it: the same, or one
        item per outcome under its guard. A list the outcomes left with different lengths
        (`if aux: scratch.append(x)`) is unknown; what is returned by its id is one copy per
        outcome under its guard, for the names that hold it (`_rejoin`)."""
        split: dict[int, Any] = {}
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
                if type(container) is list:
                    split[key] = guarded((guard, list(state)) for guard, state in versions)
        return split

    def truth_of(self, test: nodes.NodeNG, frame: Frame) -> list[tuple[Guard, bool]]:
        """The outcomes of a condition as (guard, taken), under the current path guard; an
        undecidable one is a free variable of its own."""
        return self.decided(self.ev(test, frame), test, self.guard)

    def decided(self, value: Any, test: nodes.NodeNG, under: Guard, var: Var | None = None) -> list[tuple[Guard, bool]]:
        """`value`'s truth as (guard, taken) under `under`; where it cannot be told, a free
        variable of the test's own (`var`, else one for the test's node)."""
        outcomes = []
        for guard, truth in self.truth(value, under):
            if truth is UNKNOWN:
                var = var or o.opaque_var(test, self._opaque, lasting=test.root() is not self.root)
                for outcome in o.BOOL:
                    both = conjoin(guard, frozenset({(var, outcome)}))
                    if both is not None:
                        outcomes.append((both, outcome))
            else:
                outcomes.append((guard, truth))
        return outcomes or [(under, True)]

    def for_loop(self, node: nodes.For, frame: Frame) -> None:
        """A loop over known items is unrolled: up to MAX_UNROLL iterations, and nested loops
        up to MAX_NESTED_UNROLL in all (a sweep over autotuning configs tells us nothing more
        per config, and each config runs the helpers it calls again). A loop over what
        differs by path (`range(stages - 1)` with `stages` at its default or not) runs once
        per path, as the outcomes of an `if` do."""
        iterable = self.ev(node.iter, frame)
        if type(iterable) is o.Guarded:
            ways = [(both, item) for guard, item in split(iterable) if (both := conjoin(self.guard, guard)) is not None]
            self.branches([(guard, functools.partial(self._loop_over, node, item, frame)) for guard, item in ways], frame)
            return
        self.per_path(node, frame, functools.partial(self._loop_over, node, iterable, frame))

    def per_path(self, node: nodes.For | nodes.While, frame: Frame, run: Callable[[], None], depth: int = 0) -> None:
        """Run a searching loop (one that can `break`, or a `while`) once per alternative of the
        names it reads that differ by path (a parameter at its default or a caller's: `for
        preset in PRESETS: if preset["name"] == name: break`), each bound to its alternative:
        where it stops then is decided on each path, as an `if` on that name would be, and what
        it bound is not forgotten."""
        found = _path_dependent_name(node, frame) if depth < MAX_SPLIT_NAMES else None
        if found is None:
            run()
            return
        name, holder = found  # (the running frame, or an enclosing one: a kernel body reads its builder's)
        original = holder.vars[name]
        ways = [(both, value) for guard, value in split(original) if (both := conjoin(self.guard, guard)) is not None]

        def bound(value: Any) -> None:
            holder.vars[name] = value
            self.per_path(node, frame, run, depth + 1)

        try:
            self.branches([(guard, functools.partial(bound, value)) for guard, value in ways], frame)
        finally:
            if holder is not frame:  # (the running frame's names are joined by `branches`)
                holder.vars[name] = original

    def _loop_over(self, node: nodes.For, iterable: Any, frame: Frame) -> None:
        lazy = isinstance(iterable, o.Generator)  # an iterator: each item is taken when the loop gets to it
        items = self.iterate(iterable) if not lazy else (
            UNKNOWN if id(iterable.items) in self.poisoned else list(iterable.items))
        if items is UNKNOWN or self.unrolled * max(len(items), 1) > (
                MAX_NESTED_UNROLL if self.unrolled > 1 else MAX_UNROLL):
            if lazy:
                self.poisoned.add(id(iterable.items))  # what the loop leaves in it is not known
            self.opaque_loop(node, node.target, frame)
            return
        self.unrolled *= max(len(items), 1)
        broke: list[_Iteration] = []
        try:
            for item in self.taken_one_by_one(iterable) if lazy else items:
                self.assign(node.target, item, frame)
                if not self._iteration(node.body, frame, broke):
                    return
            self._forget(broke, frame)
            self.block(node.orelse, frame)
        finally:
            self.unrolled //= max(len(items), 1)

    def taken_one_by_one(self, iterator: o.Generator) -> Iterable[Any]:
        """An iterator's items as a loop takes them (its body may take some too: `next(it)`)."""
        while iterator.items and id(iterator.items) not in self.poisoned:
            self.changing(iterator.items)
            yield iterator.items.pop(0)

    def _iteration(self, body: list[nodes.NodeNG], frame: Frame, broke: list[_Iteration]) -> bool:
        """One run of a loop's body; False when it breaks out of the loop. Where an outcome
        of a test we could not decide continued (or broke), the paths that did hold other
        values: what this iteration changed is unknown after it (and, after a `break`, what
        the loop changed from this iteration on, once it ends: `broke`)."""
        exits = dict(self.dropped_exits)
        iteration = _Iteration(dict(frame.vars))
        self.iterations.append(iteration)
        try:
            ran = self._run_body(body, frame)
        finally:
            self.iterations.pop()
            if self.iterations:
                self.iterations[-1].absorb(iteration)
        for since in broke:
            since.absorb(iteration)
        if self.dropped_exits["Break"] != exits["Break"] and not broke:
            broke.append(_Iteration(iteration.start, dict(iteration.containers), set(iteration.names)))
        if self.dropped_exits != exits:
            self._forget([iteration], frame)
            self.guard = self.guard.intersection(*iteration.exits)  # the paths that left rejoin here
            self.dropped_exits = exits  # (this loop's: an enclosing one's iteration went on)
        if not ran:
            self._forget(broke, frame)
        return ran

    def _run_body(self, body: list[nodes.NodeNG], frame: Frame) -> bool:
        try:
            self.block(body, frame)
        except _Signal as signal:
            if signal.args == ("Break",):
                return False
            if signal.args != ("Continue",):
                raise
        return True

    def _forget(self, since: list[_Iteration], frame: Frame) -> None:
        """The names rebound and the containers changed since `since[0]` began are unknown."""
        for iteration in since[:1]:
            for name, value in list(frame.vars.items()):
                if name in iteration.names or iteration.start.get(name, _MISSING) is not value:
                    frame.vars[name] = UNKNOWN
            self.poisoned.update(iteration.containers)
            for held, names in iteration.attributes.values():
                for name in held if _MISSING in names else names:
                    held[name] = UNKNOWN

    def while_loop(self, node: nodes.While, frame: Frame) -> None:
        """A `while` whose test is decided before every iteration (a counter, a worklist of
        known items) runs as Python runs it, up to MAX_UNROLL iterations; from the first test
        it cannot decide on, the rest of it is an `opaque_loop` (`per_path` first)."""
        self.per_path(node, frame, functools.partial(self._while_over, node, frame))

    def _while_over(self, node: nodes.While, frame: Frame) -> None:
        broke: list[_Iteration] = []
        for _ in range(MAX_UNROLL + 1):
            outcomes = self.truth_of(node.test, frame)
            if len(outcomes) != 1 or outcomes[0][0] != self.guard:
                break
            if not outcomes[0][1]:
                self._forget(broke, frame)
                self.block(node.orelse, frame)
                return
            if not self._iteration(node.body, frame, broke):
                return
        self._forget(broke, frame)
        self.opaque_loop(node, None, frame)

    def opaque_loop(self, node: nodes.For | nodes.While | nodes.Match | nodes.Try, target: nodes.NodeNG | None,
                    frame: Frame, bodies: list[list[nodes.NodeNG]] | None = None) -> None:
        """A loop we cannot unroll: its body runs once on unknown items, to see the calls in
        it; whatever it rebinds or grows is unknown afterwards. (`bodies`: a match's cases or
        a try's handlers, one of which runs.)"""
        before, exits = dict(frame.vars), dict(self.dropped_exits)
        self.loop_depth += 1
        try:
            for body in bodies if bodies is not None else [node.body]:  # type: ignore[union-attr]  # a Match gives bodies
                if target is not None:
                    self.assign(target, UNKNOWN, frame)
                try:
                    self.block(body, frame)
                except _Signal as signal:
                    if _raises(signal.args):
                        self.dropped_raises += 1  # on some run of it
                    elif bodies is not None and signal.args in (("Break",), ("Continue",)):
                        self.dropped_exits[signal.args[0]] += 1  # one case or handler left the loop's body
        finally:
            self.loop_depth -= 1
            if bodies is None:
                self.dropped_exits = exits  # its own `break`s and `continue`s: what it changed is unknown anyway
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
            name = target.name
            frame.assign(_identifier(target, name) if name[:2] == "__" else name, value)
        elif isinstance(target, (nodes.Tuple, nodes.List)):
            self.unpack(target.elts, value, frame)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
        elif isinstance(target, nodes.AssignAttr):
            owner = self.ev(target.expr, frame)
            if owner is UNKNOWN and isinstance(target.expr, nodes.Subscript) and _pure_read(target.expr.value):
                # `cfgs[jax.process_index()].collective = True`: any item may be the one written
                for item in _items_of(self.ev(target.expr.value, frame)):
                    self.set_attribute(item, _attribute_name(target), UNKNOWN)
            self.set_attribute(owner, _attribute_name(target), value)
        elif isinstance(target, nodes.Subscript):
            self.set_item(self.ev(target.value, frame), self.ev(target.slice, frame), value)
        elif isinstance(target, nodes.Starred):
            self.assign(target.value, value, frame)

    def set_item(self, container: Any, key: Any, value: Any) -> None:
        """`container[key] = value` (`operator.setitem`)."""
        if isinstance(container, o.Library) and container.qname == o.ENVIRONMENT and isinstance(key, str):
            self.changing(self.environment)  # `os.environ["NAME"] = "128"`: what later reads give
            self.environment[key] = value
        elif isinstance(container, o.DictOf):  # `obj.__dict__["name"] = value`: no setter runs
            self.set_attribute(container.owner, key, value, plain=True)
        elif isinstance(container, dict) and o.dict_key(key):
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
        elif type(container) in (list, dict):  # a key or index we cannot tell: any item may be it
            self.changing(container)
            self.poisoned.add(id(container))
        elif type(container) in (tuple, str, int, float, bool, type(None)):
            raise _raise("TypeError")  # (`(0,)[0] = 1`: no item assignment)

    def set_attribute(self, target: Any, name: Any, value: Any, plain: bool = False, hooked: bool = True) -> None:
        """`target.<name> = value`, however it is spelled (`setattr`; `object.__setattr__`, past the
        class's own `__setattr__`, which `hooked` is not; `vars(target)[name] = value`, which `plain`
        is: past a property or descriptor too): a name we do not know may have been any attribute."""
        for guard, obj in split(target):
            hook = self.stubs.setattr_hook(obj) if type(obj) is o.Instance and hooked and not plain else None
            if hook is not None:
                both = o.conjoin(self.guard, guard)
                if both is not None:
                    outer, self.guard = self.guard, both
                    try:
                        self.invoke(o.Bound(hook, obj), [name, value], {}, hook.node)
                    finally:
                        self.guard = outer
                continue
            setter = self.stubs.property_setter(obj, name) if isinstance(obj, o.Instance) and isinstance(
                name, str) and not plain else None
            if setter is self.stubs.READ_ONLY:
                if guard == TRUE:
                    raise _raise("AttributeError")  # (a property without a setter)
                continue
            if isinstance(setter, (o.Closure, o.Bound)):  # (run on this path alone)
                both = o.conjoin(self.guard, guard)
                if both is None:
                    continue
                outer, self.guard = self.guard, both
                try:
                    self.invoke(setter, [obj, value], {}, (setter.func if isinstance(setter, o.Bound) else setter).node)
                finally:
                    self.guard = outer
                continue
            held = self._attributes_to_change(obj, name)
            if held is None:
                continue
            if not isinstance(name, str):
                if isinstance(obj, o.Namespace):
                    obj.closed = False  # (any name may be there now)
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
        if isinstance(obj, (o.Namespace, o.Instance)):
            self._attributes_changing(held, name)
        if self.shared_log is not None and isinstance(obj, (o.ClassObj, o.ModuleObj)):
            names = [name] if isinstance(name, str) else list(held)
            self.shared_log.extend((held, known, held.get(known, ABSENT)) for known in names)
        return held

    def _attributes_changing(self, held: dict[str, Any], name: Any) -> None:
        """An instance's attributes, about to change (`name`; any, when not a string): inside a
        branch they are as they were for the next outcome, and joined after it, as a dict is;
        an unrolled iteration keeps which names changed, to forget them (`_forget`)."""
        if self.branch_logs and id(held) not in self.branch_logs[-1]:
            self.branch_logs[-1][id(held)] = (held, held.copy())
        if self.iterations:
            self.iterations[-1].attributes.setdefault(id(held), (held, set()))[1].add(
                name if isinstance(name, str) else _MISSING)

    def delete_item(self, container: Any, key: Any) -> None:
        """`del container[key]`: the item (or slice) gone, or the container's contents unknown.
        A list that differs by path (each path's own copy, `_join_containers`) loses it on
        each path."""
        if type(container) is o.Guarded:
            for _, item in split(container):
                if type(key) is o.Guarded:
                    self.poisoned.add(id(item))
                else:
                    self.delete_item(item, key)
            return
        if isinstance(container, dict):
            self.changing(container)
            if o.dict_key(key) and key in container:
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
        if isinstance(value, o.Instance) and self.stubs.tuple_items(value) is None:
            iterator = self.stubs.iterator_of(self, value)  # (None: no `__iter__`, `__getitem__` is asked)
            value = value if iterator is None else iterator
        if isinstance(value, o.Generator):  # an iterator taken apart
            items = self.iterate(value)
            value = tuple(items) if items is not UNKNOWN and (star is not None or len(items) == len(targets)) \
                else UNKNOWN
        if isinstance(value, o.TailTuple):
            self.unpack_tail(targets, star, value.suffix, frame)
            return
        if star is None:
            if type(value) in (tuple, list) and len(value) != len(targets) and id(value) not in self.poisoned \
                    and all(isinstance(item, _PRIMITIVE) for item in value):
                raise _raise("ValueError")  # (too many or not enough values to unpack, of plain values)
            for index, target in enumerate(targets):
                self.assign(target, self.item(value, index), frame)
            return
        # a sequence of a length that depends on the path (`*optional` of a scratch list grown
        # under a flag): each target takes, per path, what that path's items give it
        ways = [(guard, _starred(self.iterate(item), star, len(targets))) for guard, item in split(value)]
        for index, target in enumerate(targets):
            self.assign(target, guarded((guard, UNKNOWN if parts is None else parts[index]) for guard, parts in ways),
                        frame)

    def unpack_tail(self, targets: list[nodes.NodeNG], star: int | None, suffix: tuple[Any, ...], frame: Frame) -> None:
        """Unpack operands-then-scratch: the targets at the end take the scratch refs (those
        before them, as many as there are, the operands). A starred target before them takes
        the rest: the operands left, then the scratch refs the targets after it do not take
        (`a_gmem, out_gmem, *scratch = refs`: all the scratch refs)."""
        after = len(targets) - (star + 1 if star is not None else 0)
        if star is None and len(targets) < len(suffix):
            after = 0  # too many values to unpack: Python raises
        ends = list(suffix[max(len(suffix) - after, 0):]) if after else []
        for index, target in enumerate(targets):
            position = index - (len(targets) - len(ends))
            if index == star and len(suffix) >= after:
                self.assign(target, o.TailTuple(suffix[:len(suffix) - after]), frame)
            else:
                self.assign(target, ends[position] if position >= 0 else UNKNOWN, frame)

    def changing(self, container: Any) -> None:
        """A list or dict is about to change: inside a loop we run only once its contents end
        unknown; inside a branch its contents before are kept, to run the other outcome from."""
        self.wrote(container)
        if self.loop_depth:
            self.mutated.add(id(container))
        if self.iterations:
            self.iterations[-1].containers[id(container)] = container
        if self.branch_logs:
            log = self.branch_logs[-1]
            if id(container) not in log:
                log[id(container)] = (container, container.copy())

    # -- definitions -----------------------------------------------------------------------

    def define_function(self, node: nodes.FunctionDef | nodes.Lambda, frame: Frame, stub: bool = False,
                        scope: Frame | None = None) -> Any:
        """A `def` or `lambda` in `frame`; its defaults and decorators are evaluated in `scope`
        (a class body's, for a method: `@value.setter` reads the property just defined there)."""
        scope = frame if scope is None else scope
        defaults = self._defaults(node.args, scope)
        closure = o.Closure(node, _outside_class(node, frame) if isinstance(node, nodes.Lambda) else frame, stub)
        object.__setattr__(closure, "defaults", defaults)
        if not stub:
            self.closures.setdefault(node, []).append(closure)
            self.closure_log.append(closure)
        value: Any = closure
        decorators = node.decorators.nodes if isinstance(node, nodes.FunctionDef) and node.decorators else []
        for decorator in reversed(decorators):
            wrapper = self.ev(decorator, scope)
            if isinstance(wrapper, o.Parameters):  # the test method runs once per case
                object.__setattr__(closure, "parameters", getattr(closure, "parameters", ()) + (wrapper,))
                continue
            if isinstance(wrapper, o.Library) and wrapper.qname in _ABSTRACT:
                object.__setattr__(closure, "abstract", True)  # a subclass's override is what runs
                continue
            if _is_unknown_callable(wrapper):
                self.escape(value)
                object.__setattr__(closure, "wrapped", True)  # (what a call of it binds is the wrapper's)
                if isinstance(wrapper, o.Library) and wrapper.qname.removesuffix("()") in self.stubs.CACHING:
                    object.__setattr__(closure, "cached", True)
                continue  # an unknown decorator (jit, parameterized, ...): calls still run the body
            if isinstance(wrapper, o.Native) and wrapper.qname in self.stubs.METHOD_DECORATORS:
                value = self.stubs.METHOD_DECORATORS[wrapper.qname](value)
                continue
            saved = self.stack
            self.stack = self.stack + [decorator]
            try:
                value = self._or_raise(Interpreter.invoke, wrapper, [value], {}, decorator)  # (one that raises: so does the `def`)
            finally:
                self.stack = saved
        return value

    def _defaults(self, arguments: nodes.Arguments, frame: Frame) -> dict[str, Any]:
        return {name: self.ev(default, frame) for name, default in o.default_nodes(arguments).items()}

    def define_class(self, node: nodes.ClassDef, frame: Frame) -> Any:
        bases = tuple(self.ev(base, frame) for base in node.bases)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
        body = Frame(frame)
        model = any(self.stubs.is_model_base(base) for base in bases)  # its fields are its __init__'s
        written = getattr(node, "_metaclass", None)  # (astroid keeps `metaclass=` apart from the other keywords)
        meta = self.ev(written, frame) if written is not None else next(
            (base.metaclass for base in bases if isinstance(base, o.ClassObj) and base.metaclass is not None), None)
        cls = o.ClassObj(node, body, bases, dataclass=model, keyword_only=model,
                         enum=self.stubs.makes_enum(bases), flag=self.stubs.makes_flag(bases),
                         metaclass=meta if isinstance(meta, o.ClassObj) else None)
        saved = self.calls
        self.calls = []
        try:
            for statement in node.body:
                if isinstance(statement, (nodes.FunctionDef, nodes.AsyncFunctionDef)):
                    # (their bodies skip the class scope; their decorators and defaults do not)
                    body.vars[_identifier(statement, statement.name)] = self.define_function(statement, frame, scope=body)
                else:
                    self.statement(statement, body)
        except _Signal:
            pass
        finally:
            self.calls = saved
        self.stubs.make_members(self, cls)
        self.stubs.name_descriptors(self, cls)
        keywords = {keyword.arg: self.ev(keyword.value, frame) for keyword in node.keywords or ()
                    if keyword.arg not in (None, "metaclass")}  # (astroid keeps `metaclass=` apart, but not always)
        self._init_subclass(cls, node, keywords)
        value: Any = self._made_by_metaclass(cls, keywords) if cls.metaclass is not None else cls
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

    def _made_by_metaclass(self, cls: o.ClassObj, keywords: dict[str, Any]) -> Any:
        """Python makes a class by calling its metaclass: the metaclass's `__new__` runs with
        the name, bases, namespace and the class statement's keywords (JAX's tests:
        `class XWGTest(XTest, lowering_semantics=Warpgroup)`, whose `__new__` sets
        `cls.LOWERING_SEMANTICS` after the body). Its `super().__new__(...)` makes `cls`
        (`classes_made`); what it returns is the class, unless it is some other value."""
        meta = cls.metaclass
        assert meta is not None
        new = next((found for klass in meta.mro() if (found := klass.env.vars.get("__new__", _MISSING)) is not _MISSING),
                   None)
        new = getattr(new, "func", new)  # (written with `@staticmethod` or not)
        if not isinstance(new, o.Closure):
            return cls  # a library's metaclass (`abc.ABCMeta`): what it does is not followed
        node = cls.node
        stack, self.stack = self.stack, self.stack + [node]
        self.classes_made.append(cls)
        try:
            made = self.run(new, [meta, node.name, cls.bases, dict(cls.env.vars)], keywords, node)
        except _Signal:
            made = cls
        finally:
            self.classes_made.pop()
            self.stack = stack
            self.raised = False
        return made if isinstance(made, o.ClassObj) else cls

    def _init_subclass(self, cls: o.ClassObj, node: nodes.ClassDef, keywords: dict[str, Any]) -> None:
        """Python runs the nearest base's `__init_subclass__` (a class method, implicitly) on a
        class as it is made, with the class statement's keywords, before its decorators."""
        hook = next((found for klass in list(cls.mro())[1:]
                     if (found := klass.env.vars.get("__init_subclass__", _MISSING)) is not _MISSING), None)
        hook = getattr(hook, "func", hook)  # (written with `@classmethod` or not)
        if not isinstance(hook, o.Closure):
            return  # `object`'s, or one we do not read: it does nothing we follow
        stack = self.stack
        self.stack = stack + [node]
        try:
            self.run(hook, [cls], keywords, node)
        except _Signal:
            pass
        finally:
            self.stack = stack
            self.raised = False

    def _module_input(self, targets: list[nodes.NodeNG], expression: nodes.NodeNG, frame: Frame) -> Any:
        """What a module's top level binds a name to when the trace cannot tell its value
        (`KIND = jax.devices()[0].device_kind`, `CONFIG = library.load()`): one value all the
        same, set where the code is deployed, so an input (`Free`) -- every function that reads
        it, or is handed it, tests the same value (`"x" if PAIRED else None` in one,
        `collective=paired` in another) -- and True or False when a comparison made it
        (`PAIRED = KIND == "NVIDIA B200"`: `1 + PAIRED` is followed on each path)."""
        if not (self.top_levels and frame is self.frame and not self.calls and len(targets) == 1
                and isinstance(targets[0], nodes.AssignName)):
            return UNKNOWN
        target = targets[0]
        free = o.Free(("module", self.top_levels[-1].name, target.name, target.lineno), target.name)
        return o.either_bool(free) if _makes_bool(expression) else free

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
                name = node.name  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
                if name[:2] == "__":
                    name = _identifier(node, name)
                value = frame.lookup(name)
                return self.name(name, frame) if value is _MISSING else value
            if kind is nodes.Const:
                return node.value  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
            if kind is nodes.Call:  # the next two, inline too: a handler is one more frame
                return self.call(node, frame)  # type: ignore[arg-type]  # mypy cannot narrow through `kind`
            if kind is nodes.Attribute:
                name = node.attrname  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
                if name[:2] == "__":
                    name = _identifier(node, name)
                return self.attribute(self.ev(node.expr, frame), name)  # type: ignore[attr-defined]  # mypy cannot narrow through `kind`
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
            return self.name(_identifier(node, node.name), frame)
        if isinstance(node, nodes.Attribute):
            return self.attribute(self.ev(node.expr, frame), _attribute_name(node))
        if isinstance(node, nodes.Call):
            return self.call(node, frame)
        if isinstance(node, nodes.Subscript):
            return self.subscript(node, frame)
        if isinstance(node, (nodes.Tuple, nodes.List, nodes.Set)):
            ways = self.elements(node.elts, frame)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
            if isinstance(node, nodes.Set):
                return _set_of(ways)
            if ways is UNKNOWN:
                return UNKNOWN
            made = tuple if isinstance(node, nodes.Tuple) else list
            return guarded((guard, made(items)) for guard, items in ways)
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
            scope, lazy = _walrus_scope(node, frame)
            self.assign(node.target, UNKNOWN if lazy else value, scope)
            return value
        if isinstance(node, nodes.Slice):  # (a bound at its default or not: a slice for each)
            parts = [self.ev(part, frame) for part in (node.lower, node.upper, node.step)]
            return self.lift(_slice, *parts)
        if isinstance(node, (nodes.ListComp, nodes.GeneratorExp, nodes.DictComp, nodes.SetComp)):
            return self.comprehension(node, frame)
        if isinstance(node, nodes.Starred):
            return self.ev(node.value, frame)
        if isinstance(node, nodes.YieldFrom):
            self.yielded(self.iterate(self.ev(node.value, frame)), frame)
            return UNKNOWN  # (the inner generator's return value)
        if isinstance(node, nodes.Yield):
            self.yielded([self.ev(node.value, frame)], frame)
            return UNKNOWN  # (what `send` gives: None in a `for`)
        return UNKNOWN

    def name(self, name: str, frame: Frame) -> Any:
        value = frame.lookup(name)
        if value is _MISSING:
            value = self.stubs.BUILTINS.get(name, _MISSING)
        if value is _MISSING:  # bound by `from <library module> import *`, if anything
            starred = frame.lookup(o.STAR_IMPORTS)
            value = self.stubs.resolve(f"{starred[-1]}.{name}") if starred is not _MISSING else UNKNOWN
        return value

    def elements(self, elts: list[nodes.NodeNG], frame: Frame) -> list[tuple[Guard, list[Any]]] | Any:
        """A display's items, as (guard, items) per path: one path, unless a `*spread` has a
        length that depends on the path (`[acc, *([aux] if with_aux else [])]`); UNKNOWN when
        a spread's items are not known."""
        ways: list[tuple[Guard, list[Any]]] = [(TRUE, [])]
        for elt in elts:
            if not isinstance(elt, nodes.Starred):
                value = self.ev(elt, frame)
                for _, items in ways:
                    items.append(value)
                continue
            value = self.ev(elt.value, frame)
            parts = [(guard, self.iterate(item)) for guard, item in split(value)]
            if any(part is UNKNOWN for _, part in parts):
                return UNKNOWN
            ways = _each_way(ways, parts, lambda items, part: items + part)
            if ways is UNKNOWN:
                return UNKNOWN
        return ways

    def mapping(self, pairs: list[tuple[nodes.NodeNG, nodes.NodeNG]], frame: Frame) -> dict[Any, Any] | Any:
        """A dict display; one dict per path when a `**spread` differs by path."""
        ways: list[tuple[Guard, dict[Any, Any]]] | Any = [(TRUE, {})]
        for key, value in pairs:
            if isinstance(key, nodes.DictUnpack):
                ways = self._spread_into(ways, self.ev(value, frame))
                if ways is UNKNOWN:
                    return UNKNOWN
                continue
            keys = split(self.ev(key, frame))  # (a key that depends on the path: one dict per path)
            if not all(o.dict_key(concrete) for _, concrete in keys):
                return UNKNOWN
            ways = _each_way(ways, keys, functools.partial(_with_item, item=self.ev(value, frame)))
            if ways is UNKNOWN:
                return UNKNOWN
        return guarded(ways)

    def conditional(self, node: nodes.IfExp, frame: Frame) -> Any:
        """`a if test else b`: each outcome's value under its guard; an outcome that raises
        ends only its own path."""
        alternatives = []
        saved = self.guard
        outcomes = self.truth_of(node.test, frame)
        try:
            for guard, taken in outcomes:
                self.guard = guard
                try:
                    alternatives.append((guard, self.ev(node.body if taken else node.orelse, frame)))
                except _Signal:
                    if len(outcomes) == 1:
                        raise
                    self.dropped_raises += 1
        finally:
            self.guard = saved
        if not alternatives:
            raise _Signal(*_RAISED)
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
        raised = False  # the rest raised where it ran: only that path ends
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
                    except _Signal:
                        raised = True
                    finally:
                        self.guard = saved
        if raised and not found:
            raise _Signal(*_RAISED)
        if raised:
            self.dropped_raises += 1
        return found

    def comprehension(self, node: nodes.ListComp | nodes.SetComp | nodes.DictComp | nodes.GeneratorExp,
                      frame: Frame) -> Any:
        """Its value; with one `for`, one per way its filters can go (`[t for t in types if t
        is not None]` with an item that is None under some guard only): alternatives, each
        under its guard, as a branch's are."""
        iterable = self.ev(node.generators[0].iter, frame)
        if type(iterable) is not o.Guarded:
            items = self.iterate(iterable)
            if isinstance(node, nodes.GeneratorExp) and isinstance(iterable, o.Generator):
                self.poisoned.add(id(iterable.items))  # (Python takes them as the expression's items are taken)
            return self._comprehended(node, frame, items)
        found = []  # one iterable per alternative (`range(nbuf)`, a default and the input)
        saved = self.guard
        try:
            for guard, item in split(iterable):
                both = conjoin(saved, guard)
                if both is not None:
                    self.guard = both
                    found.append((both, self._comprehended(node, frame, self.iterate(item))))
        finally:
            self.guard = saved
        return guarded(found)

    def _comprehended(self, node: nodes.ListComp | nodes.SetComp | nodes.DictComp | nodes.GeneratorExp,
                      frame: Frame, items: list[Any] | Any) -> Any:
        """Its value over these items of its first iterable."""
        states: list[list[Any]] = [[self.guard, []]]  # [guard, results]: one per outcome so far
        inner = Frame(_outside_class(node, frame))
        if items is UNKNOWN or not self._generate(node, list(node.generators), inner, frame, states, states, items):
            return UNKNOWN
        return guarded((guard, self._collected(node, results)) for guard, results in states)

    @staticmethod
    def _collected(node: nodes.NodeNG, results: list[Any]) -> Any:
        if isinstance(node, nodes.DictComp):
            return dict(results) if all(o.dict_key(key) for key, _ in results) else UNKNOWN
        if isinstance(node, nodes.SetComp):
            return UNKNOWN
        return results if isinstance(node, nodes.ListComp) else o.Generator(results, "a generator expression")

    def _generate(self, node: nodes.ListComp | nodes.SetComp | nodes.DictComp | nodes.GeneratorExp,
                  generators: list[nodes.Comprehension], inner: Frame, frame: Frame, states: list[list[Any]],
                  active: list[list[Any]], first: list[Any] | None = None) -> bool:
        """The comprehension's elements from `generators` on, added to the `active` states.
        A filter whose outcome differs between guards splits a state, one per outcome (into
        `states`), in a comprehension with one `for` (where every state takes every item);
        with more, it is not known. False when the elements cannot be known."""
        if not generators:
            element = ((self.ev(node.key, inner), self.ev(node.value, inner)) if isinstance(node, nodes.DictComp)
                       else self.ev(node.elt, inner))  # (evaluated once: the loop variables fix it)
            for state in active:
                state[1].append(element)
            return True
        generator = generators[0]
        items = first if first is not None else self.iterate(self.ev(generator.iter, inner))
        if items is UNKNOWN:
            return False
        splits = len(node.generators) == 1
        for item in items:
            self.assign(generator.target, item, inner)
            kept: list[list[Any]] | None = list(active)
            for condition in generator.ifs:
                kept = self._filtered(self.ev(condition, inner), kept or [], states if splits else None)
                if kept is None or len(states) > o.MAX_ALTERNATIVES:
                    return False
            if kept and not self._generate(node, generators[1:], inner, frame, states, kept):
                return False
        return True

    def kept_items(self, items: list[Any], truth_of: Callable[[Any], Any]) -> Any:
        """The items for which `truth_of` holds (`filter`), one list per way the tests can go,
        as a comprehension's filter splits them; UNKNOWN when one's truth is not known."""
        states: list[list[Any]] = [[self.guard, []]]
        for item in items:
            kept = self._filtered(truth_of(item), list(states), states)
            if kept is None or len(states) > o.MAX_ALTERNATIVES:
                return UNKNOWN
            for state in kept:
                state[1].append(item)
        return guarded((guard, found) for guard, found in states)

    def _filtered(self, condition: Any, active: list[list[Any]], states: list[list[Any]] | None
                  ) -> list[list[Any]] | None:
        """The states a filter keeps. Under a state's guard the filter may go several ways:
        the first keeps the state, each other one a copy of its results added to `states`
        (None: splitting is not allowed). None when an outcome is not known."""
        kept = []
        for state in active:
            outcomes = self.truth(condition, state[0])
            if any(outcome is UNKNOWN for _, outcome in outcomes) or (len(outcomes) != 1 and states is None):
                return None
            targets = [state] + [[guard, list(state[1])] for guard, _ in outcomes[1:]]
            if states is not None:
                states.extend(targets[1:])
                if not outcomes:  # no way through under this guard
                    states[:] = [other for other in states if other is not state]
            for (guard, outcome), target in zip(outcomes, targets):
                target[0] = guard
                if outcome:
                    kept.append(target)
        return kept

    # -- operations ------------------------------------------------------------------------

    def truth(self, value: Any, under: Guard | None = None) -> list[tuple[Guard, Any]]:
        """Python truthiness as (guard, True | False | UNKNOWN) alternatives, pruned by the
        path guard (or `under`); an object of a class with `__bool__` (else `__len__`) is
        what that gives."""
        if type(value) is o.Instance:
            method = self._dunder(value, "__bool__")
            length = self._dunder(value, "__len__") if method is None else None
            called = method or length
            if called is not None:
                made = self.invoke(o.Bound(called, value), [], {}, called.node)
                value = made if method is not None else self._identity("!=", made, 0)
        return o.truth_alternatives(value, self.guard if under is None else under)

    def _dunder(self, value: Any, name: str) -> o.Closure | None:
        """The analysed code's method `name` of an object's class (not an enum's), if it has one."""
        if type(value) is not o.Instance or value.free is not None or value.cls.enum:
            return None
        method = self.stubs.class_attribute(value.cls, name)
        return method if isinstance(method, o.Closure) else None

    def _dunder_compare(self, op: str, left: Any, right: Any) -> Any:
        """`==`, `!=` and `in` through the classes' own `__eq__`, `__ne__`, `__contains__`
        (the left's first, then the right's reflected); None where neither defines one."""
        if op in ("in", "not in"):
            method = self._dunder(right, "__contains__")
            if method is None:
                return None
            found = self.invoke(o.Bound(method, right), [left], {}, method.node)
            return self.unary("not", found) if op == "not in" else self._truth_value(found)
        if op not in ("==", "!="):
            return None
        for subject, other in ((left, right), (right, left)):
            method = self._dunder(subject, "__ne__") if op == "!=" else None
            negate = False
            if method is None:
                method, negate = self._dunder(subject, "__eq__"), op == "!="
            if method is not None:
                found = self.invoke(o.Bound(method, subject), [other], {}, method.node)
                return self.unary("not", found) if negate else found
        return None

    def _truth_value(self, value: Any) -> Any:
        return guarded((guard, truth) for guard, truth in self.truth(value, TRUE))

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

        def one(item: Any) -> Any:
            return self.stubs.flag_inverse(item) if op == "~" and type(item) is o.Instance else _fold(_UNARY.get(op), item)
        if type(value) is not o.Guarded:
            return one(value)
        return self.lift(lambda item: self._dropping(one, item), value)

    def binary(self, op: str, left: Any, right: Any) -> Any:
        if type(left) is not o.Guarded and type(right) is not o.Guarded:
            return self._binary(op, left, right)
        return self.lift(lambda a, b: self._dropping(self._binary, op, a, b), left, right)

    def _dropping(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function` on one of several values' alternatives: where it raises, the raise is
        dropped (UNKNOWN), as an undecided test's would be."""
        try:
            return function(*args)
        except _Signal as signal:
            if not _raises(signal.args):
                raise
            self.dropped_raises += 1
            return UNKNOWN

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
        a kernel body that got it once (the same spec given twice, `[spec] * 2`, is two refs);
        outside a kernel body, one allocation is the one spec object Python compares."""
        if op in ("is", "is not") and isinstance(left, o.Alloc) and isinstance(right, o.Alloc):
            if left is not right:
                return op == "is not"
            if not self.kernels or id(left) not in self.repeated_refs:
                return op == "is"
            return UNKNOWN
        if o.Instance in (type(left), type(right)) and op in ("==", "!=", "in", "not in"):
            dunder = self._dunder_compare(op, left, right)
            if dunder is not None:
                return dunder
        if op in ("is", "is not", "==", "!=") and o.Instance in (type(left), type(right)) \
                and not any(type(side) is o.Instance and side.cls.enum for side in (left, right)):  # (`_member_compare`)
            same = self.stubs.instances_equal(left, right, op in ("is", "is not"))
            if same is not None:
                return UNKNOWN if same is UNKNOWN else same == (op in ("is", "=="))
        if op in ("in", "not in") and type(left) is o.Instance and not left.cls.enum and type(right) in (tuple, list) \
                and id(right) not in self.poisoned:  # (`is`, then `==`, item by item)
            found = [True if item is left else self.stubs.instances_equal(left, item, False) if type(item) is o.Instance
                     else False if isinstance(item, _PRIMITIVE) and o.plain_class(left.cls) else UNKNOWN for item in right]
            if True in found or UNKNOWN not in found and None not in found:
                return (True in found) == (op == "in")
            return UNKNOWN
        contained = self.stubs.flag_contains(left, right) if op in ("in", "not in") else None
        if contained is not None:  # one flag's bits in another's
            return contained == (op == "in")
        if op in ("in", "not in") and type(right) is dict and o.dict_key(left) \
                and id(right) not in self.poisoned:  # a key of a dict we know all of
            return (left in right) == (op == "in")
        if op in ("in", "not in") and type(right) in (set, frozenset, range):  # (`variant in {"pair", "wide"}`)
            if id(right) in self.poisoned or not isinstance(left, _PRIMITIVE):
                return UNKNOWN
            return (left in right) == (op == "in")
        return _compare(op, left, right)

    def attribute(self, value: Any, name: str) -> Any:
        """`value.<name>`; a property whose getter raises on every path raises here."""
        if type(value) is not o.Guarded:
            return self._or_raise(self.stubs.attribute, value, name)
        return self.lift(lambda obj: self._or_unknown(self.stubs.attribute, obj, name), value)

    def attribute_or(self, value: Any, name: str, default: Any, node: nodes.NodeNG) -> Any:
        """`getattr(value, name, default)`: the default where the lookup raises (a getter that
        raises on every path); where it raises only on paths we dropped, one of the two, as
        an undecided test at `node` chooses."""
        if type(value) is o.Library and api.surely_missing(value.qname, name):
            return default  # (a version shim: `getattr(plgpu, "NewThing", None)`)
        dropped = self.dropped_raises
        try:
            found = self.attribute(value, name)
        except _Signal as signal:
            if not _raises(signal.args):
                raise
            return default
        if self.dropped_raises == dropped:
            return found
        # (still counted for an enclosing `try`: what the getter raises may not be AttributeError)
        raised = o.raises_var(node, self._opaque)
        return guarded([(frozenset({(raised, False)}), found), (frozenset({(raised, True)}), default)])

    def _or_raise(self, look_up: Callable[..., Any], *args: Any) -> Any:
        """A stub's lookup (an attribute, an item) of one value: where it raises (a getter
        raising on every path, a key a dict we know all of lacks, None), the path ends."""
        self.raised = False
        found = look_up(self, *args)
        if self.raised:
            error, self.raised = self.raised, False
            raise _raise(error)
        return found

    def _or_unknown(self, look_up: Callable[..., Any], *args: Any) -> Any:
        """... of one of several values: where it raises, the raise is dropped (UNKNOWN)."""
        self.raised = False
        found = look_up(self, *args)
        if self.raised:
            self.raised = False
            self.dropped_raises += 1
            return UNKNOWN
        return found

    def subscript(self, node: nodes.Subscript, frame: Frame) -> Any:
        """`value[index]`; an index tuple whose parts depend on the path (`[:, :block_n]`, a
        parameter at its default or not) is one index per path."""
        value, index = self.ev(node.value, frame), self.ev(node.slice, frame)
        if type(index) is tuple and any(type(part) is o.Guarded for part in index):
            index = self.lift(lambda *parts: parts, *index)
        return self.item(value, index, node)

    def item(self, value: Any, index: Any, node: nodes.NodeNG | None = None) -> Any:
        """`value[index]`; `node`, the subscript, lets a read run code (a `defaultdict`'s factory):
        not for one of several values, whose reads would all change their containers."""
        if type(value) is not o.Guarded and type(index) is not o.Guarded:
            return self._or_raise(self.stubs.item, value, index, node)
        return self.lift(lambda obj, key: self._or_unknown(self.stubs.item, obj, key), value, index)

    def iterate(self, value: Any) -> list[Any] | Any:
        """The items of a known iterable, else UNKNOWN. An iterator is spent after: what it
        yields again is taken as unknown (empty in Python; the trace keeps no such order
        across branches and loops, and a kernel body short of refs binds them as operands)."""
        if isinstance(value, (tuple, list)):
            if id(value) in self.poisoned or len(value) > MAX_UNROLL * 4:
                return UNKNOWN
            return list(value)
        if isinstance(value, range):
            return list(value) if len(value) <= MAX_UNROLL else UNKNOWN
        if type(value) is str:  # its characters
            return list(value) if len(value) <= MAX_UNROLL * 4 else UNKNOWN
        if isinstance(value, dict):
            return list(value) if id(value) not in self.poisoned else UNKNOWN
        if isinstance(value, o.ClassObj) and (value.enum or self.stubs.is_value_enum(value)):
            return self.stubs.enum_members(value)
        if type(value) is api.ApiValue:  # one of the API's enum classes (`tuple(plgpu.LoweringSemantics)`)
            members = api.enum_members(value.qualified)
            return UNKNOWN if members is None else list(members)
        if isinstance(value, o.Generator):
            return self._take(value)
        if isinstance(value, o.Instance):
            items = self.stubs.tuple_items(value)  # a named tuple
            if items is None:  # a class of the analysed code's `__iter__`
                iterator = self.stubs.iterator_of(self, value)
                return UNKNOWN if iterator is None else self._take(iterator)
            return items
        if isinstance(value, o.Union):
            return [self.item(value, index) for index in range(len(value.groups))]
        if isinstance(value, o.Member) and isinstance(value.ref, o.Union):
            return [self.item(value, index) for index in range(len(value.ref.groups))]
        return UNKNOWN

    def _take(self, iterator: Any) -> list[Any] | Any:
        """The items an iterator has left, taken from it."""
        if not isinstance(iterator, o.Generator) or id(iterator.items) in self.poisoned:
            return UNKNOWN
        if len(iterator.items) > MAX_UNROLL * 4:
            self.poisoned.add(id(iterator.items))  # taken, but not followed
            return UNKNOWN
        items = list(iterator.items)
        self.changing(iterator.items)
        iterator.items.clear()
        # what it gives again is taken as unknown (empty in Python, but the trace keeps no
        # such order across branches and loops, and a kernel body short of refs binds them
        # as operands: a false PLS009)
        self.poisoned.add(id(iterator.items))
        return items

    # -- calls -----------------------------------------------------------------------------

    def call(self, node: nodes.Call, frame: Frame) -> Any:
        callee = self.ev(node.func, frame)
        alternatives = self.call_arguments(node.args, frame)
        keywords = self.keyword_arguments(node.keywords or (), frame)
        if keywords is UNKNOWN:
            for _, args, tail in alternatives:
                for value in args + (tail or []):
                    self.escape(value)
            self.escape(callee)
            return UNKNOWN
        if len(alternatives) == 1 and len(keywords) == 1 and type(callee) is not o.Guarded \
                and not alternatives[0][0] and not keywords[0][0]:
            _, args, tail = alternatives[0]
            return self._call_once(callee, args, tail, keywords[0][1], node)
        ways = [(both, (target, args, tail, kwargs)) for spread_guard, args, tail in alternatives
                for keywords_guard, kwargs in keywords
                for guard, target in split(callee) if (both := conjoin(spread_guard, keywords_guard, guard)) is not None]
        return self.per_alternative(ways, lambda way: self.invoke(way[0], way[1], way[3], node) if way[2] is None
                                    else self.invoke_spread(way[0], way[1], way[2], way[3], node))

    def _call_once(self, callee: Any, args: list[Any], tail: list[Any] | None, kwargs: dict[str, Any],
                   node: nodes.Call) -> Any:
        """`per_alternative` of a call's one way, under the current guard (most calls: one
        callee, one argument list), without the machinery for several."""
        guard = self.guard
        self.raised = False
        try:
            value = self.invoke(callee, args, kwargs, node) if tail is None else \
                self.invoke_spread(callee, args, tail, kwargs, node)
            raised = self.raised
        finally:
            self.guard = guard
            self.raised = False
        if raised:
            raise _raise(raised)
        return value if type(value) is not o.Guarded else guarded(((guard, value),))

    def keyword_arguments(self, keywords: Iterable[nodes.Keyword], frame: Frame
                          ) -> list[tuple[Guard, dict[str, Any]]] | Any:
        """A call's keyword arguments, each evaluated once, as (guard, kwargs) per path: one,
        unless a `**spread` is a different dict on different paths (`**(extra if tiled else
        {})`); UNKNOWN when a spread is not a dict we know."""
        ways: list[tuple[Guard, dict[str, Any]]] = [(TRUE, {})]
        for keyword in keywords:
            value = self.ev(keyword.value, frame)
            if keyword.arg is not None:
                for _, kwargs in ways:
                    kwargs[keyword.arg] = value
                continue
            ways = self._spread_into(ways, value)
            if ways is UNKNOWN:
                return UNKNOWN
        return ways

    def _spread_into(self, ways: list[tuple[Guard, dict[Any, Any]]], value: Any
                     ) -> list[tuple[Guard, dict[Any, Any]]] | Any:
        """Each way's dict updated with each alternative of the dict `value` (`**value`)."""
        parts = split(value)
        if not all(isinstance(part, dict) and id(part) not in self.poisoned for _, part in parts):
            return UNKNOWN
        return _each_way(ways, parts, lambda mapping, part: {**mapping, **part})

    def per_alternative(self, alternatives: Iterable[tuple[Guard, Any]], run: Callable[[Any], Any]) -> Any:
        """`run(item)` for each alternative, under its guard: the guarded join of what they
        give. One that raised on every path (a function of the analysed code, an `__enter__`)
        gives nothing; when all did, so does this (and when some did, a raise was dropped)."""
        results = []
        raised: set[str | bool] = set()  # (the classes of what they raised)
        saved = self.guard
        try:
            for guard, item in alternatives:
                both = conjoin(saved, guard)
                if both is None:
                    continue
                self.guard = both
                self.raised = False
                value = run(item)
                if self.raised:
                    raised.add(self.raised)
                    continue
                results.append((both, value))
        finally:
            self.guard = saved
            self.raised = False
        if raised and not results:
            raise _raise(raised.pop() if len(raised) == 1 else True)
        if raised:
            self.dropped_raises += 1
        return guarded(results) if results else UNKNOWN

    def call_arguments(self, elts: list[nodes.NodeNG], frame: Frame) -> list[tuple[Guard, list[Any], list[Any] | None]]:
        """A call's positional arguments, each evaluated once: all of them and None, or, when a
        `*spread` has items we cannot count, those before it and the known ones after it (a
        kernel body's `*refs` spreads its scratch refs at the end). A spread sequence whose
        length depends on the guard (`run_scoped(body, *present)`, `present` filtered under a
        condition) makes one argument list per alternative, each under its guard."""
        for elt in elts:
            if isinstance(elt, nodes.Starred):
                break
        else:  # (most calls: no spread)
            return [(TRUE, [self.ev(elt, frame) for elt in elts], None)]
        alternatives: list[tuple[Guard, list[Any], list[Any] | None]] = [(TRUE, [], None)]
        for elt in elts:
            if not isinstance(elt, nodes.Starred):
                value = self.ev(elt, frame)
                for _, prefix, tail in alternatives:
                    (prefix if tail is None else tail).append(value)
                continue
            value = self.ev(elt.value, frame)
            ways = [(guard, self.iterate(item)) for guard, item in split(value)] if type(value) is o.Guarded else []
            if not ways or any(items is UNKNOWN for _, items in ways):
                ways = [(TRUE, self.iterate(value))]  # one way: its items, or not known
            grown = []
            for guard, prefix, tail in alternatives:
                for way_guard, items in ways:
                    both = conjoin(guard, way_guard)
                    if both is None:
                        continue
                    args, rest = list(prefix), None if tail is None else list(tail)
                    if items is UNKNOWN:
                        rest = list(value.suffix) if isinstance(value, o.TailTuple) else []
                    else:
                        (args if rest is None else rest).extend(items)
                    grown.append((both, args, rest))
            alternatives = grown if 0 < len(grown) <= o.MAX_ALTERNATIVES else [(TRUE, [], [])]  # (not counted)
        return alternatives

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
        self.escape_arguments(prefix + tail, kwargs)
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
            self.partials_called.append(callee)  # (the object: a dead one's id is soon another's)
            return self.invoke(callee.func, list(callee.args) + args, {**dict(callee.keywords), **kwargs}, node, preset)
        kind = type(callee)
        if kind is o.Native or kind is o.Library:  # (the commonest callees after functions)
            if callee.qname.startswith("builtins.") and self._refused(callee.qname, args, kwargs):
                return UNKNOWN
            if kind is o.Native:
                return self.stubs.call_native(self, callee, args, kwargs, node)
            return self._call_library(callee, args, kwargs, node, preset)
        if kind in (type(None), int, float, complex, bool, str, bytes, list, dict):
            self.raised = "TypeError"  # (`None()`: not callable)
            return UNKNOWN
        if isinstance(callee, o.ClassObj):
            return self.stubs.instantiate(self, callee, args, kwargs, node)
        if isinstance(callee, (self.stubs.Patch, self.stubs.DictPatch)) and len(args) == 1 and not kwargs:  # a decorator
            return o.Partial(o.Native("<patched>"), (callee, args[0]), ())
        if type(callee) is o.ContextManager and callee.maker is not None and len(args) == 1 and not kwargs:
            return o.Partial(o.Native("<decorated by a manager>"), (callee.maker, args[0]), ())  # (a decorator too)
        if isinstance(callee, self.stubs.Dispatcher):
            return self.stubs.dispatch(self, callee, args, kwargs, node)
        if isinstance(callee, self.stubs.Method):
            return self.stubs.call_method(self, callee, args, kwargs, node)
        if isinstance(callee, o.Instance):  # a callable object: its class's __call__
            method = self.stubs.class_attribute(callee.cls, "__call__")
            if isinstance(method, o.Closure):
                return self.run(method, [callee] + args, kwargs, node, preset)
        if isinstance(callee, o.Kernel):  # a kernel applied to its operands (PLS015 counts them)
            if isinstance(node, nodes.Call):
                self.record("kernel_apply", node, {"kernel": callee.node, "args": tuple(args),
                                                   "kwargs": tuple(kwargs)})
                if not kwargs:
                    self.stubs.apply_kernel(self, callee, args, node)
            return UNKNOWN
        if type(callee) is api.DType and len(args) == 1 and not kwargs:  # `np.int64(96)`, `np.bool_(0)`
            scalar = api.scalar_of(callee, args[0])
            if scalar is not None:
                return scalar
        if type(callee) is api.ApiValue and len(args) == 1 and not kwargs:  # `plgpu.LoweringSemantics(1)`
            member = api.enum_member(callee.qualified, args[0], by_name=False)
            if member is not None:
                return member
        self.escape_arguments(args, kwargs)
        if isinstance(callee, api.ApiValue):
            return self.stubs.library_call(callee)
        return UNKNOWN

    def _call_library(self, callee: o.Library, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG,
                      preset: dict[str, Any] | None) -> Any:
        """`invoke` of a library function we do not model as a stub."""
        if callee.qname in self.stubs.LIBRARY_CALLS:
            return self.stubs.LIBRARY_CALLS[callee.qname](self, node, args, kwargs)
        if self.resolver.readable(callee.qname):
            function = self.resolver.library_function(self, callee.qname)  # JAX's kernel building blocks
            if function is not None:
                return self.invoke(function, args, kwargs, node, preset)
        if callee.qname in self.stubs.MUTATING_CALLS:
            self.stubs.mutated_by(self, args)  # (`heapq.heapify(items)`)
        self.escape_arguments(args, kwargs)
        return self.stubs.library_call(callee)

    def _refused(self, qname: str, args: list[Any], kwargs: dict[str, Any]) -> bool:
        """Does Python refuse this builtin's call on these plain values (`stubs.python_refuses`),
        on every alternative of the arguments (the call raises), or on those one setting of one
        input chooses (`int(os.environ.get(name))` where it is unset: `raises_when`)?"""
        if not any(type(value) is o.Guarded for value in (*args, *kwargs.values())):
            refused = self.stubs.python_refuses(self, qname, args, kwargs)
            if refused is not None:
                self.raised = refused
            return refused is not None
        names = list(kwargs)
        outcomes = self.lift(lambda *values: _Refusal(self.stubs.python_refuses(
            self, qname, list(values[:len(args)]), dict(zip(names, values[len(args):])))), *args, *kwargs.values())
        ways = split(outcomes)
        refusing = [(guard, way.error) for guard, way in ways if type(way) is _Refusal and way.error is not None]
        if not refusing:
            return False
        if len(refusing) == len(ways):
            self.raised = refusing[0][1] if len({error for _, error in refusing}) == 1 else True
            return True
        conditions = {frozenset(guard - self.guard) for guard, _ in refusing}
        condition = next(iter(conditions))
        error = refusing[0][1]
        if len(conditions) == 1 and len(condition) == 1 and isinstance(error, str) \
                and all(other == error for _, other in refusing):
            (var, value), = condition
            self.raises_when(var, value, error)
        else:
            self.dropped_raises += 1
        return False

    def escape_arguments(self, args: Iterable[Any], kwargs: dict[str, Any]) -> None:
        """A call's arguments handed to code we do not read (`escape` each)."""
        for value in (*args, *kwargs.values()):
            self.escape(value)

    def escape(self, value: Any) -> None:
        """A function handed to code we do not read still runs: trace it later, with
        unknown arguments, if nothing calls it meanwhile."""
        for _, item in split(value):
            if isinstance(item, o.Closure) and not item.stub:
                self.escaped.append(item)
            elif isinstance(item, o.Partial):
                self.partials_handed_on.append(item)
                self.escape(item.func)
            elif isinstance(item, o.Bound):
                if isinstance(item.func, o.Closure) and not item.func.stub and isinstance(item.self_value, o.Instance) \
                        and item.self_value.free is None and item.func.node.root() is self.root:
                    # run with its receiver (`Lane().run` handed on: the subclass's attributes), not
                    # also with an unknown one: what an instance the file made holds is known
                    bound = o.Partial(item.func, (item.self_value,), ())
                    self.partials_handed_on.append(bound)
                    self.partials.append(bound)
                else:
                    self.escape(item.func)
            elif isinstance(item, o.Instance) and item.free is None:  # a callable object: its `__call__`
                method = self.stubs.class_attribute(item.cls, "__call__")
                if isinstance(method, o.Closure):
                    self.escape(o.Bound(method, item))
            elif isinstance(item, o.Generator):  # code we do not read may take from it
                self.poisoned.add(id(item.items))

    def run(self, closure: o.Closure, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG,
            preset: dict[str, Any] | None = None) -> Any:
        """Call a function of the analysed code (or a stub) with these arguments; one under
        `functools.lru_cache` answers arguments equal to an earlier call's as it did then."""
        if not getattr(closure, "cached", False):
            return self._run(closure, args, kwargs, node, preset)
        try:
            key = (closure.node, closure.env, tuple(map(self._cache_key, args)),
                   tuple(sorted((name, self._cache_key(value)) for name, value in kwargs.items())))
        except self.stubs.Unhashable:
            self.raised = "TypeError"  # (an unhashable argument)
            return UNKNOWN
        except (_Unfreezable, LookupError):
            return self._run(closure, args, kwargs, node, preset)
        try:
            hash(key)
        except TypeError:  # (an object of the trace's: how Python would tell it is not known)
            return self._run(closure, args, kwargs, node, preset)
        if key in self.cache_answers:
            result, self.raised = self.cache_answers[key]
            return result
        result = self._run(closure, args, kwargs, node, preset)
        if not self.raised:  # (what raised is not kept)
            self.cache_answers[key] = (result, self.raised)
        return result

    def _cache_key(self, value: Any) -> Any:
        """An argument as `functools.lru_cache` tells it from others (`stubs.cache_key`)."""
        if type(value) in (list, dict, set):
            raise self.stubs.Unhashable
        found = self.stubs.cache_key(value)
        return _freeze(value) if found is self.stubs.IDENTITY else _freeze(found)

    def clear_cache(self, closure: o.Closure) -> None:
        """`f.cache_clear()`: its calls run again."""
        for key in [key for key in self.cache_answers if key[0] is closure.node and key[1] is closure.env]:
            del self.cache_answers[key]

    def _run(self, closure: o.Closure, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG,
             preset: dict[str, Any] | None = None) -> Any:
        func = closure.node
        self.raised = False
        suspends, self.suspend_next = self.suspend_next, False
        depth = self._active.get(func, 0)
        if depth >= MAX_DEPTH or len(self.stack) > MAX_DEPTH:
            return UNKNOWN
        frame = Frame(closure.env)
        bound = self.bind(closure, args, kwargs, preset)
        if bound is None:
            if isinstance(node, nodes.Call) and preset is None and not closure.stub and not getattr(closure, "wrapped", False):
                self.raised = "TypeError"  # (`f()` for `def f(x)`, `f(z=1)`: Python's binding refuses it)
            return UNKNOWN
        if depth and not closure.stub and not _bounded_recursion(depth, bound):
            return UNKNOWN  # recursion on values we do not know: where it ends cannot be told
            # (a stub's inner function nests legitimately: `pl.when` inside `pl.when`)
        frame.vars.update(bound)
        anchor = self.anchor()
        key = None if suspends else _memo_key(func, closure.env, bound, self.guard, anchor, self.kernel_run(),
                                              self._free_values(func, closure.env))
        generator = not isinstance(func, nodes.Lambda) and self._is_generator(func)
        if key is not None and key in self._memo and self.memo_epochs.get(key) == self.write_epoch:
            answer = self._memo[key]
            if self.world is not None:
                self.world.memo_read(key, answer)
            result, self.raised, dropped = answer
            self.dropped_raises += dropped
            return self._generator_of(result) if generator else result
        keeper, recording = self.keeper, None
        # (a call on the way from the analysed file's code, `anchor`: another one next time)
        if keeper is not None and key is not None and anchor is None and not generator and not closure.stub:
            dropped = self.dropped_raises
            kept = keeper.replay(self, closure, node, key)
            if kept is not None:
                self._memo[key] = (kept.result, kept.raised, self.dropped_raises != dropped)
                self.memo_epochs[key] = self.write_epoch
                self.raised = kept.raised
                return kept.result
            recording = keeper.start(self, closure, node, key)
        if recording is None:
            return self._execute(closure, func, bound, frame, node, key, depth, generator, suspends)
        assert keeper is not None
        completed, result = False, None
        try:
            result = self._execute(closure, func, bound, frame, node, key, depth, generator)
            completed = True
        finally:
            keeper.finish(self, recording, result, self.raised, completed)
        return result

    def _execute(self, closure: o.Closure, func: nodes.FunctionDef | nodes.Lambda, bound: dict[str, Any],
                 frame: Frame, node: nodes.NodeNG, key: tuple[Any, ...] | None, depth: int, generator: bool,
                 suspends: bool = False) -> Any:
        """`run`'s call, when no memo or kept run answers it."""
        self.executed.add(func)
        if not any(value is UNKNOWN for value in bound.values()):
            self.known_calls.add(func)
        pushed = not closure.stub and isinstance(node, nodes.NodeNG) and node.root() is not None
        saved_stack = self.stack
        if pushed:
            self.stack = self.stack + [node]
        self._active[func] = depth + 1
        self.calls.append(_Call(function=func, generator=generator, loop_depth=self.loop_depth,
                                suspends=suspends and generator))
        if generator:
            frame.vars[_YIELDED] = ()
        saved_guard, saved_frame = self.guard, self.frame
        dropped = self.dropped_raises
        effects = self._effects()
        self.frame = frame
        raised: bool | str = False
        try:
            if isinstance(func, nodes.Lambda):
                try:
                    result = self.ev(func.body, frame)
                except _Signal as signal:  # its body raises on every path: so does the call
                    result, raised = UNKNOWN, _error(signal.args) if _raises(signal.args) else True
            else:
                ending: tuple[Any, ...] = ()
                try:
                    self.block(func.body, frame)
                    self.calls[-1].returns.append((self.guard, self._ended(self.calls[-1], None, frame)))
                except Suspended:  # (at its `yield`: what it yielded so far, as if it had returned)
                    self.calls[-1].returns.append((self.guard, self._ended(self.calls[-1], None, frame)))
                except _Signal as signal:
                    ending = signal.args
                returns = self.calls[-1].returns
                # (a generator's body runs when it is iterated: calling it does not raise; here
                # it runs at once, and its "returns" are what it yielded)
                if not returns and not generator:
                    raised = _error(ending) if _raises(ending) else True
                result = guarded(returns) if returns else (UNKNOWN if generator else None)
        finally:
            self.calls.pop()
            self._active[func] = depth
            self.stack = saved_stack
            self.guard, self.frame = saved_guard, saved_frame
        if key is not None and self._effects() == effects:
            self._memo[key] = (result, raised, self.dropped_raises != dropped)
            self.memo_epochs[key] = self.write_epoch
        self.raised = raised
        return self._generator_of(result) if generator else result

    def _effects(self) -> tuple[int, int]:
        """How many writes (to containers, instances, namespaces) and `global`/`nonlocal`
        statements ran so far: a call that ran some is not memoized, since taking its result
        again would not make them again (`state[0] += 1`, `nonlocal count; count += 1`)."""
        return len(self.loose_writes) + len(self.construction_writes), self.names_declared

    @staticmethod
    def _generator_of(yielded: Any) -> Any:
        """A fresh iterator over what a generator's run yielded (per path: a tuple, or UNKNOWN)."""
        return guarded((guard, o.Generator(list(items)) if isinstance(items, tuple) else UNKNOWN)
                       for guard, items in split(yielded))

    def _free_values(self, func: nodes.FunctionDef | nodes.Lambda, env: Frame | None) -> tuple[Any, ...]:
        """What the names the function reads from outside itself hold now. Python reads a
        closure's free variables when it runs, not when it is defined: `for acc in accs:` around
        `@pl.loop` or `@pl.when` bodies runs the same function object with a different `acc`
        each time, so the call is the same call only when these are the same too."""
        names = self._names_read(func)
        if env is None or not names:
            return ()
        lookup = env.lookup
        return tuple([(name, _by_identity(lookup(name))) for name in names])

    def _names_read(self, func: nodes.FunctionDef | nodes.Lambda) -> tuple[str, ...]:
        """`_free_names` of a function, learning on the way whether it yields. A function of
        another module than the analysed one keeps the answer (`_NAMES_READ`): the next
        analysis takes the same tree, and walks it no more. The analysed file's tree is new in
        every analysis (its definitions move into the next version's tree): the answers for
        its functions are kept by their text (`_text_of`)."""
        found = self._free.get(func)
        if found is not None:
            return found
        own = func.root() is self.root
        text = self._text_of(func) if own else None
        if not own:
            kept = func.__dict__.get(_NAMES_READ)
        else:
            kept = _NAMES_READ_BY_TEXT.get(text) if text is not None else None
        if kept is None:
            kept = (_free_names(func, self._free, self._yields), self._yields.get(func, True))
            if not own:
                setattr(func, _NAMES_READ, kept)
            elif text is not None:
                if len(_NAMES_READ_BY_TEXT) >= _MAX_TEXTS:
                    _NAMES_READ_BY_TEXT.clear()
                _NAMES_READ_BY_TEXT[text] = kept
        self._free[func], self._yields[func] = kept
        return kept[0]

    def _text_of(self, func: nodes.FunctionDef | nodes.Lambda) -> bytes | None:
        """The analysed file's text of a function of it, its decorators included (None: not
        at hand). What `_free_names` finds depends on that text alone: the next analysis of
        the file (a keystroke's, the next run's) builds a new tree of mostly the same text."""
        data, starts = self._lines
        if starts is None:
            data = getattr(self.root, "file_bytes", None)
            starts = list(itertools.accumulate(map(len, data.splitlines(keepends=True)), initial=0)) \
                if isinstance(data, bytes) else []  # (where each line starts, as Python splits them)
            self._lines = (data, starts)
        first = func.decorators.nodes[0] if isinstance(func, nodes.FunctionDef) and func.decorators else func
        if data is None or first.lineno is None or first.col_offset is None or func.end_lineno is None \
                or func.end_col_offset is None or not 0 < first.lineno <= func.end_lineno < len(starts):
            return None
        return data[starts[first.lineno - 1] + first.col_offset:starts[func.end_lineno - 1] + func.end_col_offset]

    def _is_generator(self, func: nodes.FunctionDef) -> bool:
        """astroid walks the body each time it is asked (twice), and a function runs many
        times. astroid only ever finds `yield` nodes inside the function: without one (the walk
        for its free names looked) it is not a generator, and astroid is not asked."""
        found = self._generators.get(func)
        if found is None:
            self._names_read(func)
            found = self._generators[func] = self._yields.get(func, True) and bool(func.is_generator())
        return found

    def bind(self, closure: o.Closure, args: list[Any], kwargs: dict[str, Any],
             preset: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Python's argument binding; None when the call would raise a TypeError."""
        arguments = closure.node.args
        if arguments.args is None:
            return None
        defaults = getattr(closure, "defaults", {})
        signature = self._signatures.get(arguments)
        if signature is None:
            positional = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args]
            kwonly = [arg.name for arg in arguments.kwonlyargs]
            signature = self._signatures[arguments] = (positional, kwonly, positional + kwonly)
        positional, kwonly, every = signature
        bound: dict[str, Any] = dict(preset) if preset else {}
        extra_kwargs: dict[str, Any] = {}
        free_positional = [name for name in positional if name not in bound] if bound else positional
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
        for name in every:
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
        last points into it. (Asked at every call: the answer is kept with the stack it was
        found on, which is never changed in place, only replaced.)"""
        stack = self.stack
        if self._anchored[0] is stack:
            return self._anchored[1]
        found = None
        for node in reversed(stack):
            local = self._local.get(node)
            if local is None:
                local = self._local[node] = node.root() is self.root
            if local:
                found = node
                break
        self._anchored = (stack, found)
        return found

    def kernel_run(self) -> tuple[Any, ...] | None:
        """The kernel invocation we are in: the calls up to its `plgpu.kernel(...)` (a kernel
        made by a factory called twice runs twice, and each run records its own sites), and
        the run itself (its "kernel" site: runs in a loop, or of one closure over two
        environments, make the same calls). Kept as `anchor` keeps its answer."""
        if not self.kernels:
            return None
        kernel = self.kernels[-1]
        site = self.kernel_sites[-1] if self.kernel_sites else _NO_SITE
        stack, kept_kernel, kept_site, found = self._kernel_run
        if stack is self.stack and kept_kernel is kernel and kept_site is site:
            return found
        stack = self.stack
        run = None if site is _NO_SITE else id(site)  # (two runs may share their calls)
        found = (kernel, run)
        for index in range(len(stack) - 1, -1, -1):
            if stack[index] is kernel:
                found = (*stack[: index + 1], run)
                break
        self._kernel_run = (stack, kernel, site, found)
        return found

    def record(self, kind: str, node: nodes.Call, arguments: dict[str, Any], value: Any = None,
               built: o.Chain | None = None) -> Site:
        site = Site(kind, node, arguments, self.guard, tuple(self.stack), self.kernels[-1] if self.kernels else None,
                    value, tuple(self.meshes), tuple(self.handling), built,
                    self.kernel_sites[-1] if self.kernel_sites else None, self.tracing_only > 0)
        self.sites.append(site)
        return site

    def refuses(self, site: Site) -> bool:
        """Does JAX surely refuse the call `site` recorded (an allocation, a traced MMA), where
        a `try` around it catches what that raises? Then the call raises here and the handler
        runs, as in Python (`except ValueError:` falling back to another allocation, or an
        autotuner going on to its next configuration). Uncaught, the trace goes on past it:
        the rules report it, and JAX's trace stops at its first error anyway."""
        if not site.handled or self.refused is None:
            return False
        error = self.refused(site)
        if error is None or o.caught(site.handled, error) is not True:
            return False
        self.raised = error
        return True


def _attribute_name(node: nodes.Attribute | nodes.AssignAttr | nodes.DelAttr) -> str:
    """The attribute an `obj.name` in the code reads or writes (`_identifier`)."""
    name: str = node.attrname
    return _identifier(node, name) if name[:2] == "__" else name


def _identifier(node: nodes.NodeNG, name: str) -> str:
    """What a name written at `node` is to Python: inside a class definition (its methods
    included), a private `__name` is `_Class__name` (name mangling: a subclass's `self.__x` is
    another attribute than its base's); a function or class defined in a class body is
    mangled by that class, not by itself."""
    if not name.startswith("__") or name.endswith("__"):
        return name
    mangled = _MANGLED.get(node)
    if mangled is None:
        inside = node.parent if isinstance(node, (nodes.FunctionDef, nodes.ClassDef)) else node
        while inside is not None and not isinstance(inside, nodes.ClassDef):
            inside = inside.parent
        stem = inside.name.lstrip("_") if inside is not None else ""
        mangled = _MANGLED[node] = f"_{stem}{name}" if stem else name
    return mangled


_MANGLED: weakref.WeakKeyDictionary[nodes.NodeNG, str] = weakref.WeakKeyDictionary()  # `_identifier`
_COMPREHENSIONS = (nodes.ListComp, nodes.SetComp, nodes.DictComp, nodes.GeneratorExp)


def _outside_class(node: nodes.NodeNG, frame: Frame) -> Frame:
    """The frame a comprehension or lambda written in a class body reads names through: the
    class body's names are not visible to the scopes nested in it (only its first iterable
    and its defaults are evaluated there)."""
    in_class = node.parent is not None and isinstance(node.parent.scope(), nodes.ClassDef)
    return frame.parent if in_class and frame.parent is not None else frame


def _walrus_scope(node: nodes.NamedExpr, frame: Frame) -> tuple[Frame, bool]:
    """Where an assignment expression binds (PEP 572): in a comprehension, the scope around it
    (each comprehension runs in a frame of its own), and whether a generator expression on the
    way makes the value it is left with depend on how far its consumer takes it (`any((rows
    := r) % 64 for r in ...)` stops early): then the name is bound to unknown there."""
    lazy = False
    scope = node.scope()
    while isinstance(scope, _COMPREHENSIONS) and frame.parent is not None and scope.parent is not None:
        lazy = lazy or isinstance(scope, nodes.GeneratorExp)
        frame = frame.parent
        scope = scope.parent.scope()
    return frame, lazy


def _bounded_recursion(depth: int, bound: dict[str, Any]) -> bool:
    """Is a function that is running called again, with these arguments, followed? A helper
    that recurses over a known count or a tuple of specs ends within a few levels; arguments we
    do not know (or that differ per path) would only tell us where it does not."""
    return depth < MAX_RECURSION and not any(
        value is UNKNOWN or isinstance(value, (o.Free, o.Guarded, o.TailTuple)) for value in bound.values())


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
    nodes.Name: lambda self, node, frame: self.name(_identifier(node, node.name), frame),
    nodes.Attribute: lambda self, node, frame: self.attribute(self.ev(node.expr, frame), _attribute_name(node)),
    nodes.Call: Interpreter.call,
    nodes.Subscript: lambda self, node, frame: self.subscript(node, frame),
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


def _binds(frame: Frame) -> Callable[[str], bool]:
    """Does the code bind this name where `frame` looks (shadowing a builtin)?"""
    return lambda name: frame.lookup(name) is not _MISSING


def _slice(*parts: Any) -> Any:
    return slice(*parts) if all(isinstance(p, (int, type(None), o.TailLength)) for p in parts) else UNKNOWN


def _reraises(node: nodes.Try) -> bool:
    """Does every handler of the `try` end by raising (`except ValueError: log(); raise`, or
    `raise RuntimeError(...) from e`)? JAX's error then still ends the program, as the cause
    of the new one."""
    return all(_ends_in_raise(handler.body) for handler in node.handlers)


def _ends_in_raise(statements: list[nodes.NodeNG]) -> bool:
    """Does every path through these statements end in a `raise` (an `if` whose two branches
    both do counts)?"""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, nodes.If):
        return _ends_in_raise(last.body) and _ends_in_raise(last.orelse)
    return isinstance(last, nodes.Raise)


def _each_way(ways: Sequence[tuple[Guard, Any]], parts: Sequence[tuple[Guard, Any]], join: Callable[[Any, Any], Any]
              ) -> list[tuple[Guard, Any]] | Any:
    """Every way combined with every part its guard allows (`join(way, part)`, under both
    guards): a display's or a call's items so far and the alternatives of what comes next;
    UNKNOWN when none is consistent or there are too many."""
    grown = [(both, join(value, part)) for guard, value in ways for part_guard, part in parts
             if (both := conjoin(guard, part_guard)) is not None]
    return grown if 0 < len(grown) <= o.MAX_ALTERNATIVES else UNKNOWN


def _set_of(ways: Any) -> Any:
    """A set display's value, per path: a set of plain values (`objects.plain_set`), else unknown."""
    return UNKNOWN if ways is UNKNOWN else guarded((guard, o.plain_set(set, items)) for guard, items in ways)


def _with_item(mapping: dict[Any, Any], key: Any, item: Any) -> dict[Any, Any]:
    return {**mapping, key: item}


def _keep_live(variables: dict[str, Any], live: list[Guard]) -> None:
    """After a statement some of whose paths left the function (raised, returned), only the
    others go on: a variable's alternatives that no going path allows are gone (`if rows not
    in (64, 128): self.skipTest(...)` leaves the test's other cases, not its 96)."""
    for name, value in variables.items():
        if type(value) is not o.Guarded:
            continue
        kept = [(guard, item) for guard, item in value.alternatives
                if any(conjoin(guard, path) is not None for path in live)]
        if len(kept) < len(value.alternatives):
            variables[name] = guarded(kept) if kept else UNKNOWN


def _starred(items: list[Any] | Any, star: int, count: int) -> list[Any] | None:
    """What `count` targets with a starred one at `star` take from `items` (the starred one:
    a list); None when the items are unknown or too few (Python raises)."""
    after = count - star - 1
    if items is UNKNOWN or len(items) < star + after:
        return None
    return [*items[:star], list(items[star:len(items) - after]), *items[len(items) - after:]]


def _restore(container: Any, contents: Any) -> None:
    if isinstance(container, dict):
        container.clear()
        container.update(contents)
    else:
        container[:] = contents


_YIELDED = "<yielded>"  # a generator function's frame: what it yielded so far (no identifier)
MAX_SPLIT_NAMES = 2  # (`per_path`: the names a searching loop is run once per alternative of)
# The attribute where a loop keeps the names it reads and whether it binds them (empty: not a
# searching loop, `_loop_names`): it goes with the tree.
_LOOP_NAMES = "pallas_loop_names"


def _path_dependent_name(node: nodes.For | nodes.While, frame: Frame) -> tuple[str, Frame] | None:
    """A name read by the searching loop `node` whose value differs by path (a few
    alternatives), and the frame holding it: the running one, or an enclosing one when the
    loop does not bind the name; None when there is none, or the loop cannot stop early."""
    names = node.__dict__.get(_LOOP_NAMES)
    if names is None:
        names = _loop_names(node)
        setattr(node, _LOOP_NAMES, names)
    for name, rebound in names:
        holder: Frame | None = frame
        while holder is not None and name not in holder.vars and not rebound:
            holder = holder.parent
        value = holder.vars.get(name) if holder is not None else None
        if type(value) is o.Guarded and 1 < len(value.alternatives) <= 4:
            return name, holder  # type: ignore[return-value]  # (not None: it held the value)
    return None


def _loop_names(loop: nodes.For | nodes.While) -> tuple[tuple[str, bool], ...]:
    """The names a searching loop (a `while`, or a `for` with a `break` of its own) reads,
    each with whether it binds it; none for another loop. One walk, outside nested scopes."""
    searching = isinstance(loop, nodes.While)
    read: dict[str, None] = {}
    bound: set[str] = set()
    pending: list[Any] = [loop]  # nodes; mypy cannot narrow through `kind`
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is nodes.Name:
            read[node.name] = None
        elif kind is nodes.AssignName:
            bound.add(node.name)
        elif kind is nodes.Break:
            searching = searching or _in_loop(node, loop)
        if kind not in _DEFINITIONS:
            pending.extend(node.get_children())
    return tuple((name, name in bound) for name in read) if searching else ()


_DEFINITIONS = (nodes.FunctionDef, nodes.AsyncFunctionDef, nodes.Lambda, nodes.ClassDef)  # (scopes of their own)


def _in_loop(found: nodes.Break, loop: nodes.NodeNG) -> bool:
    """Does this `break` leave `loop` (not a loop nested in it)?"""
    child: nodes.NodeNG = found
    parent = found.parent
    while parent is not None and parent is not loop:
        if isinstance(parent, (nodes.For, nodes.While)) and child not in parent.orelse:
            return False  # (a loop's `else` is outside it: a `break` there leaves the one around)
        child, parent = parent, parent.parent
    return True


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


_INDEX_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                               operator.neg, operator.pos})


def _fold(function: Any, *operands: Any) -> Any:
    if function in (operator.add, operator.sub) and len(operands) == 2 and isinstance(operands[0], o.TailLength) \
            and isinstance(operands[1], int) and not isinstance(operands[1], bool):
        length, number = operands
        return o.TailLength(length.tail, length.offset + (number if function is operator.add else -number))
    if function in _INDEX_ARITHMETIC and any(isinstance(x, o.Index) for x in operands) and all(
            isinstance(x, (o.Index, o.Free)) or x is UNKNOWN or (isinstance(x, int) and not isinstance(x, bool))
            for x in operands):
        return o.Index()  # `ki % 2`, `slot + 1`, `step % num_stages`: still a traced integer
    if function is None or not all(_foldable(operand) for operand in operands):
        return _combined(function, *operands)
    try:
        result = function(*operands)
    except (TypeError, ValueError, ArithmeticError) as error:
        if all(map(o.plain_value, operands)):  # (`None + 1`, `-"a"`, `1 // 0`: Python's own error)
            raise _raise(type(error).__name__) from None
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
    if function is operator.or_ and {type(left), type(right)} <= {dict, o.OrderedDict}:
        return o.OrderedDict({**left, **right})  # (`OrderedDict.__ror__` answers `dict | OrderedDict`)
    if function is operator.or_ and isinstance(left, dict) and isinstance(right, dict):
        kept = left if isinstance(left, o.DefaultDict) else right  # `defaultdict | dict`, either way round
        if isinstance(kept, o.DefaultDict) and type(left if kept is right else right) in (dict, o.DefaultDict):
            return o.DefaultDict(kept.factory, {**left, **right})
    return UNKNOWN


_REFLEXIVE = {"==": True, "is": True, "<=": True, ">=": True, "!=": False, "is not": False, "<": False, ">": False}


def _pure_read(node: nodes.NodeNG) -> bool:
    """Is evaluating the expression again only reading names and attributes (in a display)?"""
    if isinstance(node, (nodes.List, nodes.Tuple)):
        return all(isinstance(element, nodes.NodeNG) and _pure_read(element) for element in node.elts)
    while isinstance(node, nodes.Attribute):
        node = node.expr
    return isinstance(node, (nodes.Name, nodes.Const))


def _items_of(container: Any) -> list[Any]:
    """The objects a known list, tuple or dict holds."""
    if type(container) in (list, tuple):
        return list(container)
    return list(container.values()) if type(container) is dict else []


def _same_dtype_object(left: api.DType, right: api.DType) -> Any:
    """`left is right`: a dtype object is never a scalar type (`x.dtype is jnp.float16` is
    False); NumPy's dtype objects of one dtype are one object; two scalar types of one dtype
    may be two (`jnp.float16`, `np.float16`): not known, unless they are one value here."""
    if left is right:
        return True
    same = api.same_dtype(left, right)
    if same is UNKNOWN or same is False:
        return same
    if left.instance != right.instance:
        return False
    return True if left.instance else UNKNOWN


def _compare(op: str, left: Any, right: Any) -> Any:
    member = _member_compare(op, left, right)
    if member is not None:
        return member
    if type(left) is api.ApiValue and type(right) is api.ApiValue and op in ("is", "is not", "==", "!="):
        same = api.same_api_object(left, right)  # (`semantics == plgpu.LoweringSemantics.Warpgroup`)
        return UNKNOWN if same is None else same == (op in ("is", "=="))
    if isinstance(left, o.Free) and isinstance(right, o.Free) and left.key == right.key and op in _REFLEXIVE:
        return _REFLEXIVE[op]  # one input, whatever its value (a size or flag: not NaN)
    if isinstance(left, o.ClassObj) and isinstance(right, o.ClassObj) and op in ("is", "is not", "==", "!="):
        same = _same_class(left, right)
        return UNKNOWN if same is UNKNOWN else same == (op in ("is", "=="))
    if op in ("in", "not in") and isinstance(right, o.Library) and right.qname == o.ENVIRONMENT \
            and isinstance(left, str):
        return o.environment_has(left, op == "in")
    if op in ("in", "not in") and isinstance(left, o.Free) and isinstance(right, (tuple, list, set, frozenset)) \
            and right and all(isinstance(item, _PRIMITIVE) for item in right):
        return _one_of_constants(left, list(dict.fromkeys(right)), op == "in")
    if isinstance(left, api.DType) and isinstance(right, api.DType) and op in ("is", "is not"):
        same = _same_dtype_object(left, right)
        return UNKNOWN if same is UNKNOWN else same == (op == "is")
    if op in ("is", "is not"):
        for subject, other in ((left, right), (right, left)):
            if other is None and isinstance(subject, o.Free) and subject.text:
                return op == "is not"  # (a string read from outside is never None)
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
    if op in ("==", "!=") and isinstance(left, api.DType) != isinstance(right, api.DType):
        dtype, name = (left, right) if isinstance(left, api.DType) else (right, left)
        if type(name) is str:
            same = api.dtype_equals_name(dtype, name)
            return UNKNOWN if same is UNKNOWN else same == (op == "==")
    if isinstance(left, api.DType) and isinstance(right, api.DType) and op in ("==", "!="):
        same = api.same_dtype(left, right)
        return UNKNOWN if same is UNKNOWN else same == (op == "==")
    if op in ("in", "not in") and isinstance(left, api.DType) and isinstance(right, (tuple, list)) and right \
            and all(isinstance(item, api.DType) for item in right):  # `x.dtype in (jnp.float16, jnp.bfloat16)`
        found = [api.same_dtype(left, item) for item in right]
        if True not in found and UNKNOWN in found:
            return UNKNOWN
        return (True in found) == (op == "in")
    if op in ("in", "not in") and isinstance(right, (tuple, list)) and isinstance(left, _PRIMITIVE) and all(
            isinstance(item, _PRIMITIVE) for item in right):
        return _COMPARE[op](left, right)
    if _foldable(left) and _foldable(right):
        try:
            return _COMPARE[op](left, right)
        except TypeError:
            return UNKNOWN
    return UNKNOWN


def _same_class(left: o.ClassObj, right: o.ClassObj) -> Any:
    """`type(config) is Config`: one class object, or two (`==` compares classes by identity,
    unless a metaclass says otherwise). Two of one statement may be twins: not known."""
    if left is right:
        return True
    if left.node is right.node or any(getattr(cls.node, "_metaclass", None) is not None for cls in (left, right)):
        return UNKNOWN  # (astroid keeps `metaclass=` apart from the class's other keywords)
    return False




def _makes_bool(node: nodes.NodeNG | None) -> bool:
    """Does the expression give a bool whatever its operands (a comparison, `not`, `bool(x)`,
    `isinstance(...)`, or `and`/`or` of those)?"""
    if isinstance(node, nodes.Compare):
        return True
    if isinstance(node, nodes.UnaryOp):
        return node.op == "not"
    if isinstance(node, nodes.BoolOp):
        return all(_makes_bool(value) for value in node.values)
    return isinstance(node, nodes.Call) and isinstance(node.func, nodes.Name) and node.func.name in (
        "bool", "isinstance", "hasattr", "callable") and node.func.lookup(node.func.name)[0].root().name == "builtins"


def _one_of_constants(subject: o.Free, constants: list[Any], truth: bool) -> o.Guarded:
    """`subject in (c1, c2, ...)` for an input: `subject == c1 or subject == c2 ...`, on the
    same variables an `==` test of it makes (so the two spellings agree)."""
    tests = [o.equals_var(subject, "==", constant) for constant in constants]
    found = [(frozenset([(test, False) for test in tests[:index]] + [(tests[index], True)]), truth)
             for index in range(len(tests))]
    return o.Guarded((*found, (frozenset((test, False) for test in tests), not truth)))


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
    if any(isinstance(value, o.Generator) for _, value in free):
        return None  # the callee may take its items: the same call may give other values
    try:
        frozen = tuple(sorted((name, _freeze(value)) for name, value in bound.items()))
        return _MemoKey((func, env, frozen, guard, anchor, kernel, free))  # the frame itself: an id may be reused
    except _Unfreezable:
        return None
    except TypeError:
        return None


_NO_SITE = object()  # (`kernel_run` outside a body's run)


class _MemoKey(tuple[Any, ...]):
    """A memo key, hashed once: a call looks its key up and stores it several times (and a
    kept call's key holds it), and the frozen dataclasses among its arguments hash all their
    fields again each time they are asked."""

    hashed: int

    def __new__(cls, items: tuple[Any, ...]) -> _MemoKey:
        key = super().__new__(cls, items)
        key.hashed = tuple.__hash__(key)  # (a TypeError: an argument cannot be hashed)
        return key

    def __hash__(self) -> int:
        return self.hashed


class _Unfreezable(Exception):
    pass


def _freeze(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, (list, dict, set, o.Generator)):
        raise _Unfreezable()  # the callee may mutate it (take an iterator's items): run it every time
    if isinstance(value, o.Instance):
        return value  # by identity, and kept alive by the key
    if isinstance(value, api.DType):
        return value, value.instance  # (a dtype object has an `itemsize`; the scalar type it equals, none)
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


# The attribute where a function of a tree that outlives an analysis keeps its `_free_names`
# and whether it yields (`Interpreter._names_read`): it goes with the tree.
_NAMES_READ = "pallas_names_read"
# ... and the same of the analysed files' functions, by their text (`Interpreter._text_of`)
_NAMES_READ_BY_TEXT: dict[bytes, tuple[tuple[str, ...], bool]] = {}
_MAX_TEXTS = 4096

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
