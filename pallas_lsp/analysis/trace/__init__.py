"""Abstract tracing of a kernel file: what every API call in it receives, in every context.

`Trace(module, flow)` runs the module's top level, then every function nobody in it calls (an
entry point: its parameters are inputs, `Free`), then functions handed to code we do not read
(with unknown arguments; such a run of a function an imported module defined is replayed from
an earlier trace while the modules' state is as their top levels made it, `reuse.EscapedRun`).
The result is the list of `Site`s: each evaluation of an API call the rules judge, with its
bound arguments, the path guard it ran under and the calls that led there. Rules ask `sites(kind)` and decide with `decide` (below) and `objects`' helpers.
"""

from __future__ import annotations

from collections import Counter
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from astroid import nodes

from ..project import Project
from ..values import UNKNOWN, Var
from . import callers, decide, kept_calls, objects, partials, refusals, reuse, stubs, world
from .interp import ABSENT, EntryExhausted, Interpreter, Site
from .resolver import Resolver, _library_module

if TYPE_CHECKING:
    from ..prefilter import ReadNames

__all__ = ["Trace", "Site", "objects"]

MAX_ENVIRONMENTS = 8  # closures of one function of the analysed file run after it escaped, per round
MAX_ENTRY_ROUNDS = 4
# A callable an entry point returned with its arguments (`return matmul, (a, b)`): the guard
# of the path that returned it, the callable, the arguments (`_handed_back`)
_HandedBack = tuple[objects.Guard, Any, tuple[Any, ...] | list[Any]]
# Steps one entry point may take (a 9,800-line test file of JAX's takes 56,000 in all), and
# all entries of a file together: past them, what was recorded stands and the rest is silent.
STEPS_PER_ENTRY = 100_000
STEPS_PER_FILE = 600_000


class Trace:
    def __init__(self, module: nodes.Module, flow: Project, names: ReadNames,
                 units: reuse.Units | None = None) -> None:
        self.module = module
        self._names = names  # the names the module reads and calls (from the prefilter's walk)
        self.flow = flow  # the analysis's `Project`: its imports, budget and root directory
        self.callers = callers.Callers(flow.project_root and module.file, flow.project_root)
        self.uses = partials.Uses(module)  # what `functools.partial`s of its functions bind
        # `units`: an editor's session keeps each entry point's run for the next trace of the
        # file, and replays those that cannot have changed (`reuse`)
        self._units = units
        self._replaying = True  # the runs of imported modules' functions kept by other traces
        # ... and other modules' top levels (`world`); an attempt made again may have written
        # to them, so it makes its own
        self._kept_modules: world.Kept | None = world.KEPT_MODULES.take()
        self.interp = self._interpreter()
        try:
            while True:  # at most three attempts: each exception below comes once
                try:
                    self._run()
                    break
                except reuse.Diverged:  # a unit run again wrote to what kept ones read
                    assert units is not None
                    self._units = units = units.fresh()
                except reuse.Restart:  # a replayed run's closure needs a run that was not kept
                    reuse.KEPT_RUNS.restarts += 1
                    self._replaying = False
                    if units is not None:
                        self._units = units = units.fresh()
                self._kept_modules = None
                self.interp = self._interpreter()
        except BaseException:  # cancelled, out of budget: the next trace may replay what this one had
            if units is not None:
                units.abandon()
            self._give_back_modules()  # (and take the modules it did not write to)
            raise
        if units is not None:
            units.store(self.interp.modules)
        self._give_back_modules()

    def _give_back_modules(self) -> None:
        """The module runs this trace used and made go back for the next trace, unless it
        wrote to what they made (else the next trace makes them again)."""
        interp = self.interp
        held = interp.world
        assert held is not None
        if not interp.world_clean:
            return
        writes = interp.loose_writes + held.other_writes(interp)
        if writes:
            shared = held.reachable(held.shared())
            if any(id(write) in shared for write in writes):
                return
        world.KEPT_MODULES.give_back(held.runs())

    def _interpreter(self) -> Interpreter:
        flow = self.flow
        # the bookkeeping of kept runs (`reuse.EscapedRun`), for this attempt at the trace
        self._made: dict[tuple[tuple[nodes.Module, ...], nodes.NodeNG], reuse.EscapedRun] = {}
        self._made_closures: dict[int, objects.Closure] = {}  # ... by id: the closure each was made for
        self._world_of: tuple[int, tuple[nodes.Module, ...]] = (-1, ())
        self._slots: dict[int, reuse.Slot] = {}  # closures kept runs let escape, by id (the slot holds the closure)
        self._kept_made: set[int] = set()  # closures kept runs made (their replays make them too)
        self._world_ids: set[int] = set()  # what the world reaches (`_pristine`)
        self._world_size = (-1, -1)  # ... when it had this many modules (and so many from the text)
        self._checked = 0  # the loose writes found not to touch it
        self._tainted = False  # a closure a run let escape wrote to what the run made
        self._since: tuple[int, tuple[nodes.Module, ...]] | None = None  # when the first run was kept or replayed
        self.replayed = 0
        # the sites replays added (of kept runs and kept calls): neither ran code of the analysed
        # file (nor of a module made from its text), so none of them, nor what they relate to,
        # is reported here
        self.kept_sites: set[int] = set()
        self._own_nodes: dict[nodes.NodeNG, bool] = {}  # `_own`
        self._own_made: list[nodes.NodeNG] = []  # `_own_functions`
        # `_partials_not_called`: the partials looked at, held (a freed one's id may be another's)
        self._partials_run: dict[int, objects.Partial] = {}
        self._partials_of: dict[nodes.NodeNG, list[objects.Partial]] = {}  # ... run, by function
        self._partials_skipped: set[nodes.NodeNG] = set()  # ... functions of partials not run (`_informative`)
        self._functions_seen = 0
        self._superseded: tuple[int, frozenset[int]] = (-1, frozenset())  # `superseded`: (sites seen, runs)
        self._by_kind: tuple[int, dict[str, list[Site]]] = (-1, {})  # `sites`: (sites seen, sites by kind)
        interp = Interpreter(self.module, Resolver(flow), flow.deadline, flow.cancelled)
        interp.world = world.World(self._kept_modules)
        interp.refused = lambda site: refusals.refused(site, interp.sites)
        self.keeper = interp.keeper = kept_calls.CallKeeper(self)
        return interp

    def sites(self, kind: str) -> list[Site]:
        """The sites of one kind, without those of superseded runs (each build stays: a run or
        not). The rules ask for each kind again and again once the trace is over: the sites
        are sorted by kind once for as long as none is added."""
        sites = self.interp.sites
        count, by_kind = self._by_kind
        if count != len(sites):
            superseded = self._superseded_runs()
            by_kind = {}
            for site in sites:
                if not superseded or site.kind == "kernel" or not self.superseded(site):
                    by_kind.setdefault(site.kind, []).append(site)
            self._by_kind = (len(sites), by_kind)
        return list(by_kind.get(kind, ()))

    def superseded(self, site: Site) -> bool:
        """Is `site` a run of a kernel body made where the kernel was built, which stands for
        applications the trace cannot see, of a kernel it then saw applied, or was it recorded
        in one? JAX traces the body there (a `pallas_call`'s whole blocks with the operands'
        shapes): that run is the kernel's. (The build stays: what the build call itself does
        happened.)"""
        run = site if site.kind == "kernel" else site.run
        return run is not None and id(run) in self._superseded_runs()

    def _superseded_runs(self) -> frozenset[int]:
        sites = self.interp.sites
        if self._superseded[0] != len(sites):
            applied = {id(site.value) for site in sites if site.kind == "kernel" and site.built is not None}
            self._superseded = (len(sites), frozenset(
                id(site) for site in sites if site.kind == "kernel" and site.built is None and site.value is not None
                and id(site.value) in applied))
        return self._superseded[1]

    # -- entries ---------------------------------------------------------------------------

    def _bounded(self, run: Callable[..., object], *args: Any) -> None:
        interp = self.interp
        interp.entry_limit = min(interp._steps + STEPS_PER_ENTRY, STEPS_PER_FILE)
        interp._memo = {}  # each run on its own: what it records is not what another ran before
        interp.memo_epochs = {}
        interp.cache_answers = {}
        try:
            run(*args)
        except EntryExhausted:
            self.exhausted += 1
        finally:
            interp.entry_limit = float("inf")

    def _maybe_run(self, run: Callable[..., object], *args: Any) -> None:
        """`_bounded`, for code that may never run (an entry point nobody here calls, a function
        handed to code we do not read): what it writes to the classes and modules that the
        module's top level left stays its own, and they are as they were for the next one."""
        interp = self.interp
        outer, interp.shared_log = interp.shared_log, []
        try:
            self._bounded(run, *args)
        finally:
            for held, name, previous in reversed(interp.shared_log):
                if previous is ABSENT:
                    held.pop(name, None)
                else:
                    held[name] = previous
            interp.shared_log = outer

    def _run(self) -> None:
        interp = self.interp
        self.exhausted = 0  # entry points not followed to the end
        found: list[objects.ModuleObj] = []
        self._bounded(lambda: found.append(interp.module(self.module)))
        if not found:
            return
        module = found[0]
        units = self._units
        if units is not None:
            units.after_module(self, self._names)
            preload = [node for node in units.preload() if node not in interp.modules
                       and (hasattr(node, "pallas_trace_stub") or world.is_current(node))]  # (made once per process)
            for node in preload:
                self._bounded(interp.module, node, False)
            if preload:
                units.after_preload(self)
        top_poisoned = frozenset(interp.poisoned)
        deferred, elsewhere = [], []
        for func, owner in _top_level_functions(self.module):
            if func in interp.executed:
                continue
            if func.name in self._names.referenced or self._instantiated_here(owner, module):
                deferred.append((func, owner))
            elif not self._free(func, owner):
                # (another module uses it: when that module's functions handed to code we do
                # not read call it, below, that run with their arguments is its run; a first
                # run of its own, its parameters unknown, doubled the trace of tokamax's kernels)
                elsewhere.append((func, owner))
            else:
                self._entry_unit(func, owner, module, top_poisoned, "entry")
        # Closures nobody here calls (a case returns `lambda x: build(x, False)`) may be the
        # users of the deferred functions: they run first, their parameters inputs as an entry
        # point's are, so that what those users pass counts. A partial a module-level name
        # holds waits for its users as a deferred function does (`narrow(a, b, block_n=128)`
        # overrides what `narrow` binds).
        held = {id(value) for name, value in module.env.vars.items()
                if name in self._names.referenced and isinstance(value, objects.Partial)}
        self._run_escaped(skip={func for func, _ in deferred + elsewhere}, free=True, held=held)
        for func, owner in elsewhere:  # (not reached by those runs: an entry point after all)
            if func not in interp.executed:
                self._entry_unit(func, owner, module, top_poisoned, "entry")
        # Used here, but never reached: run with its parameters as inputs. One the file calls
        # (with arguments the trace could not tell) is not: its callers chose them, not
        # another caller; unless a test framework's marks give it its arguments.
        for func, owner in _users_first(deferred, interp._names_read):
            if (func not in interp.executed or self._parameterized(func)) and not self._run_as_partials(func, owner):
                self._entry_unit(func, owner, module, top_poisoned, "deferred")
        self._run_escaped(free_partials=held)
        # Sites show objects as the trace leaves them: kept or replayed runs are what making
        # them gives only if nothing the trace did after the first of them wrote to what their
        # sites show: the world (still pristine, and no module's top level run since wrote to
        # what the world was then), or what they made (a closure they let escape, run later).
        keeper = self.keeper
        if not keeper.untouched():
            raise reuse.Restart()
        if self._since is not None and (self._tainted or not self._pristine() or not self._settled()):
            if self.replayed or keeper.replayed:
                raise reuse.Restart()
            self._made = {}
        else:
            keeper.keep()
        if self._made:
            reuse.KEPT_RUNS.keep(self._made)
            self._keep_shared(list(self._made.values()))
        reuse.KEPT_RUNS.replayed = self.replayed

    def _entry_unit(self, func: nodes.FunctionDef, owner: nodes.ClassDef | None, module: objects.ModuleObj,
                    top_poisoned: frozenset[int], kind: str) -> None:
        """Run an entry point as a unit: on its own (the containers other entry points
        poisoned are theirs), or replayed from the last trace of the file (`reuse`)."""
        interp, units = self.interp, self._units
        free = self._free(func, owner)
        bound = self._bound(func, owner, kind) if free else {}
        key = (kind, func, free, tuple(sorted(bound.items())))
        if units is not None and units.replay(self, key, interp._steps + STEPS_PER_ENTRY <= STEPS_PER_FILE):
            return
        mark = units.start(self) if units is not None else None
        outer = interp.poisoned
        interp.poisoned = set(top_poisoned)
        try:
            self._maybe_run(self._entry, func, owner, module, free, bound)
        finally:
            own = interp.poisoned - top_poisoned
            interp.poisoned = outer
            outer |= own
        if units is not None and mark is not None:
            units.finish(self, key, mark, own)

    def _parameterized(self, func: nodes.FunctionDef) -> bool:
        """Do a test framework's marks give the function its arguments (`_cases`)?"""
        closures = self.interp.closures.get(func) or []
        return bool(closures) and bool(getattr(closures[0], "parameters", ()))

    def _free(self, func: nodes.FunctionDef, owner: nodes.ClassDef | None) -> bool:
        """Are an entry point's parameters inputs? Other modules that call it decide its
        arguments (their analyses follow it with them): then they are unknown, not inputs a
        finding could be "when" about."""
        arguments = func.args
        names = [arg.name for arg in (arguments.posonlyargs or []) + (arguments.args or []) + arguments.kwonlyargs]
        return not (names and self.callers.used_elsewhere((owner or func).name))

    def _bound(self, func: nodes.FunctionDef, owner: nodes.ClassDef | None, kind: str) -> dict[str, Any]:
        """What the `functools.partial`s that are a deferred function's only uses bind
        (`partials.Uses.bound`); an entry point nobody here reads has no uses."""
        if owner is not None or kind != "deferred":
            return {}
        return self.uses.bound(func)

    def _run_escaped(self, skip: frozenset[nodes.NodeNG] | set[nodes.NodeNG] = frozenset(), free: bool = False,
                     held: frozenset[int] | set[int] = frozenset(),
                     free_partials: frozenset[int] | set[int] = frozenset()) -> None:
        """Functions handed to code we do not read, and closures never called here, with
        unknown arguments (a few rounds: running them may let more escape); ``free``: closures
        never called (not the escaped ones) and the partials nothing called take inputs
        (`Free`) instead; ``held``: partials (by id) left for a later call, as deferred functions
        are; ``free_partials``: partials that take inputs whatever ``free`` says (those
        module-level names hold, which waited for their users: `_run`)."""
        interp = self.interp
        for _ in range(MAX_ENTRY_ROUNDS):
            escaped = [c for c in interp.escaped if c.node not in interp.executed]
            never = [interp.closures[node][0] for node in self._own_functions()
                     if node not in interp.executed and node not in skip]
            pending = escaped + never
            if not pending and not self._partials_not_called(held, peek=True):
                break
            interp.escaped = []
            choice = _OneClosure(pending, self._rank)
            seen = set()
            for closure in pending:
                if closure.node in interp.executed or closure.node in seen:
                    continue
                seen.add(closure.node)
                closure = choice.of(closure.node, interp.escaped)
                inputs = free and closure not in escaped  # (a closure never called: its parameters are inputs)
                if isinstance(closure, reuse.Replay):
                    unkept = self._replay(closure)
                    if unkept is not None:
                        writes = len(interp.loose_writes)
                        self._run_one(unkept, inputs)
                        self._kept_objects_unchanged(unkept, writes)
                    continue
                recording = self._kept_or_recording(closure)
                if recording is True:
                    continue  # replayed
                key = reuse.escaped_key(self, closure, inputs) if self._units is not None else None
                if key is not None and self._replayed_unit(key, recording):
                    continue
                self._run_one(closure, inputs, key)
                if recording:
                    self._recorded(closure, recording)
            self._run_other_environments(escaped, False)
            self._run_other_environments([closure for first in never for closure in interp.closures[first.node]], free)
            for partial in self._partials_not_called(held):  # (after the round's closures: they may call some)
                self._run_partial(partial, free or id(partial) in free_partials)

    def _run_other_environments(self, closures: list[objects.Closure], inputs: bool) -> None:
        """The analysed file's closures of one function that the round ran once, made with other
        values in their environments (`lambda a, b: matmul(a, b, collective)` returned for each
        case), each run too: what one does says nothing of the others (a few per function;
        other modules' functions run once, as their kept runs are made)."""
        interp = self.interp
        ran: dict[nodes.NodeNG, list[Any]] = {}
        for closure in closures:
            if isinstance(closure, reuse.Replay) or closure.env is None or not self._own(closure.node):
                continue
            environment = interp._free_values(closure.node, closure.env)
            runs = ran.setdefault(closure.node, [])
            if not runs:  # (the closure the round ran: the first of them)
                runs.append(environment)
            if environment in runs or len(runs) >= MAX_ENVIRONMENTS:
                continue
            runs.append(environment)
            self._run_one(closure, inputs)

    def _partials_not_called(self, held: frozenset[int] | set[int] = frozenset(), peek: bool = False
                             ) -> list[objects.Partial]:
        """The partials of the analysed module's functions nothing has called, not run yet (a
        few per function: a loop may make one per setting), nor wrapped by another partial
        (`partial(partial(f, rows=96), rows=128)` runs as the outer one binds); `peek`: are
        there any (nothing is marked as run); `held`: the ids of partials left out (they wait for their users)."""
        interp = self.interp
        called = {id(partial) for partial in interp.partials_called}
        wrapped = {id(partial.func) for partial in interp.partials if isinstance(partial.func, objects.Partial)}
        found = []
        for partial in interp.partials:
            target = objects.partial_target(partial)
            if id(partial) in called or id(partial) in self._partials_run or id(partial) in wrapped or target is None \
                    or id(partial) in held:
                continue
            if not any(_informative(value) for value in _bound_values(partial)):
                self._partials_skipped.add(target.node)
                continue  # (the function's own run, its parameters inputs, knows more)
            if peek:
                return [partial]
            made = self._partials_of.setdefault(target.node, [])
            if len(made) < MAX_ENVIRONMENTS or partial.handed_back:  # (a call a case hands back: each is made)
                made.append(partial)
                found.append(partial)
            self._partials_run[id(partial)] = partial
        return found

    def _run_partial(self, partial: objects.Partial, inputs: bool) -> None:
        """A partial nothing called (`functools.partial(matmul, config=config)` returned for
        a case, or handed to code we do not read): its function runs with what it binds, its
        other parameters unknown (`inputs`: inputs, as a closure never called takes)."""
        units = self._units
        mark = units.start(self) if units is not None else None
        target = objects.partial_target(partial)
        assert target is not None
        self._maybe_run(self._call_partial, partial, target, inputs)
        if units is not None and mark is not None:
            units.finish(self, None, mark, set(), target.env)

    def _run_as_partials(self, func: nodes.FunctionDef, owner: nodes.ClassDef | None) -> bool:
        """Is every use of the function a `functools.partial` of it, each run with what it binds
        (`_run_partial`)? Then no call leaves those parameters to the caller: a run with them
        as inputs would report what no use does."""
        return (owner is None and func in self._partials_of and func not in self._partials_skipped
                and self.uses.only_partials(func))

    def _call_partial(self, partial: objects.Partial, target: objects.Closure, free: bool) -> None:
        """Call the partial with the parameters it leaves as an entry point's are (inputs,
        at their defaults or not, with `free`; else unknown). A lambda handed back with its
        arguments (`(lambda q, causal=True: f(q, causal)), (q,)`) is called with them alone:
        nobody else can call it, so its other parameters are their defaults."""
        args, keywords = _bindings(partial)
        arguments = target.node.args
        if arguments.args is None:
            return
        positional = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args]
        names = positional + [arg.name for arg in arguments.kwonlyargs]
        bound = set(positional[:len(args)]) | set(keywords)
        if isinstance(target.node, nodes.Lambda) and partial.handed_back:
            bound |= set(objects.default_nodes(target.node.args))  # (left to their defaults)
        interp, node = self.interp, target.node
        preset = self._inputs(node, None, names, interp.modules[self.module], free=free, bound={},
                              defaults=getattr(target, "defaults", {}))
        known = node in interp.known_calls
        interp.invoke(partial, [], {}, node, preset={name: value for name, value in preset.items() if name not in bound})
        if not known:  # (a run of the partial is no call of the function: its other uses still run it)
            interp.known_calls.discard(node)

    def _own_functions(self) -> list[nodes.NodeNG]:
        """The analysed module's functions that closures were made of, in the order the first
        of each was made (`interp.closures` only grows: each new function is asked about once)."""
        closures = self.interp.closures
        if len(closures) != self._functions_seen:
            self._own_made.extend(node for node in islice(closures, self._functions_seen, None) if self._own(node))
            self._functions_seen = len(closures)
        return self._own_made

    def _own(self, node: nodes.NodeNG) -> bool:
        """Is the function node the analysed module's? (Asked in each round about every
        function any loaded module defined that has not run: the answers are kept.)"""
        own = self._own_nodes.get(node)
        if own is None:
            own = self._own_nodes[node] = node.root() is self.module
        return own

    def _run_one(self, closure: objects.Closure, inputs: bool, key: tuple[Any, ...] | None = None) -> None:
        """Run a closure with unknown arguments (``inputs``: `Free` ones), as a unit of an
        editor's session (`reuse.Units`; `key`: one the next trace may replay)."""
        units, interp = self._units, self.interp
        mark = units.start(self) if units is not None else None
        before = set(interp.poisoned) if key is not None else None  # (what a kept run poisons, its replay does)
        self._maybe_run(_run_unknown, interp, closure, inputs)
        if units is not None and mark is not None:
            units.finish(self, key, mark, set() if before is None else interp.poisoned - before, closure.env)

    def _replayed_unit(self, key: tuple[Any, ...], recording: bool | tuple[Any, ...] | None) -> bool:
        """Replay the last trace's run of a module-level function after the entry points
        (`reuse.escaped_key`) if it is the run this trace would make: tokamax's `_fwd` reads
        the kernel module an editor is changing, so it is never kept for other traces
        (`_kept_or_recording`), but while the code it runs is unchanged its run is the same.
        A run being recorded for other traces is not recorded from a replay."""
        units = self._units
        assert units is not None
        interp = self.interp
        if not units.replay(self, key, interp._steps + STEPS_PER_ENTRY <= STEPS_PER_FILE):
            return False
        if isinstance(recording, tuple):
            self._functions_back(recording)
        return True

    def _rank(self, closure: objects.Closure) -> int:
        """Which closure of a function to run (`_OneClosure`): a kept run's (`Replay`), else
        one a run being kept let escape, else any."""
        return 2 if isinstance(closure, reuse.Replay) else int(id(closure) in self._slots)

    # -- runs of imported modules' functions, kept across analyses (`reuse.EscapedRun`) ----

    def _world(self) -> tuple[nodes.Module, ...]:
        """The modules loaded, but the analysed one, in load order (made again when their
        number changes: modules are only ever added)."""
        modules = self.interp.modules
        if self._world_of[0] != len(modules):
            self._world_of = (len(modules), tuple(node for node in modules if node is not self.module))
        return self._world_of[1]

    def _pristine(self) -> bool:
        """Is the state the other modules' top levels made still only theirs: no write
        since (outside a top level) touched what their frames reach?"""
        interp = self.interp
        if not interp.world_clean:
            return False
        loose = interp.loose_writes
        size = (len(interp.modules), len(interp.from_text))
        if size != self._world_size:
            if not loose:
                return True
            assert interp.world is not None
            self._world_ids = interp.world.reachable(
                (module for node, module in interp.modules.items() if node not in interp.from_text),
                self._from_text())
            self._world_size = size
            self._checked = 0
        ids = self._world_ids
        for write in loose[self._checked:]:
            if id(write) in ids:
                interp.world_clean = False
                return False
        self._checked = len(loose)
        return True

    def _from_text(self) -> set[int]:
        """The objects and frames of the modules whose state the analysed file's text makes
        (`Interpreter.from_text`): not the world's (what they hold is theirs unless the world
        reaches it too; a run that reads or runs them is not kept)."""
        interp = self.interp
        found = [interp.modules[node] for node in interp.from_text if node in interp.modules]
        return {id(module) for module in found} | {id(module.env) for module in found}

    def _mark(self) -> None:
        if self._since is None:
            self._since = (len(self.interp.construction_writes), self._world())

    def _settled(self) -> bool:
        """Did no module's top level run since the first kept or replayed run write to what
        the modules loaded then reach?"""
        assert self._since is not None
        interp = self.interp
        start, world = self._since
        writes = interp.construction_writes[start:]
        if not writes:
            return True
        assert interp.world is not None
        ids = interp.world.reachable(interp.modules[node] for node in world)
        return not any(id(write) in ids for write in writes)

    def _top_level_function(self, closure: objects.Closure) -> bool:
        """Did another module's top level define this function (the one closure of its
        node in that module's frame)?"""
        interp = self.interp
        node = closure.node
        root = node.root()
        if root is self.module or closure.stub or closure.env is None:
            return False
        module = interp.modules.get(root)
        if module is None or closure.env is not module.env:
            return False
        return sum(made.env is module.env for made in interp.closures.get(node, ())) == 1

    def _twin(self, node: nodes.NodeNG) -> objects.Closure:
        module = self.interp.modules.get(node.root())
        found = [made for made in self.interp.closures.get(node, ()) if module is not None and made.env is module.env]
        if len(found) != 1:
            raise reuse.Restart()
        return found[0]

    def _fits(self, run: reuse.EscapedRun) -> bool:
        """Would the run be made whole with the steps left (as it was when kept), and load
        the trees it loaded (a library module's is read again once the reader's cache lets it
        go; our stubs' are built once)?"""
        return run.steps <= STEPS_PER_ENTRY and self.interp._steps + run.steps <= STEPS_PER_FILE and all(
            _library_module(node.pallas_library) is node for node in run.loaded  # type: ignore[attr-defined]
            if getattr(node, "pallas_library", None))

    def _kept_or_recording(self, closure: objects.Closure) -> bool | tuple[Any, ...] | None:
        """True: the closure's run was replayed; a mark: run it and keep the run; None:
        just run it."""
        slot = self._slots.get(id(closure))
        if slot is None and not self._top_level_function(closure):
            return None
        if not self._pristine():
            return None
        world = self._world()
        if slot is None and self._replaying:
            run = reuse.KEPT_RUNS.shared_run(closure)
            if run is not None and self._fits(run):
                self._apply(run, shared=True)
                return True
            run = reuse.KEPT_RUNS.get(world, closure.node)
            if run is not None and self._fits(run):
                self._apply(run)
                return True
        interp = self.interp
        self._mark()
        mark = (world, slot, len(interp.sites), len(interp.escaped),
                len(interp.closure_log), interp._steps, self.exhausted, len(interp.loose_writes),
                (interp.construction_sites, interp.text_reads), interp.executed, interp.known_calls,
                interp.imports_run)
        interp.executed, interp.known_calls = set(), set()
        return mark

    def _recorded(self, closure: objects.Closure, mark: tuple[Any, ...]) -> None:
        """Keep the run just made, if its world was pristine and it left nothing but what
        `EscapedRun` holds."""
        interp = self.interp
        world, slot, sites, escaped, made, steps, exhausted, loose, constructions, *_, imports = mark
        mine, mine_known = self._functions_back(mark)
        run = self._summary(closure, world, sites, escaped, made, steps, exhausted, loose, constructions,
                            mine, mine_known)
        if run is None:
            return
        run.imports = interp.imports_run != imports
        if slot is None:
            self._made[(world, closure.node)] = run
            self._made_closures[id(run)] = closure
        else:
            slot.run = run

    def _functions_back(self, mark: tuple[Any, ...]) -> tuple[set[nodes.NodeNG], set[nodes.NodeNG]]:
        """The trace's functions (executed, and run with known arguments) that a recording
        set aside take in those of the run recorded, which are returned."""
        interp = self.interp
        *_, executed, known, _imports = mark
        mine, mine_known = interp.executed, interp.known_calls
        executed |= mine
        known |= mine_known
        interp.executed, interp.known_calls = executed, known
        return mine, mine_known

    def _summary(self, closure: objects.Closure, world: tuple[nodes.Module, ...], sites: int, escaped: int,
                 made: int, steps: int, exhausted: int, loose: int, constructions: tuple[int, int],
                 mine: set[nodes.NodeNG], mine_known: set[nodes.NodeNG]) -> reuse.EscapedRun | None:
        interp = self.interp
        if not self._pristine():
            return None
        if self._wrote_into(closure, loose):  # (only to what the run made itself)
            # (what a kept run made that its closures reach: its sites may show it)
            self._tainted = True
            return None
        # (a run that recorded sites in a top level, or read names the analysed file's text made)
        if self.exhausted != exhausted or (interp.construction_sites, interp.text_reads) != constructions:
            return None
        recorded = interp.sites[sites:]
        if any(node.root() in interp.from_text for node in mine) or any(
                decide.reported_at(site, self.module) is not None for site in recorded):
            return None  # (it cannot: the world does not reach this file's objects)
        fresh = {id(made_) for made_ in interp.closure_log[made:]}
        children: list[reuse.Slot | reuse.Twin] = []
        for child in interp.escaped[escaped:]:
            # made by this run, or by a kept run before it (one `__call__`'s run makes a lambda
            # that the `bwd` closure it let escape hands on): its own run is kept in a slot
            if id(child) in fresh or id(child) in self._kept_made:
                known_slot = self._slots.get(id(child))
                if known_slot is None:
                    known_slot = self._slots[id(child)] = reuse.Slot(child)
                children.append(known_slot)
            elif isinstance(child, objects.Closure) and self._top_level_function(child):
                children.append(reuse.Twin(child.node))
            else:
                return None
        before_run = set(world)
        loaded = tuple(node for node in self._world() if node not in before_run)
        if not all(map(reuse.read_only, loaded)):
            # a project module (on replay it may be the analysed file, or its file changed)
            return None
        self._kept_made |= fresh
        return reuse.EscapedRun(world, recorded, mine, mine_known, interp._steps - steps, loaded, children)

    def _keep_shared(self, runs: list[reuse.EscapedRun]) -> None:
        """The runs of closures of modules kept for the next trace (`world`) are kept by
        closure too: a trace of another file that takes the same module replays them, when
        they need nothing else of this trace (`reuse.on_its_own`)."""
        assert self.interp.world is not None
        envs = self.interp.world.shared_envs()
        reuse.KEPT_RUNS.keep_shared([
            (closure, run) for run in runs if (closure := self._made_closures.get(id(run))) is not None
            and id(closure.env) in envs and reuse.on_its_own(run)])

    def _apply(self, run: reuse.EscapedRun, shared: bool = False) -> None:
        """Replay a kept run where it would have been made."""
        interp = self.interp
        self._mark()
        start = interp._steps
        for node in run.loaded:
            self._bounded(interp.module, node)
        interp._steps = start + run.steps
        interp.sites.extend(run.sites)
        self.kept_sites.update(map(id, run.sites))
        interp.executed |= run.executed
        interp.known_calls |= run.known
        replays: dict[int, reuse.Replay] = {}
        for child in run.children:
            if isinstance(child, reuse.Twin):
                interp.escaped.append(self._twin(child.node))
            else:
                interp.escaped.append(replays.setdefault(id(child), reuse.Replay(child.node, child, shared)))
        self.replayed += 1

    def _replay(self, replay: reuse.Replay) -> objects.Closure | None:
        """A closure a replayed run let escape: replay its kept run (None), or start over.
        Its slot has no run when the recording trace had run its function before its turn
        (through another closure); this trace has not, so the closure runs now, as a trace
        making the run would run it, and that run is not kept."""
        run = replay.slot.run
        if not self._pristine():
            raise reuse.Restart()
        if run is None:
            return replay.slot.closure
        if (run.world != self._world() and not replay.shared) or not self._fits(run):
            raise reuse.Restart()
        self._apply(run, replay.shared)
        return None

    def _kept_objects_unchanged(self, closure: objects.Closure, writes: int) -> None:
        """After running a closure a kept run made (`_replay`): did it write only to what it
        made itself? What the kept run made is shared with every trace that replays it: a
        write there spoils them all, so they are forgotten and this trace starts over."""
        if self._wrote_into(closure, writes):
            reuse.KEPT_RUNS.clear()
            raise reuse.Restart()

    def _wrote_into(self, closure: objects.Closure, since: int) -> bool:
        """Did a write since the `since`-th reach what the closure reached before its run,
        beyond the world (a write there is `_pristine`'s to judge)?"""
        written = self.interp.loose_writes[since:]
        if not written:
            return False
        self._pristine()  # (`_world_ids` up to date)
        reached = reuse._reachable([closure], self._world_ids)
        return any(id(write) in reached for write in written)

    def _entry(self, func: nodes.FunctionDef, owner: nodes.ClassDef | None, module: objects.ModuleObj,
               free: bool, bound: dict[str, Any]) -> None:
        interp = self.interp
        closures = interp.closures.get(func)
        if not closures:
            return
        closure = closures[0]
        arguments = func.args
        if arguments.args is None:
            return
        names = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args + arguments.kwonlyargs]
        preset = self._inputs(func, owner, names, module, free=free, bound=bound,
                              defaults=getattr(closure, "defaults", {}))
        if free and owner is not None and isinstance(preset.get(names[0] if names else ""), objects.Instance):
            self._initialise(preset[names[0]], module)
        positional = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args]
        offset = 1 if owner is not None and positional and not _is_static(func) else 0
        for parameters in getattr(closure, "parameters", ()):
            preset.update(_cases(parameters, positional[offset:], names))
        result = interp.run(closure, [], {}, func, preset=preset)
        handed_back = list(_handed_back(result))
        called = {id(func) for _, func, _ in handed_back}  # (called with their arguments: below)
        for item in _handed_on(result):  # (to its caller: code we do not read, which may call it)
            if isinstance(item, (objects.Bound, objects.Instance)) and id(item) not in called:
                interp.escape(item)
        for partial in _calls_handed_back(handed_back):
            self._call_handed_back(partial, free)
        self._apply_handed_back(handed_back)

    def _call_handed_back(self, partial: objects.Partial, free: bool) -> None:
        """A call a case hands back runs now, as its caller makes it once the case has
        returned: with what the case wrote to modules and classes still there (`config.X =
        False; return run, (a, b)`), which `_maybe_run` undoes after the entry."""
        interp, target = self.interp, objects.partial_target(partial)
        assert target is not None
        interp.partials.append(partial)
        if not any(_informative(value) for value in _bound_values(partial)):
            return  # (left to `_partials_not_called`: the function's own run knows more)
        self._partials_run[id(partial)] = partial
        self._partials_of.setdefault(target.node, []).append(partial)
        # (a partial of another module's function is reached from where the case made it)
        made_at = next((inner.made_at for inner in _partials_in(partial) if inner.made_at is not None), None)
        saved = interp.stack
        if made_at is not None and not self._own(target.node):
            interp.stack = interp.stack + [made_at]
        try:
            self._call_partial(partial, target, free)
        finally:
            interp.stack = saved

    def _apply_handed_back(self, handed_back: list[_HandedBack]) -> None:
        """A kernel returned with a tuple of arguments beside it (`return plgpu.kernel(...), (a,
        b)`: a test's case) is applied to them by the caller: JAX traces its body there, with
        its operands counted (`stubs.apply_kernel`: a `*refs` body, a `pallas_call`'s whole
        blocks), on the path that returned it."""
        interp = self.interp
        for guard, kernel, args in handed_back:
            if not isinstance(kernel, objects.Kernel) or kernel.later is None:
                continue
            saved, interp.guard = interp.guard, guard
            try:
                stubs.apply_kernel(interp, kernel, list(args), kernel.node, handed_back=True)
            finally:
                interp.guard = saved
                interp.raised = False

    def _initialise(self, instance: objects.Instance, module: objects.ModuleObj) -> None:
        """An entry's `self` is an instance its class's `__init__` made, with that `__init__`'s
        parameters as inputs: what it sets follows from them (`self.axis = "x" if collective
        else None` beside `self.collective = collective` are one input, not two; `self.collective
        = True` is True). Not when a subclass the trace knows has its own `__init__` (`self` may
        be one of those), nor for classes Python makes otherwise (dataclasses, named tuples,
        enums, a `__new__`): their attributes stay inputs, as do those `__init__` leaves unset.
        Where the analysed module makes instances of the class, those decide `__init__`'s
        arguments, as a function's callers do: its parameters are unknown, not inputs a
        finding could be "when" about."""
        cls, interp = instance.cls, self.interp
        if cls.dataclass:
            self._post_initialise(instance)
            return
        init = stubs.class_attribute(cls, "__init__")
        if not isinstance(init, objects.Closure) or not isinstance(init.node, nodes.FunctionDef) \
                or cls.enum or stubs.is_made_otherwise(interp, cls):
            return
        arguments = init.node.args
        if arguments.args is None or not arguments.args or arguments.vararg or arguments.kwarg:
            return
        names = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args + arguments.kwonlyargs]
        made_here = self._called_here({klass.node.name for klass in [cls, *stubs.subclasses(interp, cls)]})
        preset = self._inputs(init.node, None, names, module, free=not made_here, bound={},
                              defaults=getattr(init, "defaults", {}))
        preset[names[0]] = instance
        interp.run(init, [], {}, init.node, preset=preset)

    def _post_initialise(self, instance: objects.Instance) -> None:
        """A dataclass's `__init__` runs its `__post_init__` (without init-only variables) on
        the instance it made: what that normalises (`if self.rows == 0: object.__setattr__(self,
        "rows", 128)`) is what every instance holds; its fields stay inputs."""
        post = stubs.class_attribute(instance.cls, "__post_init__")
        if not isinstance(post, objects.Closure) or not isinstance(post.node, nodes.FunctionDef):
            return
        arguments = post.node.args
        if arguments.args is None or len(arguments.args) != 1 or arguments.vararg or arguments.kwonlyargs:
            return
        self.interp.run(post, [], {}, post.node, preset={arguments.args[0].name: instance})

    def _instantiated_here(self, owner: nodes.ClassDef | None, module: objects.ModuleObj) -> bool:
        """Does the analysed module make instances of the method's class, or of a subclass of
        it (`TunedKernel()`, whose `rows` property overrides the base's)? Then its method runs
        on those, as the file makes them, before it is run as an entry of its own (on an
        instance of its own class, which the file may never make)."""
        cls = module.env.vars.get(owner.name) if owner is not None else None
        if not isinstance(cls, objects.ClassObj):
            return False
        names = {klass.node.name for klass in [cls, *stubs.subclasses(self.interp, cls)]}
        return self._called_here(names)

    def _called_here(self, names: set[str]) -> bool:
        """Does the analysed module call a name of these (`Builder(True)`)?"""
        return not self._names.called.isdisjoint(names)

    @staticmethod
    def _inputs(func: nodes.FunctionDef | nodes.Lambda, owner: nodes.ClassDef | None, names: list[str],
                module: objects.ModuleObj | None, free: bool, bound: dict[str, Any], defaults: dict[str, Any]
                ) -> dict[str, Any]:
        preset: dict[str, Any] = {
            name: objects.Free(("param", func, name), name) if free else UNKNOWN for name in names}
        if owner is not None and module is not None and names and not _is_static(func):
            cls = module.env.vars.get(owner.name)
            if isinstance(cls, objects.ClassObj):
                # (a dataclass's fields, on an instance other modules make: what they give it)
                preset[names[0]] = objects.Instance(
                    cls, free=objects.Free(("self", owner), names[0]) if free else None,
                    init_unread=not free and cls.dataclass)
            else:
                preset[names[0]] = UNKNOWN
        if free:
            # the defaults as the `def` evaluated them, once (`(96, 128)`, `Config()`, `CONFIG`)
            written = objects.default_nodes(func.args)
            for name, default in defaults.items():
                if name not in written or name in bound:
                    continue  # (a bound parameter never has its default)
                if isinstance(default, bool):
                    preset[name] = _a_bool(_defaulted(preset[name], ("bool", default)))
                elif default is None:
                    preset[name] = _none_or_input(_defaulted(preset[name], ("none",)))
                elif default is UNKNOWN:
                    preset[name] = UNKNOWN  # (what the file runs with is a default we cannot tell)
                elif _usable_default(default):
                    preset[name] = _input_or_default(preset[name], default, written[name])
        for name, values in bound.items():  # every `functools.partial` of the function binds it
            if values is not partials.VARIES:
                preset[name] = _one_of(preset[name], [value for _, value in values])
        return preset


def _cases(parameters: objects.Parameters, positional: list[str], names: list[str]) -> dict[str, Any]:
    """A parameterized test method's arguments: each one of the values its cases give it,
    under the guard that picks the case (cases of one axis exclude each other: case j is
    "not case 0 .. j-1, and case j"; axes combine freely). Nothing when the cases do not
    bind the parameters as Python would (absl raises then), or leave some unbound."""
    found: dict[str, Any] = {}
    for index, axis in enumerate(parameters.axes):
        chain = [Var(("parameterized", parameters.node, index, j), objects.BOOL, label, labels=(_negated(label), label))
                 for j, (_, _, label) in enumerate(axis[:-1])]
        values: dict[str, list[tuple[objects.Guard, Any]]] = {}
        for j, (args, kwargs, _) in enumerate(axis):
            guard = frozenset([(var, False) for var in chain[:j]] + ([(chain[j], True)] if j < len(chain) else []))
            if len(args) > len(positional):
                return {}
            bound = dict(zip(positional, args))
            for name, value in kwargs:
                if name in bound or name not in names:
                    return {}
                bound[name] = value
            for name, value in bound.items():
                values.setdefault(name, []).append((guard, value))
        for name, alternatives in values.items():
            if name in found:
                return {}
            if len(alternatives) == len(axis):
                found[name] = objects.guarded(alternatives)
    return found


def _negated(label: str) -> str:
    """A case's label, not holding: `rows != 96`, `not case (96, 128)`."""
    return label.replace(" == ", " != ", 1) if " == " in label else f"not {label}"


def _input_or_default(free: Any, default: Any, written: nodes.NodeNG) -> Any:
    """An input left at its default is that value: one alternative, under the condition
    `free == default` that the code would test for a literal (so a finding that needs the
    default says "when block_m == 96", "when block_size == (96, 128)"), and for a value an
    expression made (`Config()`, a module's `CONFIG`) under "config is its default `Config()`";
    any other value is still the input, a caller's setting (`_defaulted`). A None default is
    `_none_or_input`, a bool one `_a_bool`."""
    if not isinstance(free, objects.Free):
        return free
    literal, text = _literal(default), written.as_string()
    test = repr(default) if literal else f"default {text}"
    free = _defaulted(free, ("==", test))
    var = objects.equals_var(free, "==", default) if literal else Var(
        ("cond", free.key, "==", test), objects.BOOL, f"{free.label} is its default",
        labels=(f"{free.label} is not its default `{text}`", f"{free.label} is its default `{text}`"))
    return objects.Guarded(((frozenset({(var, True)}), default), (frozenset({(var, False)}), free)))


def _defaulted(free: Any, default: tuple[Any, ...]) -> Any:
    """The input a parameter with a default is: what a setting other than the default needs
    is a caller's to choose (`objects.caller_setting`), and the key says which that is."""
    if not isinstance(free, objects.Free):
        return free
    return objects.Free((*free.key, default), free.label, free.text)


def _none_or_input(free: Any) -> Any:
    """An input whose default is None: None, or (a caller's setting) another value, under
    the variable an `is None` test of it makes."""
    if not isinstance(free, objects.Free):
        return free
    var = objects.none_var(free)
    return objects.Guarded(((frozenset({(var, True)}), None), (frozenset({(var, False)}), free)))


def _a_bool(free: Any) -> Any:
    """An input whose default is a bool: True or False, each under its truth (arithmetic,
    indexing and tests on it are then followed on each path: `num_blocks = 1 + collective`
    decides `num_blocks == 2` where `collective` is True, and a `pl.when(flag)` body is not
    traced where it is False)."""
    return objects.either_bool(free) if isinstance(free, objects.Free) else free


def _usable_default(value: Any) -> bool:
    """Is a parameter's evaluated default a value the trace can stand for it? Not one it could
    not evaluate (UNKNOWN), nor None (`_none_or_input`), nor a bool (`_a_bool`). One that is
    itself an input (a module's value the trace cannot compute) or differs by path is that
    input, or each path's value, where the parameter is left out."""
    return not (value is UNKNOWN or value is None or isinstance(value, bool))


def _literal(value: Any, depth: int = 0) -> bool:
    """A number, a string, or tuples and lists of them (`repr` writes it as the code would)."""
    if type(value) in (int, float, str, bool, type(None)):
        return True
    return type(value) in (tuple, list) and depth < 4 and all(_literal(item, depth + 1) for item in value)


def _one_of(free: Any, values: list[Any]) -> Any:
    """An input the module's partials bind to one of these literals: each under the condition
    `free == value` (so a finding one of them gives says "when block_m == 96"), and that the
    ones before it do not hold (the solver knows nothing of `==`: one setting is one value)."""
    if len(values) == 1:
        return values[0]
    if not isinstance(free, objects.Free) or any(type(value) not in (int, float, str) for value in values):
        return free  # (bools and None: truth and none_var split the input both ways)
    tests = [objects.equals_var(free, "==", value) for value in values]
    return objects.guarded([(frozenset([(test, False) for test in tests[:index]] + [(tests[index], True)]), value)
                            for index, value in enumerate(values)])


class _OneClosure:
    """The closure to run of each function a round of `Trace._run_escaped` runs: a function is
    run once with unknown arguments, whichever closure made it, so the one run is the best
    ranked of those pending or escaped so far in the round, else the first. A kept run's
    `Replay` first: a replay makes the choice its recording made, at the same point. Then one
    that a run being kept let escape: its run is kept too (in its slot), so replays of that
    run replay it rather than run it; the first one pending may be the analysed file's, whose
    run is never kept."""

    def __init__(self, pending: list[objects.Closure], rank: Callable[[objects.Closure], int]) -> None:
        self._rank = rank
        self._best: dict[nodes.NodeNG, objects.Closure] = {}
        self._considered = 0
        self._consider(pending)

    def of(self, node: nodes.NodeNG, escaped: list[objects.Closure]) -> objects.Closure:
        self._consider(escaped[self._considered:])
        self._considered = len(escaped)
        return self._best[node]

    def _consider(self, closures: Iterable[objects.Closure]) -> None:
        best, rank = self._best, self._rank
        for closure in closures:
            held = best.get(closure.node)
            if held is None or rank(closure) > rank(held):
                best[closure.node] = closure


def _run_unknown(interp: Interpreter, closure: objects.Closure, free: bool = False) -> None:
    """Run a closure nobody here calls: its parameters unknown, or (`free`) inputs, at their
    defaults or not, as an entry point's (`Trace._inputs`)."""
    arguments = closure.node.args
    if arguments.args is None:
        return
    names = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args + arguments.kwonlyargs]
    preset = Trace._inputs(closure.node, None, names, None, free=free, bound={},
                           defaults=getattr(closure, "defaults", {}))
    interp.run(closure, [], {}, closure.node, preset=preset)


def _handed_on(value: Any, depth: int = 0) -> Iterator[Any]:
    """What an entry point returns, and the items of the tuples and lists it returns (a case's
    `(fn, args)`), on every path."""
    for _, item in objects.split(value):
        if isinstance(item, (tuple, list)) and depth < 2:
            for element in item:
                yield from _handed_on(element, depth + 1)
        else:
            yield item


def _bindings(partial: objects.Partial) -> tuple[list[Any], dict[str, Any]]:
    """The positional arguments and keywords a partial (of partials) gives its function: an
    inner partial's first, an outer one's keywords over its."""
    args: list[Any] = []
    keywords: dict[str, Any] = {}
    layer: Any = partial
    while isinstance(layer, objects.Partial):
        args[:0] = layer.args
        keywords = {**dict(layer.keywords), **keywords}
        layer = layer.func
    return args, keywords


def _bound_values(partial: objects.Partial) -> list[Any]:
    args, keywords = _bindings(partial)
    return args + list(keywords.values())


def _calls_handed_back(handed_back: list[_HandedBack]) -> Iterator[objects.Partial]:
    """A function of the analysed code returned with a tuple of arguments beside it (`return
    matmul, (a, b)`: a test's case, a benchmark's workload) is a call handed to the caller, who
    makes it: as the uncalled `functools.partial(matmul, a, b)` it amounts to, it runs with
    those arguments (`Trace._partials_not_called`). A callable object (`return Matmul(), (a,
    b)`) or a bound method is called as Python calls it: its class's function with the object
    first."""
    for _, func, args in handed_back:
        func, receiver = _with_receiver(func)
        partial = objects.Partial(func, (*receiver, *args), (), handed_back=True)
        if objects.partial_target(partial) is not None:
            yield partial


def _partials_in(partial: objects.Partial) -> Iterator[objects.Partial]:
    """The partial and those it wraps, outermost first."""
    func: Any = partial
    while isinstance(func, objects.Partial):
        yield func
        func = func.func


def _handed_back(result: Any) -> Iterator[_HandedBack]:
    """The callables an entry point returned with a tuple of arguments beside them (`return
    matmul, (a, b)`), each with its arguments and the guard of the path that returned it."""
    for guard, value in objects.split(result):
        if type(value) is tuple and len(value) == 2 and type(value[1]) in (tuple, list):
            for inner, func in objects.split(value[0]):
                both = objects.conjoin(guard, inner)
                if both is not None:
                    yield both, func, value[1]


def _with_receiver(func: Any) -> tuple[Any, tuple[Any, ...]]:
    """The function a call of `func` runs, and the object it gets first (a bound method's, or a
    callable instance's: its class's `__call__`; a partial of one binds it first)."""
    if isinstance(func, objects.Partial):
        inner, receiver = _with_receiver(func.func)
        return (objects.Partial(inner, (*receiver, *func.args), func.keywords), ()) if receiver else (func, ())
    if isinstance(func, objects.Bound) and isinstance(func.self_value, objects.Instance):
        return func.func, (func.self_value,)
    if isinstance(func, objects.Instance) and func.free is None:
        method = stubs.class_attribute(func.cls, "__call__")
        if isinstance(method, objects.Closure):
            return method, (func,)
    return func, ()


def _informative(value: Any, depth: int = 0) -> bool:
    """Does a value a partial binds say anything (not unknown, nor an object all of whose
    attributes are: a config made in a loop the trace did not unroll)?"""
    if value is UNKNOWN:
        return False
    if isinstance(value, objects.Instance) and value.free is None and value.attributes and depth < 3:
        return any(_informative(item, depth + 1) for item in value.attributes.values())
    return True


def _top_level_functions(module: nodes.Module) -> Iterator[tuple[nodes.FunctionDef, nodes.ClassDef | None]]:
    for statement in module.body:
        if isinstance(statement, nodes.FunctionDef):
            yield statement, None
        elif isinstance(statement, nodes.ClassDef):
            for inner in statement.body:
                if isinstance(inner, nodes.FunctionDef):
                    yield inner, statement


def _users_first(deferred: list[tuple[nodes.FunctionDef, nodes.ClassDef | None]],
                 names_read: Callable[[nodes.FunctionDef], tuple[str, ...]],
                 ) -> Iterator[tuple[nodes.FunctionDef, nodes.ClassDef | None]]:
    """The deferred functions in source order, except that a module-level one comes after the
    deferred functions that read its name (its users): they may call it with known arguments,
    and then it makes no run of its own with its parameters as inputs. (Defined before its
    user, it made that run first, and reported what only arguments nobody passes would do.)
    Where users form a cycle, source order decides."""
    names = {func.name for func, owner in deferred if owner is None}
    reads = [(set(names_read(func)) & names) - {func.name} for func, _ in deferred]
    readers = Counter(name for found in reads for name in found)
    pending = list(range(len(deferred)))
    while pending:
        index = next((i for i in pending if deferred[i][1] is not None or not readers[deferred[i][0].name]),
                     pending[0])
        pending.remove(index)
        readers.subtract(reads[index])
        yield deferred[index]


def _is_static(func: nodes.FunctionDef | nodes.Lambda) -> bool:
    decorators = getattr(func, "decorators", None)  # (a lambda has none)
    return decorators is not None and any(
        d.as_string() in ("staticmethod", "classmethod") for d in decorators.nodes)
