"""Other modules' top levels, kept from one trace to the next (the *world*'s state).

An analysis of any file of a package that imports all its modules (tokamax's `__init__` does)
runs the top levels of about ninety modules before the file's own code: most of the analysis
of a small file. A module's top level is a function of its code and of the modules it reads,
so while astroid keeps their trees (their files unchanged) and nothing wrote to what they made,
the next trace may take the modules as the last one left them instead of running them again.

A `ModuleRun` is what one module's top level added to the interpreter, with the modules it
imported first (`loaded`, in load order, itself first): its frame and theirs, the sites, the
closures made and let escape, the functions run, the containers poisoned, the call memo's
answers, the steps. It is kept when
- none of those modules is made from the analysed file's text (`Interpreter.from_text`), none
  raised at its top level, and the budget did not cut any short. One that imports the
  analysed module without reading its names (tokamax's op modules, in an import cycle with
  their kernel modules) holds the analysed module's object only: that object is kept too,
  and each trace of the file points it at its own tree and frame (`World.analysed_module`).
  A name of the analysed module read before the module binds it (the cycle's top levels
  run while the analysed module's is paused at an import) is a read of its absence, noted
  with the run (`absent`);
- it wrote to nothing but what those top levels made (a registry of a module loaded before
  is another module's state: written, it is not kept);
and it is used in a later trace when each of its modules is the tree astroid (or the library
reader) gives for its name now and none is loaded yet, and each module loaded before that it
read (`deps`) is, in this trace, the very object it read then (so taken from the same kept
runs), each environment variable it read holds what the trace had written there then
(`os.environ["X"] = "0"` before the import makes another module), and the analysed module
binds none of the names it found absent. The runs a trace used or made go back to the store only if the trace wrote to none of
their objects (`Trace._pristine`, and the top levels run in it); else they are dropped and the
next trace makes them again. One trace at a time holds them (`KeptModules.take`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from collections.abc import Container, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeAlias

from astroid import nodes
from astroid.manager import AstroidManager

from .. import brain
from . import objects as o
from .interp import Frame, Site, may_answer
from .resolver import _library_module
from .reuse import _reachable

if TYPE_CHECKING:
    from .interp import Interpreter


@dataclass(eq=False)
class ModuleRun:
    node: nodes.Module
    loaded: tuple[tuple[nodes.Module, o.ModuleObj], ...]  # itself first, then what it imported first
    deps: tuple[tuple[nodes.Module, o.ModuleObj], ...]  # modules loaded before it that it read
    sites: list[Site]
    closures: list[o.Closure]
    escaped: list[Any]
    writes: list[Any]  # to what these top levels made (the trace's `construction_writes`)
    executed: set[nodes.NodeNG]
    known: set[nodes.NodeNG]
    poisoned: set[int]
    repeated: set[int]
    memo: dict[Any, Any]  # (dicts: merged into the trace's with the hashes they hold)
    opaque: dict[Any, Any]
    steps: int
    dropped: int
    construction_sites: int
    requested: set[str]  # the modules astroid was asked for (what the analysis read)
    # the call memo's answers it found made before it (made again without them, or with
    # answers it made itself already there, it would take other steps)
    memo_reads: list[tuple[Any, Any]]
    # the environment variables it read, with what the trace had written to each (`o.UNSET`):
    # a file that sets one before importing the module makes another module
    environment: tuple[tuple[str, Any], ...] = ()
    # the names it read of the analysed module that were not bound then (`absent_read`)
    absent: frozenset[str] = frozenset()


@dataclass(eq=False)
class _Recording:
    node: nodes.Module
    position: int  # its place in `interp.modules`
    lengths: tuple[int, ...]
    before: tuple[set[Any], ...]
    counts: tuple[int, ...]
    requested: set[str]
    deps: dict[nodes.Module, o.ModuleObj] = field(default_factory=dict)
    memo_reads: dict[Any, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    absent: set[str] = field(default_factory=set)


# the runs by module name, what the frames of used runs reach (`World.reachable`), and the
# analysed modules' objects by (name, file) (`World.analysed_module`)
Kept: TypeAlias = ("tuple[dict[str, ModuleRun], dict[frozenset[int], tuple[list[o.ModuleObj], set[int]]], "
                   "dict[tuple[str, str | None], o.ModuleObj]]")
MAX_MODULE_RUNS = 2048  # modules whose runs are kept (each holds the objects its top level made)
MAX_ANALYSED_MODULES = 16  # analysed files whose module objects are kept


class World:
    """One trace's kept module runs: those it may use, and those it makes."""

    def __init__(self, kept: Kept | None) -> None:
        self._kept, self._reach, self._analysed = kept or ({}, {}, {})
        self.analysed: o.ModuleObj | None = None  # this trace's analysed module (`analysed_module`)
        self._taken: set[int] = set()  # the modules of the runs used (what `reachable` keeps)
        self.made: dict[str, ModuleRun] = {}
        self.used: list[ModuleRun] = []
        self._recordings: list[_Recording] = []
        self._position: dict[nodes.Module, int] = {}
        self._accounted: list[tuple[int, int]] = []  # spans of `construction_writes` those runs made

    def analysed_module(self, node: nodes.Module, frame: Frame) -> o.ModuleObj:
        """The analysed module's object: the one the last trace of its file made, pointed at
        this trace's tree and frame. A module whose top level imports it without reading its
        names (tokamax's op modules, in an import cycle with their kernel modules) holds that
        object only, and so stays the same: its run is kept (`end`), and what its functions
        read through the object later is this trace's module."""
        key = (node.name, node.file)
        module = self._analysed.pop(key, None)
        if module is None:
            module = o.ModuleObj(node, frame)
        else:
            module.point_at(node, frame)
        self._analysed[key] = module
        while len(self._analysed) > MAX_ANALYSED_MODULES:
            del self._analysed[next(iter(self._analysed))]
        self.analysed = module
        return module

    def _stops(self) -> set[int]:
        """The analysed modules' objects: what kept runs reach stops there (their frames are
        each trace's own)."""
        return {id(module) for module in self._analysed.values()}

    # -- using kept runs ---------------------------------------------------------------------

    def take(self, interp: Interpreter, node: nodes.Module) -> o.ModuleObj | None:
        """The module as a kept run left it, its effects added to the trace; None to run it."""
        run = self._kept.get(node.name)
        if run is None or run.node is not node or not self._usable(interp, run):
            return None
        start = len(interp.construction_writes)
        for loaded, module in run.loaded:
            self._position[loaded] = len(interp.modules)
            interp.modules[loaded] = module
        interp.sites.extend(run.sites)
        interp.construction_sites += run.construction_sites
        for closure in run.closures:
            interp.closures.setdefault(closure.node, []).append(closure)
        interp.closure_log.extend(run.closures)
        interp.escaped.extend(run.escaped)
        interp.construction_writes.extend(run.writes)
        if interp.writes is not None:
            interp.writes.extend(run.writes)
        interp.executed |= run.executed
        interp.known_calls |= run.known
        interp.poisoned |= run.poisoned
        interp.repeated_refs |= run.repeated
        interp._memo.update(run.memo)
        interp.memo_epochs.update(dict.fromkeys(run.memo, interp.write_epoch))
        interp._opaque.update(run.opaque)
        interp._steps += run.steps
        interp.dropped_raises += run.dropped
        brain.requested(run.requested)
        self._accounted.append((start, len(interp.construction_writes)))
        for recording in self._recordings:  # (a module being recorded imported it)
            recording.deps.update((dep, module) for dep, module in run.deps
                                  if self._position.get(dep, -1) < recording.position)
            recording.absent |= run.absent
        self.used.append(run)
        self._taken.update(id(module) for _, module in run.loaded)
        return run.loaded[0][1]

    def _usable(self, interp: Interpreter, run: ModuleRun) -> bool:
        if interp._steps + run.steps > interp.entry_limit:
            return False  # (made again, the budget would cut it short)
        memo = interp._memo
        if any(key in memo for key in run.memo) or any(memo.get(key) is not answer for key, answer in run.memo_reads):
            return False
        for loaded, _ in run.loaded:
            if loaded in interp.modules or loaded in interp.from_text or not is_current(loaded):
                return False
        if not all(_same_variable(interp.environment.get(name, o.UNSET), seen) for name, seen in run.environment):
            return False
        if run.absent and (self.analysed is None or any(may_answer(self.analysed.env, name) for name in run.absent)):
            return False  # (the analysed module now answers a name it found unbound)
        return all(module is self.analysed or interp.modules.get(dep) is module and dep not in interp.from_text
                   for dep, module in run.deps)

    # -- making them -------------------------------------------------------------------------

    def begin(self, interp: Interpreter, node: nodes.Module) -> _Recording:
        """A module's top level starts (it is the last of `interp.modules`)."""
        position = self._position[node] = len(interp.modules) - 1
        recording = _Recording(
            node, position,
            (len(interp.sites), len(interp.closure_log), len(interp.escaped), len(interp.construction_writes),
             len(interp.loose_writes), len(interp._memo), len(interp._opaque)),
            (interp.executed, interp.known_calls, set(interp.poisoned), set(interp.repeated_refs)),
            (interp._steps, interp.dropped_raises, interp.construction_sites, len(interp.failed_modules)),
            brain.record_requests())
        self._recordings.append(recording)
        # (the functions its top level runs, on their own: merged back into the trace's at the end)
        interp.executed, interp.known_calls = set(), set()
        return recording

    def memo_read(self, key: Any, answer: Any) -> None:
        """A top level being recorded found a call's answer in the call memo."""
        for recording in self._recordings:
            recording.memo_reads.setdefault(key, answer)

    def environment_read(self, name: str, written: Any) -> None:
        """A top level being recorded reads an environment variable the trace wrote `written`
        to (`o.UNSET`: none)."""
        for recording in self._recordings:
            recording.environment.setdefault(name, written)

    def absent_read(self, name: str) -> None:
        """A top level being recorded (and those around it) read a name the analysed module
        has not bound yet."""
        for recording in self._recordings:
            recording.absent.add(name)

    def read(self, node: nodes.Module, module: o.ModuleObj) -> None:
        """A top level being recorded reads a module loaded before it."""
        for recording in self._recordings:
            if self._position.get(node, -1) < recording.position:
                recording.deps[node] = module

    def abandon(self, interp: Interpreter, recording: _Recording) -> tuple[set[nodes.NodeNG], set[nodes.NodeNG]]:
        """The recording stops (the top level ended, or raised past itself): the functions it
        ran go back into the trace's sets, and are returned."""
        self._recordings.remove(recording)
        brain.stop_recording(recording.requested)
        executed, known = recording.before[:2]
        mine = interp.executed, interp.known_calls
        executed |= mine[0]
        known |= mine[1]
        interp.executed, interp.known_calls = executed, known
        return mine

    def end(self, interp: Interpreter, recording: _Recording) -> None:
        """The top level ran to its end: keep what it did, if it may be kept."""
        executed, known = self.abandon(interp, recording)
        sites, closures, escaped, writes, loose, memo, opaque = recording.lengths
        poisoned, repeated = recording.before[2:]
        steps, dropped, construction_sites, failed = recording.counts
        loaded = tuple(list(interp.modules.items())[recording.position:])
        deps = tuple(recording.deps.items())
        made_writes = interp.construction_writes[writes:]
        if not interp.world_clean or len(interp.loose_writes) != loose or len(interp.failed_modules) != failed \
                or any(node in interp.from_text for node, module in loaded + deps if module is not self.analysed) \
                or not all(is_current(node) for node, _ in loaded) \
                or (made_writes and not _own(made_writes, loaded, deps, self._stops())):
            return
        self._accounted.append((writes, len(interp.construction_writes)))
        answers = dict(islice(interp._memo.items(), memo, None))
        made = answers.keys()
        self.made[recording.node.name] = ModuleRun(
            recording.node, loaded, deps, interp.sites[sites:], interp.closure_log[closures:],
            interp.escaped[escaped:], made_writes, executed, known,
            interp.poisoned - poisoned, interp.repeated_refs - repeated, answers,
            dict(islice(interp._opaque.items(), opaque, None)), interp._steps - steps, interp.dropped_raises - dropped,
            interp.construction_sites - construction_sites, recording.requested,
            [(key, answer) for key, answer in recording.memo_reads.items() if key not in made],
            tuple(recording.environment.items()), frozenset(recording.absent))

    # -- after the trace ---------------------------------------------------------------------

    def shared(self) -> list[o.ModuleObj]:
        """The modules of the runs used and made: what the trace may not have written to."""
        return [module for run in (*self.used, *self.made.values()) for _, module in run.loaded]

    def other_writes(self, interp: Interpreter) -> list[Any]:
        """The writes of top levels run in this trace that are not these runs' own."""
        writes = interp.construction_writes
        inside = [False] * len(writes)
        for start, end in self._accounted:
            inside[start:end] = [True] * (end - start)
        return [write for write, accounted in zip(writes, inside) if not accounted]

    def shared_envs(self) -> set[int]:
        """The frames of `shared`."""
        return {id(module.env) for module in self.shared()}

    def runs(self) -> Kept:
        """What goes back: the runs kept and made, those used or made most recently last
        (at most `MAX_MODULE_RUNS`: the runs of a project analysed long ago go first)."""
        runs = dict(self._kept)
        for run in (*self.used, *self.made.values()):
            runs.pop(run.node.name, None)
            runs[run.node.name] = run
        while len(runs) > MAX_MODULE_RUNS:
            del runs[next(iter(runs))]
        # (an analysed module's object holds its last tree and frame: kept only while a run
        # depends on it)
        held = {id(module) for run in runs.values() for _, module in run.deps}
        return runs, self._reach, {key: module for key, module in self._analysed.items() if id(module) in held}

    def reachable(self, modules: Iterable[o.ModuleObj], known: Container[int] = frozenset()) -> set[int]:
        """`reuse._reachable` of the modules' frames (not to be changed). What the modules of
        the runs used reach is found once while they are kept: nothing writes to them then
        (the write that would is to one of them, found before), and they reach nothing else."""
        taken: list[o.ModuleObj] = []
        others: list[o.ModuleObj] = []
        for module in modules:
            (taken if id(module) in self._taken else others).append(module)
        key = frozenset(map(id, taken))
        stops = self._stops()
        entry = self._reach.get(key)
        if entry is None:  # (it holds the modules: their ids stay theirs while it is kept)
            while len(self._reach) >= 4:
                del self._reach[next(iter(self._reach))]
            entry = self._reach[key] = (taken, _reachable([module.env for module in taken], stops))
        found = entry[1]
        if not others:
            return found
        return found | _reachable([module.env for module in others], _Either(known, found | stops))


class _Either:
    """In one set or the other."""

    def __init__(self, first: Container[int], second: Container[int]) -> None:
        self._first, self._second = first, second

    def __contains__(self, item: object) -> bool:
        return item in self._first or item in self._second


def _same_variable(now: Any, then: Any) -> bool:
    return now is then or type(now) is str and type(then) is str and now == then


def is_current(node: nodes.Module) -> bool:
    """Is this tree the one an import of its name gives now (a file astroid read again, or the
    analysed file's text standing in for its copy on disk, is another tree)?"""
    library = getattr(node, "pallas_library", None)
    if library is not None:
        return _library_module(library) is node
    return AstroidManager().astroid_cache.get(node.name) is node


def _own(writes: list[Any], loaded: tuple[tuple[nodes.Module, o.ModuleObj], ...],
         deps: tuple[tuple[nodes.Module, o.ModuleObj], ...], stops: set[int]) -> bool:
    """Did the top levels write only to what they made: nothing the modules loaded before
    them that they read reach, other than through their modules (a package holds its
    submodules)? (What they made and dropped, an instance whose `__post_init__` set its
    fields, is theirs too.)"""
    theirs = {id(item) for _, module in loaded for item in (module, module.env)} | stops
    outside = _reachable([module.env for _, module in deps if id(module) not in stops], theirs)
    return not any(id(write) in outside for write in writes)


class KeptModules:
    """The module runs kept in this process; a trace takes them all, and gives back those
    it left unwritten (`Trace`)."""

    def __init__(self) -> None:
        self._runs: Kept = ({}, {}, {})
        self._lock = threading.Lock()

    def take(self) -> Kept:
        with self._lock:
            runs, self._runs = self._runs, ({}, {}, {})
            return runs

    def give_back(self, runs: Kept) -> None:
        with self._lock:
            self._runs = runs

    def clear(self) -> None:
        with self._lock:
            self._runs = ({}, {}, {})


KEPT_MODULES = KeptModules()
