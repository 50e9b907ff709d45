"""When analyses run and what they publish.

Analyses run one at a time on a worker thread (astroid's caches are process-wide), so the
event loop keeps answering. Each document's (or notebook's) analysis is debounced; a newer
version cancels a queued or running one, and a result is published only for the version it
was computed from.

An analysis may report in files other than its own (a helper module the kernel calls). Every
document's diagnostics are therefore the union of what each analysis says about it: its own
analysis's and the others', each kept only while the text it was computed from is the text the
editor has. Whenever one analysis changes what it says about a file, that file is published
again, so a finding in a helper module disappears when its cause in the kernel goes away.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types as t

from pallas_lsp import analysis as core

from . import convert
from .settings import not_analysed_result
from .units import Snapshot

if TYPE_CHECKING:
    from .server import PallasServer

log = logging.getLogger("pallas_lsp.server")

# Seconds without an analysis queued or running before the full collection that new astroid
# modules call for runs (`core.Session.collect_young`): not while someone types.
IDLE_COLLECTION_DELAY = 0.5


@dataclass
class Analysis:
    """A finished analysis of one unit, converted for the client."""

    snapshot: Snapshot
    findings: list[core.Finding]
    facts: list[core.Fact]
    diagnostics: dict[str, list[t.Diagnostic]]  # uri -> diagnostics: the unit's own documents, other files
    dependencies: tuple[str, ...]
    generation: int  # settings/dependency generation it was computed in
    others: dict[str, str] = field(default_factory=dict)  # other files reported in: uri -> the text read
    # (line, code) -> the noqa edit data, computed when a code action first asks (`requests`)
    noqa_edits: dict[tuple[int, str], dict | None] = field(default_factory=dict)


@dataclass
class Unit:
    """The scheduling state of one document (or notebook)."""

    key: str
    task: asyncio.Task[None] | None = None
    cancel: threading.Event | None = None
    pending_version: int | None = None  # the version the queued or running analysis is for
    analysis: Analysis | None = None
    waiters: list[asyncio.Future[Analysis | None]] = field(default_factory=list)


class Scheduler:
    def __init__(self, server: PallasServer) -> None:
        self.server = server
        self.session = server.session
        self.units: dict[str, Unit] = {}
        self.generation = 0
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pallas-analysis")
        # The collector runs once an analysis is published (see `_analyse`), not inside `lint`;
        # each open file's astroid tree is kept for its next analysis (`analysis.incremental`).
        self.astroid = core.Session(collect_after_analysis=False, keep_trees=True)
        self._in_flight = 0  # analyses on the worker thread (one cancelled may still run there)
        self._owed: asyncio.TimerHandle | None = None  # the full collection waiting for a quiet moment
        # unit key -> (its own documents, every document its analysis says something about)
        self.shown: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self.revisions: dict[str, int] = {}  # uri -> how often another unit changed what it says there

    # -- scheduling ------------------------------------------------------------------------

    def unit(self, key: str) -> Unit:
        return self.units.setdefault(key, Unit(key))

    def schedule(self, key: str, delay: float = 0.0) -> None:
        """(Re)start the analysis of `key` after `delay` seconds, superseding any queued or
        running one."""
        unit = self.unit(key)
        snapshot = self.session.snapshot(key)
        if snapshot is None:
            return
        self._stop(unit)
        unit.pending_version = snapshot.version
        unit.cancel = threading.Event()
        unit.task = asyncio.get_running_loop().create_task(self._analyse_later(unit, delay, unit.cancel))

    def on_edit(self, key: str, path: str | None) -> None:
        settings = self.session.editor_settings(path)
        if settings.run == "onType":
            self.schedule(key, settings.debounce_ms / 1000)
            if path:
                self.relint_dependents(path)

    def relint_all(self) -> None:
        self.generation += 1
        for key in list(self.units):
            self.schedule(key)
        self.refresh_pulled()

    def relint_dependents(self, path: str) -> None:
        """Analyse again the units that read `path` (it changed, on disk or in the editor)."""
        changed = False
        uri = convert.file_uri(path)
        for key, unit in list(self.units.items()):
            if unit.analysis is not None and path in unit.analysis.dependencies and key != uri:
                self.schedule(key, self.session.editor_settings(path).debounce_ms / 1000)
                changed = True
        if changed:
            self.refresh_pulled()

    def relint_reporters(self, uri: str) -> None:
        """Analyse again the units that report in `uri`: it was opened, and what they said
        about it was computed from another text (the file on disk)."""
        for key, (_, uris) in list(self.shown.items()):
            if uri in uris and key != uri and key in self.units:
                self.schedule(key)

    def _stop(self, unit: Unit) -> None:
        if unit.cancel is not None:
            unit.cancel.set()
        if unit.task is not None and not unit.task.done():
            unit.task.cancel()

    async def _analyse_later(self, unit: Unit, delay: float, cancel: threading.Event) -> None:
        try:
            await self._analyse(unit, delay, cancel)
        except asyncio.CancelledError:
            raise
        except Exception:  # one document's failure must not stop the server
            log.exception("analysing %s failed", unit.key)
            self._answer_waiters(unit, unit.analysis)  # a pull or hover must not wait forever

    async def _analyse(self, unit: Unit, delay: float, cancel: threading.Event) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        snapshot = self.session.snapshot(unit.key)
        if snapshot is None or cancel.is_set():
            return
        generation = self.generation
        settings, error = self.session.settings_for(snapshot.path)
        overlays, open_versions = self.session.overlays(snapshot.path)
        loop = asyncio.get_running_loop()
        try:
            if settings is None:  # an invalid configuration: shown, and PLS000, never defaults
                result = core.Result(error=f"invalid configuration: {error}")
            else:
                result = await loop.run_in_executor(
                    self.executor, lambda: self._lint(snapshot, settings, cancel, overlays))
            self._take(unit, snapshot, not_analysed_result(result, settings, snapshot.path), cancel, generation,
                       open_versions)
        finally:  # also when this task is cancelled: the collector must not stay off for good
            if self.astroid.collect_young():  # the garbage of the analysis, now that nobody waits
                self._collect_when_idle()

    def _lint(self, snapshot: Snapshot, settings: core.Settings, cancel: threading.Event,
              overlays: dict[str, str]) -> core.Result:
        """On the worker thread."""
        self._in_flight += 1  # (one worker: no other thread changes it meanwhile)
        try:
            return core.lint(snapshot.text, snapshot.path, settings, cancel=cancel, overlays=overlays,
                             want_facts=True, session=self.astroid)
        finally:
            self._in_flight -= 1

    def _collect_when_idle(self) -> None:
        """Run the owed full collection once no analysis has been queued or running for
        IDLE_COLLECTION_DELAY seconds."""
        if self._owed is not None:
            self._owed.cancel()
        self._owed = asyncio.get_running_loop().call_later(IDLE_COLLECTION_DELAY, self._collect_if_idle)

    def _collect_if_idle(self) -> None:
        self._owed = None
        if self._in_flight or any(unit.task is not None and not unit.task.done() for unit in self.units.values()):
            self._collect_when_idle()  # an analysis's own end schedules it again too
            return
        self.astroid.resume_collection()

    def _take(self, unit: Unit, snapshot: Snapshot, result: core.Result, cancel: threading.Event,
              generation: int, open_versions: dict[str, int | None]) -> None:
        """Publish a finished analysis, unless it is out of date."""
        if cancel.is_set():
            return  # whoever cancelled it has scheduled the next one
        if not self._current(snapshot):
            if unit.waiters:  # the text moved on while nobody scheduled its analysis (onSave)
                self.schedule(unit.key)
            return
        if result.error == "cancelled":
            log.info("%s: %s", snapshot.path or snapshot.key, result.error)
            return
        if result.error:  # the diagnostic is PLS000; the log says it too
            log.warning("%s: not analysed: %s", snapshot.path or snapshot.key, result.error)
        unit.analysis = self._analysis(snapshot, result, generation, open_versions)
        unit.pending_version = None
        self._show(unit.key, unit.analysis)
        self._answer_waiters(unit, unit.analysis)

    @staticmethod
    def _answer_waiters(unit: Unit, analysis: Analysis | None) -> None:
        for waiter in unit.waiters:
            if not waiter.done():
                waiter.set_result(analysis)
        unit.waiters.clear()

    def _current(self, snapshot: Snapshot) -> bool:
        now = self.session.snapshot(snapshot.key)
        return now is not None and now.versions == snapshot.versions

    def _analysis(self, snapshot: Snapshot, result: core.Result, generation: int,
                  open_versions: dict[str, int | None]) -> Analysis:
        """The result as diagnostics per document. (A result with `error` set has no findings:
        a diagnostic saying the file was not analysed would be added here.)"""
        read: dict[str, str] = {}

        def text_of(path: str) -> str | None:  # what the ranges in another file are computed from
            text = self.session.text_of(path)
            if text is not None:
                read[convert.file_uri(path)] = text
            return text

        locate = snapshot.locator(self.server.workspace.position_codec, text_of)
        own = snapshot.uris()
        diagnostics: dict[str, list[t.Diagnostic]] = {uri: [] for uri in own}
        versions = {**open_versions, **snapshot.versions}
        for finding in result.findings:
            target = locate(finding.span)
            if target is None:
                continue
            # a no-QA comment silences only findings of the analysed text
            converted = convert.diagnostic(finding, locate, versions, self.session.related_support,
                                           noqa=target.uri in own)
            if converted is not None:
                uri, diagnostic = converted
                diagnostics.setdefault(uri, []).append(diagnostic)
        texts = {uri: read[uri] for uri in diagnostics if uri not in own and uri in read}
        return Analysis(snapshot, result.findings, result.facts, diagnostics, result.dependencies, generation,
                        texts)

    # -- publishing ------------------------------------------------------------------------

    def diagnostics_for(self, uri: str) -> list[t.Diagnostic]:
        """What every current analysis says about `uri`: the analysis of its own unit first,
        then the others' (those computed from the text the editor has now), without repeats."""
        owner = self.units.get(self.session.key_of(uri))
        found: list[t.Diagnostic] = []
        if owner is not None and owner.analysis is not None:
            found.extend(owner.analysis.diagnostics.get(uri, []))
        seen = {_identity(diagnostic) for diagnostic in found}
        for key in sorted(self.shown):
            unit = self.units.get(key)
            if unit is owner or unit is None or unit.analysis is None or uri not in unit.analysis.diagnostics:
                continue
            if not self._same_text(uri, unit.analysis.others.get(uri)):
                continue  # computed from another text of `uri`: its ranges would be wrong
            for diagnostic in unit.analysis.diagnostics[uri]:
                if _identity(diagnostic) not in seen:
                    seen.add(_identity(diagnostic))
                    found.append(diagnostic)
        return found

    def _same_text(self, uri: str, text: str | None) -> bool:
        """Is `text` what the editor has of `uri`? (A file it does not have open: its disk
        text, which the dependency watch keeps analysed.)"""
        document = self.server.workspace.text_documents.get(uri)
        return document is None or document.source == text

    def _show(self, key: str, analysis: Analysis | None) -> set[str]:
        """Publish every document whose diagnostics `key`'s new analysis (None: none, the unit
        is closed) may have changed: its own, and the others it reports in now or did before.
        Returns the documents published."""
        own_before, before = self.shown.pop(key, (frozenset(), frozenset()))
        if analysis is not None:
            own, now = frozenset(analysis.snapshot.uris()), frozenset(analysis.diagnostics)
            self.shown[key] = (own, now)
        else:
            own, now = own_before, frozenset()
        others = (before | now) - own
        for uri in others:
            self.revisions[uri] = self.revisions.get(uri, 0) + 1
        if self.session.pull:
            if others:
                self.refresh_client()  # pulled reports of other documents are out of date
            return set()
        published = sorted(own) + sorted(others)
        for uri in published:
            self.publish(uri)
        return set(published)

    def publish(self, uri: str) -> None:
        """Push the diagnostics of `uri` (clients that pull are never pushed to)."""
        if self.session.pull:
            return
        owner = self.units.get(self.session.key_of(uri))
        if owner is not None and owner.analysis is not None and uri in owner.analysis.snapshot.versions:
            version = owner.analysis.snapshot.versions[uri]
        else:
            version = self.session.version_of(uri)
        self.server.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri=uri, diagnostics=self.diagnostics_for(uri), version=version))

    def result_id(self, uri: str, analysis: Analysis) -> str:
        """A pull report's id: changes with the document's analysis and with what the other
        units say about it."""
        return f"{analysis.snapshot.versions.get(uri)}:{analysis.generation}:{self.revisions.get(uri, 0)}"

    def refresh_pulled(self) -> None:
        """Settings or a dependency changed: every pulled report is out of date."""
        if self.session.pull and self.session.refresh_support:
            self.generation += 1
            self.refresh_client()

    def refresh_client(self) -> None:
        if self.session.pull and self.session.refresh_support:
            self.server.workspace_diagnostic_refresh(None)

    # -- requests --------------------------------------------------------------------------

    async def current_analysis(self, key: str) -> Analysis | None:
        """The analysis of the unit's current text (waiting for it if needed)."""
        unit = self.unit(key)
        snapshot = self.session.snapshot(key)
        if snapshot is None:
            return None
        analysis = unit.analysis
        if analysis is not None and analysis.snapshot.versions == snapshot.versions \
                and analysis.generation == self.generation:
            return analysis
        if self.session.editor_settings(snapshot.path).run == "onSave" and analysis is not None:
            return analysis
        if unit.task is None or unit.task.done() or unit.pending_version != snapshot.version:
            self.schedule(key)
        waiter: asyncio.Future[Analysis | None] = asyncio.get_running_loop().create_future()
        unit.waiters.append(waiter)
        return await waiter

    async def settle_reporters(self, uri: str) -> None:
        """Wait for the queued or running analyses of the other units that reported in `uri`,
        so that a pulled report of `uri` says what they say now."""
        own = self.session.key_of(uri)
        for key, (_, uris) in list(self.shown.items()):
            unit = self.units.get(key)
            if key != own and uri in uris and unit is not None and unit.task is not None and not unit.task.done():
                await self.current_analysis(key)

    def last_analysis(self, key: str) -> Analysis | None:
        unit = self.units.get(key)
        return unit.analysis if unit is not None else None

    def version_for_fixes(self, uri: str) -> int | None:
        """The version of `uri` a diagnostic's fixes must have been computed for."""
        key = self.session.key_of(uri)
        if self.last_analysis(key) is not None:
            snapshot = self.session.snapshot(key)
            if snapshot is not None and uri in snapshot.versions:
                return snapshot.versions[uri]
        return self.session.version_of(uri)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self, key: str, uris: list[str] | None = None) -> None:
        """The document or notebook `key` is closed: forget it and publish its documents
        (`uris`, else the ones last analysed) again, now without its own diagnostics."""
        unit = self.units.pop(key, None)
        closed = list(uris or [])
        if unit is not None:
            self._stop(unit)
            self._answer_waiters(unit, None)
            if not closed and unit.analysis is not None:
                closed = unit.analysis.snapshot.uris()
            if unit.analysis is not None:
                self._forget_tree(unit.analysis.snapshot.path)
        published = self._show(key, None)
        for uri in closed or [key]:
            if uri not in published:
                self.publish(uri)

    def _forget_tree(self, path: str | None) -> None:
        """Let go of the astroid tree kept for a closed file, once the analysis running now
        (if any) is over."""
        try:
            self.executor.submit(self.astroid.forget, path)
        except RuntimeError:  # the executor is shut down: nothing runs any more
            self.astroid.forget(path)

    def shutdown(self) -> None:
        for unit in self.units.values():
            self._stop(unit)
        self.executor.shutdown(wait=False, cancel_futures=True)


def _identity(diagnostic: t.Diagnostic) -> tuple[object, ...]:
    start, end = diagnostic.range.start, diagnostic.range.end
    return diagnostic.code, diagnostic.message, start.line, start.character, end.line, end.character
