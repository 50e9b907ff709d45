"""The astroid process state analyses run in, as one object handed to the engine.

Today it holds the collector policy: every analysis pauses Python's cyclic garbage collector
(astroid builds many small objects, and a full collection in the middle of an analysis triples
its time); afterwards the session either collects at once (flake8, the CLI: the default) or
leaves that to its host, which calls `resume_collection()` when nobody waits any more (the
language server, once it has published the diagnostics). A session may also keep the astroid
trees of the files it analyses for their next analysis (`keep_trees`: the language server's does).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field

from astroid.manager import AstroidManager

from .incremental import TreeMemo

_frozen_modules = -1  # astroid's cached modules when the collector's state was last frozen


@dataclass(frozen=True)
class Session:
    collect_after_analysis: bool = True  # False: the host calls `resume_collection()` itself
    # True: each file's astroid tree is kept for its next analysis, which rebuilds only the
    # definitions whose text changed (`incremental`: an editor's session)
    keep_trees: bool = False
    trees: TreeMemo | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.keep_trees and self.trees is None:
            object.__setattr__(self, "trees", TreeMemo())

    def forget(self, path: str | None) -> None:
        """Drop the tree kept for `path` (a document closed in the editor)."""
        if self.trees is not None:
            self.trees.forget(path)

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
        modules = len(AstroidManager().astroid_cache)
        if modules > _frozen_modules:
            _frozen_modules = modules
            if self.trees is not None:
                gc.unfreeze()
            gc.collect()
            gc.freeze()
        else:
            gc.collect(0)
        gc.enable()


DEFAULT_SESSION = Session()
