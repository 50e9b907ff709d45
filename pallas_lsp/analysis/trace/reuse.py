"""Entry points' runs kept between traces of one file (an editor's session).

Typing inside one test method of a 9,900-line test file changes one of its 300 entry points;
the trace ran them all again. A `TraceMemo` keeps, per file, what each entry point's run
(a *unit*: one `Trace._entry`) left: its sites, the functions it executed (and ran with known
arguments), the closures it made and let escape, the containers it poisoned, its steps. The
next trace of the file runs the module's top level again (a few per cent of the trace), then
replays each unit whose run cannot have changed and runs the others.

A unit's run is a function of the code it executes and the module state it reads, because
`Trace` makes the units independent of each other: each starts with an empty call memo and
sees no container poisoned by another one (`Trace._entry_unit`). A kept unit is replayed when
- the module's top level is the same text (function bodies aside, `module_key`), read the same
  names (the prefilter's), ran the same modules of the project (astroid builds a module again
  when its file changes) and executed the same functions: its state is what it was;
- the unit is the same function node (`incremental.TreeMemo` keeps a definition's node while its
  text is unchanged), with the same inputs (`Free` or unknown: who else in the project uses it);
- every node its run executed, or its results name (sites, closures, escaped closures), is in
  the new tree or in a module this trace runs as it was (`_Alive`);
- the file's step budget bound neither that run nor this one.
The runs after the entry points of functions a module's top level defined (handed to code we
do not read: tokamax's `_fwd`, which calls the kernel module being edited, so that its run is
never kept for other traces) are units too, keyed by their function (`escaped_key`), and
replayed on the same conditions; the other closures run then are run again.
What is not provably the same is run again, and the whole trace is run from scratch when a
unit could have changed what others read: a write (container, attribute, `global`,
`nonlocal`) to an object the top level made, or any write by the closures run after the
entry points (whose environments may be those of kept units). A unit that imports (inside a
function: what it binds may be a module another unit read first) is not kept. A replayed unit's results hold the objects of
the trace that made them: the module-level ones are the twins of this trace's (same code, same
state), not the same objects.
"""

from __future__ import annotations

import threading
from collections.abc import Container
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Iterable

from astroid import nodes

from ..values import Var
from . import objects as o
from .interp import WRITES_IMPORTED, WRITES_NAMES, Frame, Site

if TYPE_CHECKING:
    from ..prefilter import ReadNames
    from . import Trace
    from .kept_calls import KeptCall

MAX_GENERATIONS = 16  # traces whose units one trace may replay (each keeps its objects alive)


class Diverged(Exception):
    """A unit run again wrote to state other units read: the trace starts over from scratch."""


@dataclass
class _Unit:
    sites: list[Site]
    executed: set[nodes.NodeNG]
    known: set[nodes.NodeNG]
    closures: list[o.Closure]
    escaped: list[o.Closure]
    poisoned: set[int]
    steps: int
    exhausted: int
    start: int  # the steps taken before it
    named: list[nodes.NodeNG]  # the nodes its results name
    generation: int
    # the partials of the analysed module's functions it made, and the ids of those it called
    partials: tuple[list[o.Partial], list[o.Partial]] = ([], [])
    kept: frozenset[int] = frozenset()  # its sites replays of kept runs added (`Trace.kept_sites`)


@dataclass
class _Record:
    module_key: tuple[Any, ...]
    top_executed: frozenset[Any]  # the functions the top level ran (`Units._code`)
    units: dict[tuple[Any, ...], _Unit] = field(default_factory=dict)
    # the served modules (stubs, library modules) loaded when the trace ended, which the next
    # trace loads before its entry points (`Units.preload`)
    preload: tuple[nodes.Module, ...] = ()


class TraceMemo:
    """The units of the last trace of each file (at most `max_files` files)."""

    def __init__(self, max_files: int = 64) -> None:
        self._files: dict[str | None, _Record] = {}
        self._lock = threading.Lock()
        self._max_files = max_files
        self._generation = 0
        self.replayed = 0  # entry points the last trace replayed (for tests and benchmarks)
        self.ran = 0  # ... and ran

    def forget(self, path: str | None) -> None:
        self._files.pop(path, None)

    def units(self, path: str | None, lines: list[str]) -> Units:
        """The bookkeeping of one trace of `path` (whose text is `lines`)."""
        with self._lock:
            previous = self._files.pop(path, None)  # a concurrent trace of it starts afresh
            self._generation += 1
            generation = self._generation
        return Units(self, path, lines, previous, generation)

    def _store(self, path: str | None, record: _Record, only_if_absent: bool = False) -> None:
        with self._lock:
            if only_if_absent and path in self._files:
                return
            self._files.pop(path, None)
            while len(self._files) >= self._max_files:
                del self._files[next(iter(self._files))]
            self._files[path] = record


class Units:
    """One trace's units: replayed from the previous record of the file, or run and kept."""

    def __init__(self, memo: TraceMemo, path: str | None, lines: list[str], previous: _Record | None,
                 generation: int, preload: tuple[nodes.Module, ...] = ()) -> None:
        self._memo = memo
        self._path = path
        self._lines = lines
        self._previous = previous
        self._preload = previous.preload if previous is not None else preload
        self._taken = previous  # what to give back if the trace does not complete
        self._generation = generation
        self._record: _Record | None = None
        self._shared_ids: set[int] | None = None  # ids of what the top level made (`_shared`)
        self._modules: list[o.ModuleObj] = []
        self._alive: _Alive | None = None
        self._keep = True
        self.replayed = self.ran = 0

    def fresh(self) -> Units:
        """The bookkeeping for the same trace started over without replaying anything."""
        return Units(self._memo, self._path, self._lines, None, self._generation, self._preload)

    def preload(self) -> tuple[nodes.Module, ...]:
        """The modules to load after the top level, before the entry points: the served ones
        (our stubs, library modules: no project code, which might call the file's functions)
        that the last trace of the file had loaded. A unit that loads a module is never kept
        (what it read may be what another unit loaded), and the units before it are replayed,
        so the first unit to need a module would load it, and run, in every analysis."""
        return self._preload

    def _shared(self, trace: Trace) -> set[int]:
        """The ids of every object the module states reach after the top level (found when
        a unit first writes to something: most never do)."""
        if self._shared_ids is None:
            world = trace.interp.world
            self._shared_ids = world.reachable(self._modules) if world is not None else _reachable(
                module.env for module in self._modules)
        return self._shared_ids

    def _code(self, node: nodes.NodeNG, module: nodes.Module) -> Any:
        """What a function the top level ran is: its text, in the analysed module (where
        a definition `TreeMemo` does not keep is built again, the same), else its node."""
        if node.root() is not module:
            return node
        first = node.lineno or 0
        decorators = getattr(node, "decorators", None)
        if decorators is not None:
            first = min([first] + [d.lineno for d in decorators.nodes if d.lineno is not None])
        return (node.col_offset, "".join(self._lines[first - 1:node.end_lineno or first]))

    @property
    def replaying(self) -> bool:
        return self._previous is not None

    # -- the top level ---------------------------------------------------------------------

    def after_module(self, trace: Trace, names: ReadNames) -> None:
        interp = trace.interp
        # the modules the top level ran: a project module's tree is another when its file changed
        others = frozenset(node for node in interp.modules if node is not trace.module)
        key = (names, trace.flow.project_root, others, module_key(trace.module, self._lines))
        executed = frozenset(self._code(node, trace.module) for node in interp.executed)
        self._record = _Record(key, executed)
        previous = self._previous
        if previous is not None and (previous.module_key != key or previous.top_executed != executed
                                     or len({u.generation for u in previous.units.values()}) >= MAX_GENERATIONS):
            self._previous = previous = None
        self._modules = list(interp.modules.values())
        if previous is not None:
            self._alive = _Alive(trace.module, interp.modules)

    def after_preload(self, trace: Trace) -> None:
        """The modules `preload` gives are loaded: their states are shared like those the top
        level made. (They are not part of the key: a unit kept before they were loaded up
        front did not load them, and ran the same with them loaded or not.)"""
        self._modules = list(trace.interp.modules.values())

    # -- entry points ----------------------------------------------------------------------

    def replay(self, trace: Trace, key: tuple[Any, ...], limit_free: bool) -> bool:
        """Replay the kept run of the unit `key` if it is the run this trace would make."""
        previous, alive = self._previous, self._alive
        if previous is None or alive is None:
            return False
        unit = previous.units.get(key)
        interp = trace.interp
        if unit is None or not limit_free or not unit_free(unit.start):
            return False
        if not (alive.all(unit.executed) and alive.all(unit.named)):
            return False
        interp.replay_run(unit.sites, unit.executed, unit.known, unit.closures, unit.partials)
        trace.kept_sites |= unit.kept
        interp.escaped.extend(unit.escaped)
        interp.poisoned |= unit.poisoned
        interp._steps += unit.steps
        trace.exhausted += unit.exhausted
        assert self._record is not None
        self._record.units[key] = unit
        self.replayed += 1
        return True

    def start(self, trace: Trace) -> tuple[Any, ...]:
        interp = trace.interp
        mark = (len(interp.sites), len(interp.closure_log), len(interp.escaped), interp._steps, trace.exhausted,
                interp.executed, interp.known_calls, len(interp.modules), len(interp.partials),
                len(interp.partials_called))
        interp.executed, interp.known_calls = set(), set()
        interp.writes = []
        return mark

    def finish(self, trace: Trace, key: tuple[Any, ...] | None, mark: tuple[Any, ...], poisoned: set[int],
               env: Frame | None = None) -> None:
        """A unit ran: keep it (`key`: an entry point's, or a module-level function's run after
        them, `escaped_key`; None: another closure run afterwards, in `env`)."""
        interp = trace.interp
        sites, closures, escaped, steps, exhausted, executed, known, modules, partials, called = mark
        own = {id(partial) for partial in interp.partials}  # (the module's own, which the store keeps alive)
        made = (list(interp.partials.since(partials)), [partial for partial in interp.partials_called[called:] if id(partial) in own])
        writes = interp.writes or []
        interp.writes = None
        imported = WRITES_IMPORTED in writes
        if imported:
            writes = [write for write in writes if write is not WRITES_IMPORTED]
        mine, mine_known = interp.executed, interp.known_calls
        executed |= mine
        known |= mine_known
        interp.executed, interp.known_calls = executed, known
        self.ran += key is not None and key[0] is not ESCAPED
        shared = self._shared(trace) if writes or poisoned else set()
        unit = _Unit(interp.sites[sites:], mine, mine_known, interp.closure_log[closures:], interp.escaped[escaped:],
                     poisoned, interp._steps - steps, trace.exhausted - exhausted, steps, [], self._generation, made)
        if key is None or key[0] is ESCAPED:  # a closure run after the entry points
            self._closure_ran(unit, writes, shared, env)
            if key is None or not self._keep:
                return
        elif any(write is WRITES_NAMES or id(write) in shared for write in writes) or poisoned & shared:
            self._diverged()
            return
        if imported or len(interp.modules) != modules or self._record is None:
            return  # it imported (what it read may be what another unit loaded): never replayed
        unit.named = unit.named or _named(unit)
        kept_sites = trace.kept_sites
        if kept_sites:
            unit.kept = frozenset(id(site) for site in unit.sites if id(site) in kept_sites)
        self._record.units[key] = unit

    def _closure_ran(self, unit: _Unit, writes: list[Any], shared: set[int], env: Frame | None) -> None:
        """A closure ran after the entry points: its environment may be a kept unit's, so a
        write to what it reaches, or to what the top level made, diverges; and a kept unit's
        closure sees the module of its own trace, so one that ran code or names nodes no
        longer in this trace's trees diverges too."""
        if writes or unit.poisoned:
            reached = _reachable([env] if env is not None else [], shared)  # (beyond what the top level made)
            if any(write is WRITES_NAMES or id(write) in reached or id(write) in shared for write in writes) or \
                    not (unit.poisoned.isdisjoint(reached) and unit.poisoned.isdisjoint(shared)):
                self._diverged()
        alive = self._alive
        if alive is not None:
            unit.named = _named(unit)
            if not (alive.all(unit.executed) and alive.all(unit.named)):
                self._diverged()

    def _diverged(self) -> None:
        if self._previous is not None:
            self._taken = None  # its objects may have been written to
            raise Diverged()
        self._keep = False

    def abandon(self) -> None:
        """The trace did not complete: keep what the previous one left, unless a unit of
        this one wrote to its objects (it diverged) or a newer trace kept its own."""
        if self._taken is not None:
            self._memo._store(self._path, self._taken, only_if_absent=True)

    def store(self, modules: Iterable[nodes.Module]) -> None:
        """The trace is complete: keep its units for the next one (`modules`: those it
        loaded, in order)."""
        self._memo.replayed, self._memo.ran = self.replayed, self.ran
        if self._keep and self._record is not None:
            self._record.preload = tuple(node for node in modules if _served(node))
            self._memo._store(self._path, self._record)


ESCAPED = "escaped"  # the first item of the key of a run after the entry points (`escaped_key`)


def escaped_key(trace: Trace, closure: o.Closure, inputs: bool) -> tuple[Any, ...] | None:
    """The unit key of a run, after the entry points, of a function a module's top level
    defined once (its closure's environment is that module's, whose state the top levels
    make: the same while the module key is): its node and whether its parameters are
    inputs. None for any other closure (its environment is what some run made)."""
    node = closure.node
    module = trace.interp.modules.get(node.root())
    if closure.stub or module is None or closure.env is not module.env:
        return None
    if sum(made.env is module.env for made in trace.interp.closures.get(node, ())) != 1:
        return None
    return (ESCAPED, node, inputs)


def _served(node: nodes.NodeNG) -> bool:
    """Is this module (a tree's root) one the brain serves (a stub, a library module) rather than the
    project's?"""
    return bool(getattr(node, "pallas_stub", False) or getattr(node, "pallas_trace_stub", False)
                or getattr(node, "pallas_library", None))


def unit_free(start: int) -> bool:
    """Did the file's step budget leave this unit its own (then its run is the same whatever
    ran before it)?"""
    from . import STEPS_PER_ENTRY, STEPS_PER_FILE

    return start + STEPS_PER_ENTRY <= STEPS_PER_FILE


# -- what a module's top level is ---------------------------------------------------------

def module_key(module: nodes.Module, lines: list[str]) -> tuple[str, ...]:
    """The text the module's top level runs: every statement, except the bodies of functions
    (their decorators, signatures and docstrings count; a one-line function counts whole)."""
    parts: list[str] = []

    def text(first: int, last: int) -> str:
        return "".join(lines[first - 1:last])

    def add(body: Iterable[nodes.NodeNG]) -> None:
        for statement in body:
            first = statement.lineno or 0
            decorators = getattr(statement, "decorators", None)
            if decorators is not None:
                first = min([first] + [d.lineno for d in decorators.nodes if d.lineno is not None])
            last = statement.end_lineno or first
            if isinstance(statement, (nodes.FunctionDef, nodes.ClassDef)) and statement.body:
                inner = statement.body[0].lineno or last
                if inner <= (statement.lineno or 0):
                    parts.append(text(first, last))  # a body on the `def` line
                    continue
                parts.append(text(first, inner - 1))
                if isinstance(statement, nodes.ClassDef):
                    add(statement.body)
                    parts.append("\x00")  # the class ends
                continue
            parts.append(text(first, last))

    add(module.body)
    return tuple(parts)


# -- what a unit's results name -----------------------------------------------------------

class _Alive:
    """Is a node one of this trace's: in the analysed module's new tree, or in a module the
    trace runs (what astroid keeps of a project module is rebuilt when its file changes)?"""

    def __init__(self, module: nodes.Module, modules: dict[nodes.Module, o.ModuleObj]) -> None:
        self._module = module
        self._known: dict[nodes.NodeNG, bool] = {}
        self._roots = set(modules)

    def all(self, found: Iterable[nodes.NodeNG]) -> bool:
        return all(self.alive(node) for node in found)

    def alive(self, node: nodes.NodeNG) -> bool:
        known = self._known
        path = []
        current: nodes.NodeNG | None = node
        answer: bool | None = None
        while current is not None:
            answer = known.get(current)
            if answer is not None:
                break
            path.append(current)
            parent = current.parent
            if parent is None:
                answer = current is self._module or current in self._roots or _served(current)
                break
            current = parent
        result = bool(answer)
        for seen in path:
            known[seen] = result
        return result


def _named(unit: _Unit) -> list[nodes.NodeNG]:
    found: dict[int, nodes.NodeNG] = {}
    seen: set[int] = set()
    for site in unit.sites:
        for node in (site.node, site.kernel, *site.chain, *site.meshes):
            if isinstance(node, nodes.NodeNG):
                found[id(node)] = node
        for part in (site.arguments, site.guard, site.value):  # (no tuple of them: `seen` holds ids, and
            _nodes_in(part, found, seen, 0)  # a freed tuple's id is the next site's tuple's)
    for closure in unit.closures + unit.escaped:
        found[id(closure.node)] = closure.node
    for partial in unit.partials[0]:
        _nodes_in(partial, found, seen, 0)
    return list(found.values())


_LEAVES = (str, bytes, int, float, complex, bool, type(None))


def _nodes_in(value: Any, found: dict[int, nodes.NodeNG], seen: set[int], depth: int) -> None:
    """The astroid nodes a value names (through containers, guards and our objects; not
    through frames: what a closure's environment holds is the code that made it)."""
    kind = _NAMING.get(type(value), _UNSEEN)
    if kind is _UNSEEN:
        kind = _NAMING[type(value)] = _naming_kind(type(value))
    if kind is _SKIP or depth > 12:
        return
    if kind is nodes.NodeNG:
        found[id(value)] = value
        return
    if id(value) in seen:
        return
    seen.add(id(value))
    depth += 1
    if kind is tuple:  # (any of tuple, list, set, frozenset)
        for item in value:
            _nodes_in(item, found, seen, depth)
    elif kind is dict:
        for key, item in value.items():
            _nodes_in(key, found, seen, depth)
            _nodes_in(item, found, seen, depth)
        _nodes_in(getattr(value, "factory", None), found, seen, depth)  # a defaultdict's
    elif kind is Var:
        _nodes_in(value.key, found, seen, depth)
    elif kind is o.Closure:  # (or a class, or a module)
        found[id(value.node)] = value.node
    elif kind is o.Instance:
        found[id(value.cls.node)] = value.cls.node
        _nodes_in(value.attributes, found, seen, depth)
        _nodes_in(value.free, found, seen, depth)
    elif kind is o.Namespace:
        _nodes_in(value.attributes, found, seen, depth)
    elif type(kind) is tuple:  # a dataclass's field names (an allocation's frame, `scope`, aside)
        for name in kind:
            _nodes_in(getattr(value, name, None), found, seen, depth)


_NAMING: dict[type, Any] = {}  # `_naming_kind` of each type met so far


def _naming_kind(kind: type) -> Any:
    """How `_nodes_in` goes through a value of this type, decided by the type alone (the
    first class it is an instance of, in this order; a dataclass: its field names)."""
    if issubclass(kind, _LEAVES):
        return _SKIP
    if issubclass(kind, nodes.NodeNG):
        return nodes.NodeNG
    for branches, branch in (((tuple, list, set, frozenset), tuple), ((dict,), dict), ((Var,), Var),
                             ((o.Closure, o.ClassObj, o.ModuleObj), o.Closure), ((o.Instance,), o.Instance),
                             ((o.Namespace,), o.Namespace)):
        if issubclass(kind, branches):
            return branch
    if issubclass(kind, Frame):
        return None
    if is_dataclass(kind) and not issubclass(kind, type):
        return tuple(item.name for item in fields(kind) if item.name != "scope")
    return None


# -- what the top level made ----------------------------------------------------------------

def _reachable(frames: Iterable[Any], known: Container[int] = frozenset()) -> set[int]:
    """The ids of every object the frames (or other objects: a closure) reach (frames,
    classes, closures' defaults and cases, instances, namespaces, containers), except
    through those in `known`."""
    seen: set[int] = set()
    pending: list[Any] = list(frames)
    kinds = _KINDS
    while pending:
        value = pending.pop()
        kind = kinds.get(type(value), _UNSEEN)
        if kind is _UNSEEN:
            kind = kinds[type(value)] = _kind(type(value))
        if kind is _SKIP:
            continue
        ident = id(value)
        if ident in seen or ident in known:
            continue
        seen.add(ident)
        if kind is Frame:
            pending.extend(value.vars.values())
            if value.parent is not None:
                pending.append(value.parent)
        elif kind is tuple:  # (any of tuple, list, set, frozenset)
            pending.extend(value)
        elif kind is dict:
            pending.extend(value.values())
            pending.append(getattr(value, "factory", None))  # a defaultdict's
        elif kind is o.ClassObj:
            pending.append(value.env)
            pending.extend(value.bases)
        elif kind is o.Closure:
            if value.env is not None:
                pending.append(value.env)
            pending.extend(getattr(value, "defaults", {}).values())
            pending.extend(getattr(value, "parameters", ()))
        elif kind is o.Instance:
            pending.extend(value.attributes.values())
            pending.append(value.cls)
        elif kind is o.Namespace:
            pending.extend(value.attributes.values())
            pending.append(value.fallback)
        elif kind is o.ModuleObj:
            pending.append(value.env)
        elif type(kind) is tuple:  # a dataclass's field names
            pending.extend(getattr(value, name, None) for name in kind)
    return seen


_SKIP = object()  # a leaf or a tree node: nothing to reach through it
_UNSEEN = object()
_KINDS: dict[type, Any] = {}  # `_kind` of each type met so far


def _kind(kind: type) -> Any:
    """How `_reachable` goes through a value of this type, decided by the type alone (the
    first class it is an instance of, in this order; a dataclass: its field names)."""
    if issubclass(kind, _LEAVES) or issubclass(kind, nodes.NodeNG):
        return _SKIP
    for branch in (Frame, tuple, list, set, frozenset, dict, o.ClassObj, o.Closure, o.Instance, o.Namespace,
                   o.ModuleObj):
        if issubclass(kind, branch):
            return tuple if branch in (list, set, frozenset) else branch
    if is_dataclass(kind) and not issubclass(kind, type):
        return tuple(item.name for item in fields(kind))
    return None


# -- runs of imported modules' functions, kept across analyses -----------------------------
#
# After a file's entry points, the trace runs the functions that code it does not read was
# handed (`jax.jit`, `jax.custom_vjp`, ... in a module the file imports), with unknown
# arguments: for a kernel importing a large module of its project, most of its analysis. Such a
# run of a function an imported module defined at its top level sees only that module's state
# and the state of the modules it reaches (the *world*: what their top levels made), and
# unknown arguments. While the world is *pristine* (no write since those top levels ran has
# touched it, `Trace._pristine`), the run is a function of the world's code, which astroid
# keeps, node for node, while its files are unchanged. The run then cannot reach the analysed
# file's objects, so it cannot run its code, and what it leaves is all in its `EscapedRun`:
# the sites it recorded (other files' calls, never reported here, but rules relate sites
# through the nodes they name: a union another run also builds, a kernel another run applies),
# the functions it ran, its steps, the modules it loaded and the closures it let escape, whose
# own runs (in the later rounds) are kept beside it (`Slot`). The next trace with the same
# world replays such a run instead of making it, exactly where the run would have been made.
# A run that wrote to anything it did not make, rebound names (`global`, `nonlocal`), was
# cut short by the budget, or loaded a project module (on replay it may be the analysed file,
# or changed) is not kept; nor is any run of a trace that, after it, wrote to the world or to
# what a kept run made (a closure it let escape, run later): the sites show the objects as they
# end. A replay that comes to a closure whose run was not kept (the recording trace had run its
# function before its turn, through another closure) runs that closure there, as a trace making
# the run would; if that run writes to what the kept run made, every kept run is forgotten. A
# replay that cannot go on starts the trace over without replays (`Restart`).

MAX_SHARED_RUNS = 4096  # runs kept by their closure
MAX_KEPT_CALLS = 4096  # calls kept (`kept_calls`: each keeps the objects of the trace that made it)
MAX_WORLDS = 512  # worlds whose runs are kept (each keeps objects of the traces that made them: a
# 6,215-line module's runs, four worlds as its functions load our stubs, keep 170 KB). Each file
# of a package is analysed in its own worlds (two to three for tokamax's files, whose package
# imports them all): with 64, a run over tokamax's 64 files analysed in one process made its
# runs again (365 ms a file, 91 ms with room for its 141 worlds; peak memory 666 MB, 420 MB)


@dataclass(eq=False)
class EscapedRun:
    world: tuple[nodes.Module, ...]  # the modules loaded when it started, in order
    sites: list[Site]
    executed: set[nodes.NodeNG]
    known: set[nodes.NodeNG]
    steps: int
    loaded: tuple[nodes.Module, ...]  # the modules it loaded, in order
    children: list[Slot | Twin]  # what it let escape, in order
    imports: bool = False  # it ran an import statement (what a name gives may be another module)


@dataclass(eq=False)
class Slot:
    """A closure a kept run made and let escape: its own run, once made (None: not kept; a
    replay runs the closure then)."""

    closure: o.Closure
    run: EscapedRun | None = None

    @property
    def node(self) -> nodes.NodeNG:
        return self.closure.node


@dataclass(frozen=True)
class Twin:
    """A function a module's top level defined that a kept run let escape (this trace's twin
    of it escapes on replay)."""

    node: nodes.NodeNG


def read_only(module: nodes.Module) -> bool:
    """Is the module one of our stubs or an installed library's (never the analysed file, and
    its tree the same while the process runs), not a project module a kept run may not load?"""
    return bool(getattr(module, "pallas_trace_stub", None) or getattr(module, "pallas_library", None))


def on_its_own(run: EscapedRun, seen: set[int] | None = None) -> bool:
    """Can the run be replayed in any trace that meets its closure: did no kept run of it
    and of the closures it let escape run an import statement (what a name gives there may
    be the file analysed there)? (A closure whose run was not kept runs on replay.)"""
    seen = set() if seen is None else seen
    if id(run) in seen:
        return True
    seen.add(id(run))
    return not run.imports and all(isinstance(child, Twin) or child.run is None or on_its_own(child.run, seen)
                                   for child in run.children)


@dataclass(eq=False)
class Replay:
    """In `Interpreter.escaped` on replay: a closure the replayed run made and let escape."""

    node: nodes.NodeNG
    slot: Slot
    shared: bool = False  # made by a run replayed for its closure (`KeptRuns.shared_run`)


class Restart(Exception):
    """A replay needs a run that was not kept: the trace starts over without replays."""


class KeptRuns:
    """The kept runs of imported modules' functions, by world and function node (one per
    process: the trees of project modules are the process's, `engine._keep_project_modules`)."""

    def __init__(self, max_worlds: int = MAX_WORLDS) -> None:
        self._worlds: dict[tuple[nodes.Module, ...], dict[nodes.NodeNG, EscapedRun]] = {}
        # ... and by the closure itself, one of a module kept from trace to trace (`world`): the
        # same object in a trace of another file, its run is the same there (what it reaches is
        # the same objects, while nothing wrote to them), whatever else that trace loaded
        self._shared: dict[int, tuple[o.Closure, EscapedRun]] = {}
        # ... and the runs of calls into imported modules' functions (`kept_calls`), by the call
        self._calls: dict[tuple[Any, ...], KeptCall] = {}
        self._lock = threading.Lock()
        self._max_worlds = max_worlds
        self.replayed = 0  # runs the last trace replayed (for tests and benchmarks)
        self.restarts = 0  # traces started over, in all

    def get(self, world: tuple[nodes.Module, ...], node: nodes.NodeNG) -> EscapedRun | None:
        with self._lock:
            runs = self._worlds.get(world)
            return runs.get(node) if runs is not None else None

    def keep(self, made: dict[tuple[tuple[nodes.Module, ...], nodes.NodeNG], EscapedRun]) -> None:
        with self._lock:
            for (world, node), run in made.items():
                runs = self._worlds.pop(world, None)
                if runs is None:
                    runs = {}
                    while len(self._worlds) >= self._max_worlds:
                        del self._worlds[next(iter(self._worlds))]
                self._worlds[world] = runs  # the most recently used last
                runs[node] = run

    def shared_run(self, closure: o.Closure) -> EscapedRun | None:
        with self._lock:
            found = self._shared.get(id(closure))
            return found[1] if found is not None and found[0] is closure else None

    def keep_shared(self, runs: list[tuple[o.Closure, EscapedRun]]) -> None:
        with self._lock:
            for closure, run in runs:
                self._shared.pop(id(closure), None)
                while len(self._shared) >= MAX_SHARED_RUNS:
                    del self._shared[next(iter(self._shared))]
                self._shared[id(closure)] = (closure, run)

    def call(self, key: tuple[Any, ...]) -> KeptCall | None:
        with self._lock:
            return self._calls.get(key)

    def keep_calls(self, made: list[tuple[tuple[Any, ...], KeptCall]]) -> None:
        with self._lock:
            for key, kept in made:
                self._calls.pop(key, None)
                while len(self._calls) >= MAX_KEPT_CALLS:
                    del self._calls[next(iter(self._calls))]
                self._calls[key] = kept

    def forget_calls(self) -> None:
        with self._lock:
            self._calls.clear()

    def drop(self, world: tuple[nodes.Module, ...], node: nodes.NodeNG) -> None:
        with self._lock:
            runs = self._worlds.get(world)
            if runs is not None:
                runs.pop(node, None)

    def clear(self) -> None:
        with self._lock:
            self._worlds.clear()
            self._shared.clear()
            self._calls.clear()


KEPT_RUNS = KeptRuns()
