"""Calls into imported modules' functions, kept between traces and replayed.

A run of a function another module defined, with arguments no analysis makes (unknown, None,
numbers, strings), reads nothing but what its closure reaches: its module's state, which every
trace takes as the modules' top levels left it (`world`), and gives the same object to every
trace whose state it can be. While that state is untouched (`Trace._pristine`), the same call
of the same closure gives the same run, in the next trace of the file (an editor's) and in
another file's (a command-line run's), whatever else that trace loaded. tokamax's attention and
ragged-dot ops hand the kernels of several modules the same unknown arguments (`_fwd`), and
that run reaches the analysed file, so it is never kept whole (`reuse.EscapedRun`): it was made
again in every analysis of each of those files. The calls in it that do not reach the file are
now replayed. What a run left is replayed exactly: its sites (the same objects), the functions
it executed, its steps, the closures it made and let escape, the writes it made to objects it
made, the answers it put in the call memo, the raises it dropped; its result is a value no
later code can change (`_settled`).

A run is kept only when it did nothing more: it ran no code of the analysed file's text
(`Interpreter.from_text`) nor read a name through such a module, let escape no closure made
before it, loaded no project module, wrote to no object it did not make, and ran outside a
kernel body or a module's top level. It is replayed only at the same point: the same call
stack (none of it in the analysed file) and path guard, the same closure (a module-level
function of a module kept from trace to trace) and arguments. When a later write reaches what
a kept call made (a closure it let escape, run afterwards; an answer of the call memo, taken
again), a replay would show that write from its start: such a call is not kept, and a trace
that replayed one starts over without replays (`untouched`). As for kept escaped runs, the
trace keeps what it made only if, when it ends, nothing wrote to what their sites show
(`Trace._run`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from astroid import nodes

from ..values import UNKNOWN
from . import objects as o
from . import reuse
from .interp import Interpreter, Site

if TYPE_CHECKING:
    from . import Trace


@dataclass
class KeptCall:
    """What one call's run left (see the module's docstring)."""

    result: Any
    raised: bool | str  # (the class of what it raised, when known)
    steps: int
    sites: list[Site]
    executed: set[nodes.NodeNG]
    known: set[nodes.NodeNG]
    closures: list[o.Closure]
    writes: list[Any]
    unit_writes: list[Any]  # ... as `Interpreter.writes` saw them (`global`, `nonlocal` too)
    # (dicts: a replay merges them into the trace's with the hashes they hold, where a list of
    # pairs would hash every key again)
    memo: dict[Any, Any]
    opaque: dict[Any, Any]
    dropped_raises: int
    dropped_exits: dict[str, int]
    loaded: tuple[nodes.Module, ...]  # the library modules it loaded, in order
    # what it let escape, in order: a closure it made, or the node of a module-level function
    # (whose closure is the trace's own: `Trace._twin`)
    escaped: list[o.Closure | nodes.NodeNG]
    # what later code may reach of what it made: the closures it let escape, and the answers
    # it put in the call memo that are no settled values (`_settled`)
    reachable: list[Any]
    # the ids of every object those reach beyond the world, once found untouched (`untouched`)
    reach: frozenset[int] | None = None


@dataclass
class _Recording:
    key: tuple[Any, ...]
    executed: set[nodes.NodeNG]  # the trace's, set aside while the call runs
    known: set[nodes.NodeNG]
    counts: tuple[int, ...]
    dropped_exits: dict[str, int]
    modules: int
    steps: int


class CallKeeper:
    """One trace's use of the kept calls: replays them, and records new ones."""

    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self.replayed = 0  # calls replayed by this attempt at the trace
        self.made: list[tuple[tuple[Any, ...], KeptCall]] = []  # ... and recorded, kept if it ends well
        # the kept calls made or replayed whose objects later code may reach, with the number
        # of writes the trace had made then (`untouched`)
        self._watched: list[tuple[KeptCall, int]] = []

    def replay(self, interp: Interpreter, closure: o.Closure, node: nodes.NodeNG,
               memo_key: tuple[Any, ...]) -> KeptCall | None:
        """The kept run of this call, applied to the trace; None: run it (and `start` says
        whether to record it)."""
        trace = self._trace
        if not trace._replaying or not self._eligible(interp, closure):
            return None
        kept = reuse.KEPT_RUNS.call(self._key(interp, node, memo_key))
        if kept is None or interp._steps + kept.steps > interp.entry_limit:
            return None
        for module in kept.loaded:
            interp.module(module)
        if not trace._pristine():
            return None  # (loading them wrote to the world: run it, and keep nothing)
        trace._mark()
        interp._steps += kept.steps
        interp.replay_run(kept.sites, kept.executed, kept.known, kept.closures)
        trace.kept_sites.update(map(id, kept.sites))
        interp.loose_writes.extend(kept.writes)
        if interp.writes is not None:  # (an entry point's run being watched: `reuse.Units`)
            interp.writes.extend(kept.unit_writes)
        interp._memo.update(kept.memo)
        interp.memo_epochs.update(dict.fromkeys(kept.memo, interp.write_epoch))
        interp._opaque.update(kept.opaque)
        interp.escaped.extend(trace._twin(made) if isinstance(made, nodes.NodeNG) else made for made in kept.escaped)
        interp.dropped_raises += kept.dropped_raises
        for kind, count in kept.dropped_exits.items():
            interp.dropped_exits[kind] += count
        if kept.reachable:
            self._watched.append((kept, len(interp.loose_writes)))
        self.replayed += 1
        return kept

    def start(self, interp: Interpreter, closure: o.Closure, node: nodes.NodeNG,
              memo_key: tuple[Any, ...]) -> _Recording | None:
        """Watch the call about to run, if its run may be kept (the interpreter asks only when
        no call of the analysed file is on the way here)."""
        if node.root() is interp.root or not self._eligible(interp, closure):
            return None  # (a chain through the analysed file's nodes is another one next time)
        recording = _Recording(self._key(interp, node, memo_key), interp.executed, interp.known_calls,
                               _counts(interp), dict(interp.dropped_exits), len(interp.modules), interp._steps)
        interp.executed, interp.known_calls = set(), set()
        return recording

    def finish(self, interp: Interpreter, recording: _Recording, result: Any, raised: bool | str, completed: bool) -> None:
        """The call ran (`completed`: to its end): its functions go back into the trace's
        sets, and its run is recorded if it left nothing but what `KeptCall` holds."""
        executed, known = interp.executed, interp.known_calls
        interp.executed = recording.executed | executed
        interp.known_calls = recording.known | known
        if not completed:
            return
        before = recording.counts
        after = _counts(interp)
        loaded = tuple(islice(interp.modules, recording.modules, None))
        if not (all(after[index] == before[index] for index in _MUST_NOT_GROW) and interp.world_clean
                and _settled(result)
                and all(map(reuse.read_only, loaded))
                and not any(node.root() in interp.from_text for node in executed)
                and self._trace._pristine()):
            return
        sites, closures, writes, memo, opaque, escaped, unit_writes = (
            after[index] - before[index] for index in _GROWN)
        made = interp.closure_log[len(interp.closure_log) - closures:]
        let_go: list[o.Closure | nodes.NodeNG] = []
        for closure in interp.escaped[len(interp.escaped) - escaped:]:
            if not isinstance(closure, o.Closure):
                return
            if any(closure is own for own in made):
                let_go.append(closure)
            elif self._trace._top_level_function(closure):
                let_go.append(closure.node)
            else:
                return  # (a closure made before the call: what it reaches is the trace's)
        answers = _last(interp._memo, memo)
        reachable = [made for made in let_go if isinstance(made, o.Closure)] + [
            answer[0] for answer in answers.values() if not _settled(answer[0])]
        self._trace._mark()
        kept = KeptCall(
            result, raised, interp._steps - recording.steps, interp.sites[len(interp.sites) - sites:], executed,
            known, made, interp.loose_writes[len(interp.loose_writes) - writes:],
            [] if interp.writes is None else interp.writes[len(interp.writes) - unit_writes:],
            answers,
            _last(interp._opaque, opaque), interp.dropped_raises - before[_DROPPED],
            {kind: count - recording.dropped_exits[kind] for kind, count in interp.dropped_exits.items()}, loaded,
            let_go, reachable)
        self.made.append((recording.key, kept))
        if reachable:
            self._watched.append((kept, len(interp.loose_writes)))

    def untouched(self) -> bool:
        """Did no write since a kept call was made or replayed reach what it made (a closure
        it let escape, run later; an answer of the call memo, taken again)? A replay would
        show that write from its start: a call made so is not kept. False: a replayed one
        was written to; every kept call is forgotten (they may share what was written), and
        the trace starts over (`Trace._run`)."""
        if not self._watched:
            return True
        interp = self._trace.interp
        self._trace._pristine()  # (`_world_ids` up to date)
        world = self._trace._world_ids
        for kept, since in self._watched:
            writes = {id(write) for write in interp.loose_writes[since:]}
            if not writes:
                continue
            # What a call made changes only by a write to it: found untouched once, what it
            # reaches is what it reached when it was made, in this trace and in any later one
            # that replays it (which is found untouched again, or forgets it). Beyond the world
            # (the state of the modules' top levels, `Trace._pristine`'s to judge): any later
            # world reaches all of it that the call's closure reaches, through its module.
            reached = kept.reach if kept.reach is not None else reuse._reachable(kept.reachable, world)
            if writes.isdisjoint(reached):
                kept.reach = frozenset(reached)
                continue
            if not any(kept is mine for _, mine in self.made):
                reuse.KEPT_RUNS.forget_calls()
                return False
            self.made = [(key, mine) for key, mine in self.made if mine is not kept]
        return True

    def keep(self) -> None:
        """The trace ended well: what it recorded is kept for the next ones."""
        reuse.KEPT_RUNS.keep_calls(self.made)

    def _eligible(self, interp: Interpreter, closure: o.Closure) -> bool:
        return (not interp.constructing and not interp.kernels and not interp.meshes
                and closure.node.root() not in interp.from_text and self._trace._top_level_function(closure)
                and self._trace._pristine())

    def _key(self, interp: Interpreter, node: nodes.NodeNG, memo_key: tuple[Any, ...]) -> tuple[Any, ...]:
        return (memo_key, node, tuple(interp.stack), tuple(interp.handling), interp.loop_depth, interp.unrolled,
                interp.writes is None)


# What `_counts` holds, by position: what a kept run may add to (and replays), and what it may not
_SITES, _CLOSURES, _WRITES, _MEMO, _OPAQUE, _ESCAPED, _DROPPED, _UNIT_WRITES = range(8)
_GROWN = (_SITES, _CLOSURES, _WRITES, _MEMO, _OPAQUE, _ESCAPED, _UNIT_WRITES)
_MUST_NOT_GROW = tuple(range(8, 16))


def _counts(interp: Interpreter) -> tuple[int, ...]:
    shared = interp.shared_log
    return (len(interp.sites), len(interp.closure_log), len(interp.loose_writes), len(interp._memo),
            len(interp._opaque), len(interp.escaped), interp.dropped_raises,
            0 if interp.writes is None else len(interp.writes),
            len(interp.construction_writes), len(interp.from_text), interp.text_reads, interp.construction_sites,
            interp.imports_run, len(interp.failed_modules), -1 if shared is None else len(shared),
            len(interp.repeated_refs))


def _last(table: dict[Any, Any], count: int) -> dict[Any, Any]:
    """The last `count` entries put in a dict (one that only grows while the call runs)."""
    return dict(list(islice(reversed(table.items()), count))[::-1])


def _settled(value: Any, depth: int = 0) -> bool:
    """Is the result a value no code can change, and that names nothing of the trace that made
    it: unknown, None, a bool, number or string, a tuple of them, or one of them per guard?"""
    if value is UNKNOWN or value is None or type(value) in (bool, int, float, str):
        return True
    if depth > 4:
        return False
    if type(value) is tuple:
        return all(_settled(item, depth + 1) for item in value)
    if isinstance(value, o.Guarded):
        return all(_settled(item, depth + 1) for _, item in value.alternatives)
    return False
