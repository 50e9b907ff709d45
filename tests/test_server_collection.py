"""When the language server collects what its analyses left: a young collection after each
one, and the full collection new astroid modules call for once nobody is typing
(`Session.collect_young`, `Scheduler._collect_when_idle`)."""

from __future__ import annotations

import asyncio
import gc
import types

from pallas_lsp.analysis import session as session_module
from pallas_lsp.analysis.session import Session
from pallas_lsp.server import scheduler as scheduler_module
from pallas_lsp.server.scheduler import Scheduler


def test_new_modules_leave_the_full_collection_owed(monkeypatch):
    session = Session(collect_after_analysis=False, keep_trees=True)
    monkeypatch.setattr(session_module, "_frozen_modules", -1)  # as after astroid read new modules
    try:
        gc.disable()
        assert session.collect_young()
        assert not gc.isenabled()  # a full collection is owed: none runs on its own meanwhile
        session.resume_collection()
        assert gc.isenabled()
        gc.disable()
        assert not session.collect_young()  # nothing new since: a young collection, and the collector on
        assert gc.isenabled()
    finally:
        gc.enable()


def test_an_analysis_that_read_new_modules_is_set_aside_until_the_full_collection(monkeypatch):
    # a young collection would walk every module astroid just read, while the next
    # keystroke waits: what the analysis left is frozen, and the full collection unfreezes it
    session = Session(collect_after_analysis=False, keep_trees=True)
    monkeypatch.setattr(session_module, "_frozen_modules", -1)
    monkeypatch.setattr(session_module, "_set_aside_modules", -1)
    frozen = gc.get_freeze_count()
    try:
        gc.disable()
        left = [[index] for index in range(1000)]  # what an analysis leaves, young
        assert session.collect_young()
        assert gc.get_freeze_count() >= frozen + len(left)
        assert session.collect_young() and not gc.isenabled()  # no new module since: collected young
        session.resume_collection()
        assert gc.isenabled()
    finally:
        gc.enable()


def test_a_session_without_trees_never_sets_aside(monkeypatch):
    # its full collection does not unfreeze: what it froze would never be collected
    session = Session(collect_after_analysis=False)
    monkeypatch.setattr(session_module, "_frozen_modules", -1)
    monkeypatch.setattr(session_module, "_set_aside_modules", -1)
    frozen = gc.get_freeze_count()
    try:
        gc.disable()
        left = [[index] for index in range(1000)]  # young: a freeze would add them
        assert session.collect_young()
        # not `==`: a frozen object that dies meanwhile leaves the count (CI saw 2 go)
        assert gc.get_freeze_count() < frozen + len(left)
    finally:
        gc.enable()


class _Recorder:
    def __init__(self) -> None:
        self.full = 0

    def resume_collection(self) -> None:
        self.full += 1


async def test_the_owed_collection_waits_until_no_analysis_runs(monkeypatch):
    monkeypatch.setattr(scheduler_module, "IDLE_COLLECTION_DELAY", 0.01)
    scheduler = Scheduler(types.SimpleNamespace(session=None))  # type: ignore[arg-type]
    recorder = scheduler.astroid = _Recorder()  # type: ignore[assignment]
    try:
        typing = asyncio.get_running_loop().create_future()
        unit = scheduler.unit("file:///k.py")
        unit.task = asyncio.ensure_future(typing)  # an analysis queued or running
        scheduler._collect_when_idle()
        scheduler._collect_when_idle()  # a second analysis ended meanwhile: still one collection owed
        await asyncio.sleep(0.05)
        assert recorder.full == 0
        scheduler._in_flight = 1  # the task is gone, but a cancelled analysis still runs on the worker thread
        typing.set_result(None)
        await asyncio.sleep(0.05)
        assert recorder.full == 0
        scheduler._in_flight = 0
        await asyncio.sleep(0.05)
        assert recorder.full == 1
        await asyncio.sleep(0.05)
        assert recorder.full == 1
    finally:
        scheduler.executor.shutdown(wait=False)
