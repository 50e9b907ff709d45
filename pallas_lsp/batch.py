"""Many files at once: analysis (serial, or in a process pool) and the `--fix` rounds.

Workers only analyse; every write happens here, in the parent, one file after another, so that
fixes touching the same helper module from two files never race.
"""

from __future__ import annotations

import gc
import os
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import analysis, cache
from .analysis import (
    FILE_NOT_ANALYSED, RULE_INFO, UNUSED_NOQA, Change, Finding, Plan, SourceFile, changes, fix_to_apply,
    mentions_pallas, not_analysed, plan_noqa, settled_from_text, settled_from_tree, settled_unless_loaded, unsilenced,
    unused_noqa,
)
from .analysis import write_change as write
from .files import Target

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    from .analysis import Result, Session

# Below this much text to analyse, starting worker processes (the server that forks them imports
# astroid and builds its builtins and our stubs: about 0.15 s) costs more than it saves. Kernel
# files are dense: the jax package's dozen to analyse (250 KB) take 0.4 s in one process.
POOL_MIN_BYTES = 128 * 1024
# With this many files still to settle when the first one to analyse is found, the server that
# forks the workers is started then, not once the pool pays (`_Workers.add`); in a run with this
# many files and nothing cached, at once (it warms up on another core while this process settles
# files: the jax package's first file to analyse comes after a quarter of them).
EARLY_SERVER_FILES = 64

# Fixes are applied in rounds: apply what does not overlap, analyse again, repeat.
MAX_FIX_ROUNDS = 4


@dataclass
class FileReport:
    path: str  # absolute
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # why the file could not be analysed
    silenced: int = 0


def analyse_one(target: Target) -> FileReport:
    report, read = _settle(target)
    return report if report is not None else _cached_lint(target, read)


def analyse_text(target: Target, text: str) -> FileReport:
    """The report of `text` as the file `target.path` (standard input): never cached."""
    if not mentions_pallas(text, path=target.path):
        return _report(target, _unused_noqa(target, text, []), None, 0)
    findings, error, silenced, _ = _lint(target, text)
    return _report(target, findings, error, silenced)


def _report(target: Target, findings: list[Finding], error: str | None, silenced: int) -> FileReport:
    """A file's report; a file that was not analysed gets its PLS000 finding (unless ignored)."""
    if error is not None and target.settings.enables(FILE_NOT_ANALYSED, target.path):
        findings = [not_analysed(error), *findings]
    return FileReport(target.path, findings, error, silenced)


@dataclass(frozen=True)
class _Read:
    """A file as `_settle` read it."""

    text: str = ""
    stamp: list[int] | None = None  # its size and modification time before it was read (with a cache)
    probed: frozenset[str] = frozenset()  # the paths the prefilter's verdict depends on
    started: float = 0.0  # when it was read (`cache.store`: a dependency changed since is not trusted)
    tree_read: bool = False  # the prefilter's verdict read its tree (`settled_from_tree`)


def _settle(target: Target) -> tuple[FileReport | None, _Read]:
    """The report of a file that needs no analysis (unreadable, without a trigger word, or
    with its result in the cache), else None; and what was read of it."""
    started = time.time()
    stamp = cache.stamp(target.path) if target.cache is not None else None
    if target.cache is not None:  # unchanged since its entry was stored: not even read
        found = _index(target.cache).get(target.path, stamp, target.settings)
        record = None
        if found is not None:
            entry, inline = found
            directory = Path(target.cache)
            record = cache.current(inline, directory) if inline is not None else cache.load(directory, entry)
        if record is not None:
            return _cached_report(target, record), _Read(stamp=stamp)
    try:
        text = SourceFile.read(target.path).text
    except OSError as error:
        return _report(target, [], f"cannot read: {error.strerror or error}", 0), _Read(stamp=stamp)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return _report(target, [], f"cannot decode: {error}", 0), _Read(stamp=stamp)
    probed: set[str] = set()
    # (the words and import statements alone: the workers of a parallel run get the rest)
    passes = mentions_pallas(text, path=target.path, probed=probed) and not settled_from_text(text, target.path, probed)
    tree_read = passes and not mentions_pallas(text)
    if tree_read:
        # (only its imports hold a trigger word, and the text does not tell where they lead:
        # its tree, here, rather than a worker for a file that is seldom analysed in the end)
        passes = not settled_from_tree(text, target.path, probed=probed)
    read = _Read(text, stamp, frozenset(probed), started, tree_read)
    if not passes:
        return _prefiltered(target, read), read
    if target.cache is not None:
        key = _cache_key(target, text)
        record = cache.load(Path(target.cache), key)
        if record is not None:
            _index(target.cache).put(target.path, stamp, target.settings, key, record)
            return _cached_report(target, record), read
    return None, read


def _prefiltered(target: Target, read: _Read) -> FileReport:
    """The report of a file the prefilter settles; with a cache, an entry too, valid while the
    paths the prefilter looked at are unchanged (its walk of the file's project imports among
    them: kept from the byte prefilter's, when that walked them)."""
    report = _report(target, _unused_noqa(target, read.text, []), None, 0)
    if target.cache is not None:
        data = read.text.encode("utf-8", "surrogatepass")
        key = cache.key(target.path, data, target.settings)
        record = cache.load(Path(target.cache), key) or cache.store(
            Path(target.cache), key, report.findings, None, 0, tuple(sorted(read.probed)), read.started)
        if record is not None:
            _index(target.cache).put(target.path, read.stamp, target.settings, key, record)
    return report


def _cached_report(target: Target, record: dict) -> FileReport:
    return _report(target, cache.findings(record), record["error"], record["silenced"])


# The result cache's index of each cache directory, read once per process (`analyse` writes it).
_INDEXES: dict[str, cache.Index] = {}


def _index(directory: str) -> cache.Index:
    index = _INDEXES.get(directory)
    if index is None:
        index = _INDEXES[directory] = cache.Index(Path(directory))
    return index


class _Collector:
    """The collector policy of a command-line process: what an analysis leaves is collected
    when the next analysis starts, not when it ends; so the last file's garbage is left to the
    exit, which frees it anyway (in a pre-commit run of one file that full collection was a
    tenth of the process)."""

    session: Session | None = None  # made on the first analysis: it is astroid's state
    pending = False  # an analysis left garbage behind


def analyze_source(text: str, path: str, *, select: tuple[str, ...], ignore: tuple[str, ...], budget: float) -> Result:
    """`analysis.analyze_source`, read when a file first needs it: the engine (and astroid) is
    loaded then, so a run whose files the prefilter and the cache settle never imports it."""
    if _Collector.session is None:
        _Collector.session = _load_engine()
    collect_garbage()
    _Collector.pending = True
    return analysis.analyze_source(text, path, select=select, ignore=ignore, budget=budget,
                                   session=_Collector.session)


def _load_engine() -> Session:
    """The session of this process, and the engine imported (astroid, its brains, our rules
    and tracer) with the collector paused; what it made is then frozen (not examined by
    later collections): some 40,000 objects that live as long as the process (its modules,
    classes and functions), which the collector would otherwise examine in two dozen young
    collections and carry through the older generations (5 to 10 ms of a pre-commit run)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        session = analysis.Session(collect_after_analysis=False)
        analysis.select_rules(())  # imports the engine
        gc.freeze()
    finally:
        if paused:
            gc.enable()
    return session


def leave_to_exit() -> None:
    """The process ends now (a `pallas-lint check` of its own command line): what is alive
    is left to the exit without a collection. The interpreter's shutdown runs a full
    collection of everything the collector tracks (astroid's builtins, our stubs, the last
    analysis's trees: 80,000 objects after one kernel file), only for the memory to be given
    back a moment later: 40 ms of a pre-commit run of one file. Frozen objects are not
    examined (as `Session.resume_collection` does for the modules astroid keeps)."""
    gc.freeze()


def collect_garbage() -> None:
    """Collect what the last analysis left, and let the collector run again (`--watch` does
    between its runs, whose files may all come from the cache)."""
    if _Collector.pending and _Collector.session is not None:
        _Collector.pending = False
        _Collector.session.resume_collection()


def _lint(target: Target, text: str, tree_read: bool = False) -> tuple[list[Finding], str | None, int, tuple[str, ...]]:
    """The findings `settings` select for the file, minus what `# noqa` silences, plus the
    `# noqa` comments that silence nothing (PLS100); `tree_read`: the prefilter has asked its
    tree already (`_settle`)."""
    settings, path = target.settings, target.path
    probed: set[str] = set()
    if not tree_read and settled_unless_loaded(text, path, probed=probed):
        return _unused_noqa(target, text, []), None, 0, tuple(sorted(probed))
    result = analyze_source(text, path, select=settings.select, ignore=settings.ignored_for(path),
                            budget=settings.budget)
    if result.error is not None:
        return [], result.error, 0, result.dependencies
    kept, silenced = unsilenced(result.findings, text, analysis.read_text)
    return kept + _unused_noqa(target, text, result.findings), None, silenced, result.dependencies


def _unused_noqa(target: Target, text: str, findings: list[Finding]) -> list[Finding]:
    settings, path = target.settings, target.path
    if not settings.enables(UNUSED_NOQA, path):
        return []
    # a comment at the call that leads to a helper module's finding is in use
    here = [finding.in_analysed_file() for finding in findings]
    return unused_noqa(text, here, lambda code: settings.enables(code, path), RULE_INFO)


def _cached_lint(target: Target, read: _Read) -> FileReport:
    findings, error, silenced, dependencies = _lint(target, read.text, read.tree_read)
    if target.cache is not None and cache.cacheable(error):
        # what the analysis read, and what the prefilter looked at to let the file through
        data = read.text.encode("utf-8", "surrogatepass")
        depends = cache.dependencies(target.path, data, dependencies, read.probed)
        key = cache.key(target.path, data, target.settings)
        record = cache.store(Path(target.cache), key, findings, error, silenced, depends, read.started)
        if record is not None:
            _index(target.cache).put(target.path, read.stamp, target.settings, key, record)
    return _report(target, findings, error, silenced)


def _cache_key(target: Target, text: str) -> str:
    return cache.key(target.path, text.encode("utf-8", "surrogatepass"), target.settings)


Progress = Callable[[int], None]  # called with the number of files just done


def analyse(targets: list[Target], jobs: int = 1, progress: Progress | None = None) -> list[FileReport]:
    """A report per target, in the targets' order whatever `jobs` is."""
    analysis.forget_project_imports()  # a run reads the project as it is now (`--watch`, `--fix` rounds)
    cache.forget_checks()
    reports = list(_analyse(targets, jobs, progress or (lambda done: None)))
    for index in _INDEXES.values():
        index.save()
    return _without_repeats(reports)


def _without_repeats(reports: list[FileReport]) -> list[FileReport]:
    """Each finding once, as the server publishes them: a helper module's finding that its own
    analysis and its importers' analyses all report is kept in the module's own report, else
    in the first importer's (the others' copies differ only in the call they are reached from)."""
    def place(report: FileReport, finding: Finding) -> tuple[object, ...]:
        span = finding.span
        return (os.path.abspath(span.path or report.path), finding.code, finding.message,
                span.line, span.col, span.end_line, span.end_col)

    seen = {place(report, finding) for report in reports for finding in report.findings if finding.span.path is None}
    for report in reports:
        kept = []
        for finding in report.findings:
            if finding.span.path is not None:
                where = place(report, finding)
                if where in seen:
                    continue
                seen.add(where)
            kept.append(finding)
        report.findings = kept
    return reports


def _analyse(targets: list[Target], jobs: int, progress: Progress) -> Iterator[FileReport]:
    if jobs <= 1:
        for target in targets:
            yield analyse_one(target)
            progress(1)
        return
    # The parent settles what needs no analysis (most files: the prefilter on their words and
    # imports); the rest goes to `_Workers` as it is found, while the parent goes on.
    reports: list[FileReport | None] = []
    workers = _Workers(targets, jobs)
    try:
        for index, target in enumerate(targets):
            reports.append(_settle(target)[0])
            if reports[-1] is not None:
                progress(1)
            else:
                workers.add(index)
        for index, report in workers.reports():
            reports[index] = report
            progress(1)
    finally:
        workers.close()
    for settled in reports:
        assert settled is not None  # settled above, or analysed
        yield settled


class _Workers:
    """The files of a parallel run left to analyse: once they pay for worker processes, the
    pool starts and gets them (the largest first of those found so far), and each one found
    after; else this process analyses them, the largest first. The pool is handed its files
    by a thread of its own: the first worker is forked only once the server that forks them
    has made the state every worker shares (`warm`, 0.2 s), and meanwhile this process goes
    on settling files."""

    def __init__(self, targets: list[Target], jobs: int) -> None:
        self.targets, self.jobs = targets, jobs
        self.sizes: dict[int, int] = {}
        self.total = 0  # their bytes
        self.pool: ProcessPoolExecutor | None = None
        self.futures: dict[Future[FileReport], int] = {}
        self._queue: queue.SimpleQueue[int | None] | None = None  # files for the submitting thread
        self._submitter: threading.Thread | None = None
        self._failed: BaseException | None = None  # what stopped the submitting thread
        # a cold run of a large tree: most likely, some of it needs the workers
        self.serving = len(targets) > EARLY_SERVER_FILES and _nothing_cached(targets)
        if self.serving:
            _start_server(targets[0].path)

    def add(self, index: int) -> None:
        self.sizes[index] = size = _size(self.targets[index].path)
        self.total += size
        if self._queue is not None:
            self._queue.put(index)
        elif len(self.sizes) > 1 and self.total >= POOL_MIN_BYTES:
            self._start()
        elif not self.serving and len(self.sizes) == 1 and len(self.targets) - index > EARLY_SERVER_FILES:
            self.serving = True
            _start_server(self.targets[index].path)

    def reports(self) -> Iterator[tuple[int, FileReport]]:
        if self.pool is None:
            for index in self._largest_first():
                yield index, analyse_one(self.targets[index])
            return
        from concurrent.futures import as_completed  # noqa: PLC0415

        self._stop_submitting()
        if self._failed is not None:
            raise self._failed
        for future in as_completed(self.futures):
            yield self.futures[future], future.result()

    def close(self) -> None:
        self._stop_submitting()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def _start(self) -> None:
        self.pool = _pool(self.jobs)
        self._queue = queue.SimpleQueue()
        for waiting in self._largest_first():
            self._queue.put(waiting)
        self._submitter = threading.Thread(target=self._submit_all, name="pallas-submit", daemon=True)
        self._submitter.start()

    def _submit_all(self) -> None:
        assert self.pool is not None and self._queue is not None
        try:
            while (index := self._queue.get()) is not None:
                self.futures[self.pool.submit(analyse_one, self.targets[index])] = index
        except BaseException as error:  # noqa: BLE001 - raised again in the main thread
            self._failed = error

    def _stop_submitting(self) -> None:
        """Every file found is submitted (the thread ends once it has the last)."""
        if self._submitter is not None and self._queue is not None:
            self._queue.put(None)
            self._submitter.join()
            self._submitter = None

    def _largest_first(self) -> list[int]:
        return sorted(self.sizes, key=lambda index: -self.sizes[index])


def _pool(jobs: int) -> ProcessPoolExecutor:
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - most runs start no pool

    return ProcessPoolExecutor(max_workers=jobs, mp_context=_context())


def _start_server(near: str) -> None:
    """Start the server that forks the workers (it imports the engine and warms it up, 0.15 s
    on another core, reading the project of the file `near` as its first analysis would)
    while this process goes on settling files: a run with many files to settle that has found
    one to analyse will most likely find enough for a pool. The jax package's first such file
    comes at a fifth of the settling, the pool's bytes at two thirds; if the pool never starts,
    the server waits unused until this process ends."""
    context = _context()
    if context.get_start_method() == "forkserver":
        from multiprocessing import forkserver  # noqa: PLC0415 - only when a pool may start

        os.environ[WARM_NEAR] = near  # (the server's environment: `pallas_lsp.warm` reads it)
        try:
            forkserver.ensure_running()
        finally:
            os.environ.pop(WARM_NEAR, None)


def _nothing_cached(targets: list[Target]) -> bool:
    """Does this run start with no result cached (no cache, or an empty one)?"""
    return all(directory is None or not _index(directory).rows for directory in {target.cache for target in targets})


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _context() -> BaseContext:
    """The workers' start method."""
    import multiprocessing  # noqa: PLC0415 - only when a pool starts

    # A fresh server process forks the workers: nothing of this process's state (threads,
    # astroid caches holding files we have since rewritten) leaks into them.
    if sys.platform != "win32" and "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # what every worker needs, made once in the server's memory: the engine, and the
        # state its first analysis builds (`warm`)
        context.set_forkserver_preload(["pallas_lsp.batch", f"{analysis.__name__}.engine", "pallas_lsp.warm"])
        return context
    return multiprocessing.get_context("spawn")


def warm_up(near: str | None = None) -> None:
    """One analysis of a small kernel (PLS001's example), so that a worker's first file does
    not pay for astroid's builtins, the brain's modules and the API's stubs being built; and
    what a first analysis of a file `near` reads of its project (its files, 60 ms of each
    worker's first file in the jax package)."""
    example = analysis.BY_CODE["PLS001"].INVALID[0].code
    analyze_source(example, "", select=("PLS",), ignore=(), budget=10.0)
    if near:
        analysis.warm_project(near)
    collect_garbage()


# The environment variable that tells the workers' server which project it will analyse.
WARM_NEAR = "PALLAS_LSP_WARM_NEAR"


@dataclass
class FixOutcome:
    reports: list[FileReport]  # the findings left (before any change when not writing)
    fixed: int = 0  # findings fixed (or that would be)
    fixed_by: Counter = field(default_factory=Counter)  # (path, code) -> findings fixed
    changes: dict[str, Change] = field(default_factory=dict)  # path -> first `before`, last `after`
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (path, what went wrong)


def fix(targets: list[Target], reports: list[FileReport], *, unsafe: bool, apply: bool,  # noqa: C901 - the rounds
        jobs: int = 1, progress: Progress | None = None) -> FixOutcome:
    """Apply the fixes of `reports` in rounds, analysing again after each, until nothing more
    changes. Without `apply`, one round is computed and nothing is written (`--diff`)."""
    outcome = FixOutcome(reports)
    for _ in range(MAX_FIX_ROUNDS):
        plan = Plan()
        round_fixed: Counter = Counter()
        for report in outcome.reports:
            for finding in report.findings:
                chosen = fix_to_apply(finding, unsafe)
                if chosen is not None and plan.add(report.path, finding, chosen):
                    round_fixed[(report.path, finding.code)] += 1
        round_changes = _changes(plan, outcome.warnings)
        if not round_changes:
            break
        outcome.fixed += len(plan.fixed)
        outcome.fixed_by.update(round_fixed)
        for change in round_changes:
            first = outcome.changes.get(change.path)
            outcome.changes[change.path] = change if first is None else Change(change.path, first.before, change.after)
        if not apply:
            break
        for change in round_changes:
            try:
                write(change)
            except OSError as error:  # noqa: PERF203 - each file that cannot be written is reported
                outcome.warnings.append((change.path, f"fix not written: {error.strerror or error}"))
        before = _keys(outcome.reports)
        outcome.reports = analyse(targets, jobs, progress)
        if _keys(outcome.reports) == before:
            break  # the fixes changed text but not the findings: another round would repeat them
    return outcome


def _keys(reports: list[FileReport]) -> set[tuple]:
    return {(report.path, f.code, f.message, f.span) for report in reports for f in report.findings}


def _changes(plan: Plan, warnings: list[tuple[str, str]]) -> list[Change]:
    """The plan's changes; a file that cannot be read loses its edits, with a warning."""
    result = []
    for path, edits in plan.edits.items():
        single = Plan({path: edits})
        try:
            result.extend(changes(single))
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as error:
            warnings.append((path, f"fix not applied: {error}"))
    return result


def add_noqa(reports: Iterable[FileReport]) -> tuple[int, list[tuple[str, str]]]:
    """Write `# noqa` comments for every finding; how many lines got one, and warnings."""
    added, warnings = 0, []
    for report in reports:
        wanted = [finding for finding in report.findings if finding.code not in (FILE_NOT_ANALYSED, UNUSED_NOQA)]
        if not wanted:
            continue
        try:
            source = SourceFile.read(report.path)
            # a helper module's finding is silenced at the call of this file that leads to it
            plan = plan_noqa(report.path, source.text, [finding.in_analysed_file() for finding in wanted])
            for change in changes(plan, {os.path.abspath(report.path): source}):
                write(change)
                added += len(plan.edits[change.path])
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as error:
            warnings.append((report.path, f"noqa comments not added: {error}"))
    return added, warnings
