"""The astroid process state analyses run in, as one object handed to the engine.

Today it holds the collector policy: every analysis pauses Python's cyclic garbage collector
(astroid builds many small objects, and a full collection in the middle of an analysis triples
its time); afterwards the session either collects at once (flake8, the CLI: the default) or
leaves that to its host, which calls `resume_collection()` when nobody waits any more (the
language server, once it has published the diagnostics; the full collection that follows new
modules, once nobody is typing: `collect_young`). A session may also keep the astroid
trees of the files it analyses for their next analysis (`keep_trees`: the language server's does).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from astroid.manager import AstroidManager

from .incremental import TreeMemo
from .prefilter import WalkMemo
from .reparse import ParseMemo

if TYPE_CHECKING:
    from .trace.reuse import TraceMemo

_frozen_modules = -1  # astroid's cached modules when the collector's state was last frozen
_set_aside_modules = -1  # ... when `collect_young` last set what was young aside


@dataclass(frozen=True)
class Session:
    collect_after_analysis: bool = True  # False: the host calls `resume_collection()` itself
    # True: each file's trees are kept for its next analysis, which parses again only the
    # statements an edit is in (`reparse`), walks only those (`prefilter.WalkMemo`) and
    # rebuilds in astroid only the definitions whose text changed (`incremental`): an
    # editor's session
    keep_trees: bool = False
    parses: ParseMemo | None = field(default=None, compare=False)
    walks: WalkMemo | None = field(default=None, compare=False)
    trees: TreeMemo | None = field(default=None, compare=False)
    # ... and each entry point's trace, replayed while what it ran is unchanged (`trace.reuse`)
    traces: TraceMemo | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.keep_trees and self.parses is None:
            object.__setattr__(self, "parses", ParseMemo())
        if self.keep_trees and self.walks is None:
            object.__setattr__(self, "walks", WalkMemo())
        if self.keep_trees and self.trees is None:
            object.__setattr__(self, "trees", TreeMemo())
        if self.keep_trees and self.traces is None:
            from .trace.reuse import TraceMemo  # the tracer: loaded with the engine

            object.__setattr__(self, "traces", TraceMemo())

    def forget(self, path: str | None) -> None:
        """Drop the trees and traces kept for `path` (a document closed in the editor)."""
        if self.parses is not None:
            self.parses.forget(path)
        if self.walks is not None:
            self.walks.forget(path)
        if self.trees is not None:
            self.trees.forget(path)
        if self.traces is not None:
            self.traces.forget(path)

    @contextlib.contextmanager
    def collector_paused(self) -> Iterator[None]:
        """No cyclic garbage collection while one file is analysed. What the analysis leaves
        is collected once it is over, now or (without `collect_after_analysis`) when the host
        says so."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if was_enabled and self.collect_after_analysis:
                self.resume_collection()

    def resume_collection(self) -> None:
        """Collect what the analyses left (a young collection: `brain.forget_inferences`
        leaves nothing older pointing into their trees) and let the collector run again. When
        astroid has read new modules (its builtins, our stubs, stdlib modules), which it keeps
        for good, a full collection runs instead and what survives is frozen: later full
        collections of the host (flake8 and its other plugins, the server) would otherwise
        walk all of it again, which tripled the plugin's cost in a flake8 run. A session that
        keeps trees unfreezes first: the trees it kept then and has let go of since would
        otherwise never be collected."""
        global _frozen_modules
        if _astroid_grew():
            _frozen_modules = len(AstroidManager().astroid_cache)
            if self.trees is not None:
                gc.unfreeze()
            gc.collect()
            gc.freeze()
        else:
            gc.collect(0)
        gc.enable()

    def collect_young(self) -> bool:
        """What the analyses left, collected now without a full collection (they ran with the
        collector off: all they left is young). True when astroid has read new modules: then
        `resume_collection`'s full collection and freeze are owed, and the collector stays off
        until the host calls it (a language server, once nobody is typing: the full
        collection after a file's first analysis walks everything astroid made, 60-70 ms, and
        the first keystroke after opening the file waited for it).

        An analysis that read new modules is not collected young either: a young collection
        then walks everything astroid read (140-260 ms after a file's first analysis, on the
        server's event loop, where the first keystroke waited for it). What it left is set
        aside instead (frozen, which costs nothing) until the full collection, which unfreezes
        it first when trees are kept (else it would stay frozen for good: then it is collected
        young)."""
        global _set_aside_modules
        if _astroid_grew():
            modules = len(AstroidManager().astroid_cache)
            if self.trees is not None and modules > _set_aside_modules:
                _set_aside_modules = modules
                gc.freeze()
            else:
                gc.collect(0)
            return True
        self.resume_collection()
        return False


def _astroid_grew() -> bool:
    """Has astroid read modules since what survived was last frozen?"""
    return len(AstroidManager().astroid_cache) > _frozen_modules


DEFAULT_SESSION = Session()
