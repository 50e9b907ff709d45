"""The flow of one file: prefilter -> astroid module -> rules -> findings.

`analyze_source` never raises: a file we cannot read, parse or analyse within its budget gives
no findings and a one-line reason, which frontends log (flake8 at debug level, the server through
`window/logMessage`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.machinery
import logging
import os
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, TypedDict

from astroid.exceptions import AstroidSyntaxError
from astroid import nodes
from astroid.manager import AstroidManager

from . import brain, noqa
from .context import Context
from .facts import Fact, facts
from .findings import Finding
from .prefilter import (Bindings, ReadNames, applicable, buffers_differ, mentions_pallas, module_name, package_of,
                        project_root)
from .rules import RULES, Rule
from .project import BudgetExceeded, Cancelled, budget_clock
from .reparse import parse
from .session import DEFAULT_SESSION, Session
from .settings import Settings, prefixes
from .source import Lines, decode

if TYPE_CHECKING:
    from typing_extensions import Unpack


log = logging.getLogger("pallas_lsp")

DEFAULT_BUDGET_SECONDS = 10.0


@dataclass
class Result:
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # why nothing could be said about the file
    silenced: int = 0  # findings a noqa comment silenced (see `lint`)
    dependencies: tuple[str, ...] = ()  # files of the project modules the analysis read
    facts: list[Fact] = field(default_factory=list)  # for hovers, when asked for


def select_rules(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[Rule]:
    """Rules whose code starts with a `select` prefix and with no `ignore` prefix (`ALL`
    is the prefix of every code)."""
    select = prefixes(select or ("PLS",))
    ignore = prefixes(ignore or ())
    return [
        rule for rule in RULES
        if rule.code.startswith(select) and not (ignore and rule.code.startswith(ignore))
    ]


class BytesOptions(TypedDict, total=False):
    """What `analyze_file` and `analyze_bytes` take: `analyze_source`'s rule choice and budget."""

    select: Iterable[str] | None
    ignore: Iterable[str] | None
    budget: float


class LintOptions(TypedDict, total=False):
    """What `lint` hands on to `analyze_source` (the settings give the rest)."""

    cancel: threading.Event | None
    overlays: Mapping[str, str] | None
    want_facts: bool
    tree: ast.Module | None
    session: Session


def analyze_file(path: str, **options: Unpack[BytesOptions]) -> Result:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        return Result(error=f"cannot read {path}: {error.strerror}")
    return analyze_bytes(data, path, **options)


def analyze_bytes(data: bytes, path: str | None = None, **options: Unpack[BytesOptions]) -> Result:
    rules = select_rules(options.get("select"), options.get("ignore"))
    if not mentions_pallas(data, rules, path):
        return Result()
    try:
        text = decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return Result(error=f"cannot decode: {error}")
    return _analyze_decoded(_Job(text, path, rules, options.get("budget", DEFAULT_BUDGET_SECONDS)))


def analyze_source(
    text: str,
    path: str | None = None,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
    cancel: threading.Event | None = None,
    overlays: Mapping[str, str] | None = None,
    want_facts: bool = False,
    tree: ast.Module | None = None,
    session: Session = DEFAULT_SESSION,
) -> Result:
    """Analyse `text` as the file `path`. `cancel` stops the analysis early (the result then
    says so); `overlays` give texts of other files that differ from the disk (unsaved buffers);
    `want_facts` adds what is known about allocations and operands (for hovers); `tree` is
    the stdlib AST of `text` when the caller has parsed it already (flake8 has); `session` the
    process state to analyse in (the language server hands in its own)."""
    rules = select_rules(select, ignore)
    if not rules:
        return Result()
    probed: set[str] = set()  # what the prefilter's verdict read of the project (its modules' files)
    with buffers_differ(bool(overlays)):  # (the prefilter reads the other files from the disk)
        if not mentions_pallas(text, rules, path, probed):
            return Result(dependencies=tuple(sorted(probed)))
        return _analyze_decoded(_Job(text, path, rules, budget, cancel, overlays, want_facts, tree, session))


def lint(text: str, path: str | None, settings: Settings, **options: Unpack[LintOptions]) -> Result:
    """What the CLI and the server report: the rules `settings` select for `path`, minus what
    a `# noqa` comment silences. `options` are those of `analyze_source`."""
    result = analyze_source(
        text, path, select=settings.select, ignore=settings.ignored_for(path), budget=settings.budget,
        **options,
    )
    overlays = options.get("overlays") or {}
    result.findings, result.silenced = noqa.unsilenced(
        result.findings, text, lambda other: overlays.get(other) if other in overlays else _disk_text(other))
    return result


def warm_project(path: str) -> None:
    """Read what the analysis of a file at `path` reads of its project first (who else uses
    its names: `trace.callers`), in a process whose children will analyse files there."""
    from .trace.callers import Callers  # noqa: PLC0415 - the tracer, loaded with the engine

    Callers(path, project_root(path)).warm()


def read_text(path: str) -> str | None:
    """A file's text from the disk (None when it cannot be read or decoded)."""
    return _disk_text(path)


def _disk_text(path: str) -> str | None:
    try:
        with open(path, "rb") as file:
            return decode(file.read())
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None


@dataclass
class _Job:
    text: str
    path: str | None
    rules: list[Rule]
    budget: float = DEFAULT_BUDGET_SECONDS
    cancel: threading.Event | None = None
    overlays: Mapping[str, str] | None = None
    want_facts: bool = False
    tree: ast.Module | None = None
    session: Session = DEFAULT_SESSION
    dependencies: tuple[str, ...] = ()
    facts: list[Fact] = field(default_factory=list)


def _analyze_decoded(job: _Job) -> Result:
    """The analysis proper, once the prefilter has let the file through."""
    started = budget_clock()
    path = job.path
    try:
        with job.session.collector_paused():
            findings = _analyze(job, started + job.budget)
    except Cancelled:
        return _failed(job, "cancelled")
    except BudgetExceeded:
        return _failed(job, f"analysis budget of {job.budget:g} s exceeded")
    except SyntaxError as error:
        where = f" at line {error.lineno}" if error.lineno else ""
        return _failed(job, f"syntax error{where}: {error.msg}")
    except AstroidSyntaxError as error:
        cause = error.error if isinstance(error.error, SyntaxError) else None
        where = f" at line {cause.lineno}" if cause is not None else ""
        return _failed(job, f"syntax error{where}: {cause.msg if cause is not None else error}")
    except RecursionError:
        return _failed(job, "nesting too deep to analyse")
    except Exception as error:  # noqa: BLE001 - a linter must not take its host down
        log.debug("internal error analysing %s", path, exc_info=True)
        return _failed(job, f"internal error: {type(error).__name__}: {error}")
    log.debug("analysed %s in %.3f s of CPU", path, budget_clock() - started)
    return Result(findings, dependencies=job.dependencies, facts=job.facts)


def _failed(job: _Job, reason: str) -> Result:
    log.debug("%s: no analysis: %s", job.path or "<buffer>", reason)
    return Result(error=reason, dependencies=job.dependencies)


def _tree_of(job: _Job) -> Callable[[], ast.Module]:
    """The stdlib tree on demand: the caller's, else parsed once when first asked for (only
    where it changed, in a session that keeps trees)."""
    given = job.tree
    if given is not None:
        return lambda: given
    parses = job.session.parses
    parse_once = functools.partial(parses.parse, job.text, job.path) if parses is not None else functools.partial(
        parse, job.text)
    return functools.lru_cache(maxsize=None)(parse_once)


def _analyze(job: _Job, deadline: float) -> list[Finding]:
    tree = _tree_of(job)
    name = module_name(job.path)
    package = package_of(job.path, name)
    walks = job.session.walks
    bindings = functools.lru_cache(maxsize=None)(
        lambda: walks.bindings(tree(), package, job.path) if walks is not None else Bindings.of(tree(), package))
    probed: set[str] = set()  # what the verdict read of the project's modules
    job.rules = applicable(job.rules, job.text, bindings, job.path, package, probed, walk_first=walks is not None)
    if not job.rules:
        job.dependencies = tuple(sorted(probed))
        return []
    brain.install()
    manager = AstroidManager()
    root = project_root(job.path)
    cancelled = job.cancel.is_set if job.cancel is not None else (lambda: False)
    with _importable_from(root), brain.overlaid(job.overlays), brain.deadline(deadline, cancelled), \
            brain.memoized_lookups(), warnings.catch_warnings():
        # the analysed code's own SyntaxWarnings (`"x"()`, bad escapes) are not ours to print
        warnings.simplefilter("ignore", SyntaxWarning)
        _enter_project(root)
        _drop_changed_modules(manager)
        set_aside = _make_way_for(manager, name)
        with brain.requested_modules() as read:
            try:
                trees = job.session.trees
                module = (trees.build if trees is not None else brain.build)(manager, job.text, name, job.path, tree())
                return _run_rules(module, job, root, deadline, bindings().read_names())
            finally:
                job.dependencies = _keep_project_modules(manager, name, root, read)
                _put_back(manager, name, set_aside)
                brain.forget_inferences()


def _run_rules(module: nodes.Module, job: _Job, root: str | None, deadline: float,
               names: ReadNames) -> list[Finding]:
    ctx = Context(module, Lines(job.text), job.path, names)
    ctx.project.deadline = deadline
    ctx.project.project_root = root
    ctx.traces = job.session.traces
    if job.cancel is not None:
        ctx.project.cancelled = job.cancel.is_set
    findings: list[Finding] = []
    for rule in job.rules:
        findings.extend(rule.check(ctx))
        ctx.project.check_time()
    if job.want_facts:
        job.facts = _facts(ctx)
    return sorted(findings, key=lambda f: (f.span.line, f.span.col, f.code))


def _facts(ctx: Context) -> list[Fact]:
    """Hover facts are a bonus: when they fail, the findings still count."""
    try:
        return facts(ctx)
    except (Cancelled, BudgetExceeded):
        raise
    except Exception:  # noqa: BLE001
        log.debug("no hover facts", exc_info=True)
        return []


# Project modules astroid keeps between analyses, with the state of their source when they
# were read: their file and its stamp (the editor's text for it, else size and modification
# time). An analysis first drops those whose source has changed since.
_kept: dict[str, tuple[str | None, object]] = {}  # modname -> its file (None: a namespace package), stamp


def _keep_project_modules(manager: AstroidManager, name: str, root: str | None, read: set[str]) -> tuple[str, ...]:
    """Drop the analysed module (its text is built anew each time), keep the project modules
    it imported for the next analyses, and return the files of those it read (what the
    analysis depended on)."""
    manager.astroid_cache.pop(name, None)
    if root is None:
        return ()
    if os.path.basename(root) in ("site-packages", "dist-packages"):
        root = os.path.join(root, name.split(".")[0])  # an installed package: only itself
    prefix = os.path.join(root, "")
    files = set()
    for modname, module in list(manager.astroid_cache.items()):
        file = module.file
        if not file and _in_namespace_package(module, prefix) and modname not in _kept:
            _kept[modname] = (None, _namespace_stamp(module))
        if not file or not os.path.isabs(file) or getattr(module, "pallas_stub", False) or not file.startswith(prefix):
            continue
        if modname not in _kept:
            _kept[modname] = (file, _source_stamp(file))
        if modname in read:
            files.add(os.path.abspath(file))
    return tuple(sorted(files))


def _drop_changed_modules(manager: AstroidManager) -> None:
    """Forget the kept project modules whose source has changed (on disk or in an editor's
    overlay) or that astroid no longer holds."""
    for modname, (file, stamp) in list(_kept.items()):
        cached = manager.astroid_cache.get(modname)
        if cached is None or cached.file != file or (
                _source_stamp(file) if file else _namespace_stamp(cached)) != stamp:
            del _kept[modname]
            manager.astroid_cache.pop(modname, None)
            if not file:  # a namespace package no more: astroid must look for it again
                brain.forget_module_lookups(manager)


_SetAside = tuple[nodes.Module, tuple[str | None, object]]


def _make_way_for(manager: AstroidManager, name: str) -> _SetAside | None:
    """The analysed file's tree is the one built from its text, and the one other modules
    import under its name while it is analysed. astroid caches a built module only if its name
    is not known yet: a copy an earlier analysis read from the disk (the analysed file imported
    by a project module, even in a function) would stand in for it wherever a project module
    imports it, and the trace would follow that copy, whose nodes are not the analysed file's
    (its findings moved or doubled). That copy goes first, set aside for `_put_back`. (`jax.*`
    names are our stubs'.)"""
    if brain.is_jax_module(name):
        return None
    kept = _kept.pop(name, None)
    copy = manager.astroid_cache.pop(name, None)
    return (copy, kept) if copy is not None and kept is not None else None


def _put_back(manager: AstroidManager, name: str, set_aside: _SetAside | None) -> None:
    """The copy read from the disk goes back once the analysis is over, while its file is
    unchanged: the analyses of the files that import it go on with the same tree, and so can
    replay the runs they kept (`trace.reuse`, keyed by the trees they saw), where a copy read
    again at each analysis of another file made none match."""
    if set_aside is None:
        return
    copy, (file, stamp) = set_aside
    if file and name not in manager.astroid_cache and _source_stamp(file) == stamp:
        manager.astroid_cache[name] = copy
        _kept[name] = (file, stamp)


def _in_namespace_package(module: nodes.Module, prefix: str) -> bool:
    """A namespace package of the project: directories without `__init__.py`."""
    locations = module.path or []
    return bool(module.package and locations) and all(
        os.path.abspath(location).startswith(prefix) for location in locations)


def _namespace_stamp(module: nodes.Module) -> object:
    """Which of a namespace package's directories have an `__init__.py` now (none had one:
    one that does makes the directory a regular package)."""
    return tuple(os.path.isfile(os.path.join(location, "__init__.py")) for location in module.path or ())


def _source_stamp(path: str) -> object:
    text = brain.overlay_text(path)
    if text is not None:
        return ("overlay", hash(text))
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns)


_sys_path_lock = threading.RLock()


@contextlib.contextmanager
def _importable_from(root: str | None) -> Iterator[None]:
    """Let astroid resolve the file's sibling modules and packages, as the interpreter would
    when running it: the project root goes first on `sys.path` while we analyse."""
    if root is None:
        yield
        return
    with _sys_path_lock:
        sys.path.insert(0, root)
        try:
            yield
        finally:
            sys.path.remove(root)


_roots: dict[str, None] = {}  # every project root analysed in this process; the last is current


def _enter_project(root: str | None) -> None:
    """astroid caches modules by dotted name: `helpers.mma` of one project would otherwise
    stand in for `helpers.mma` of the next one analysed in this process (a server with two
    workspace folders, a test suite with two copies of a tree). Moving to another project
    root (`sys.path` now starts there) drops the modules read from under the other roots seen
    so far (not from under this one: roots may nest), unless the interpreter would still find
    their package where it found it then: an installed package's modules (a kernel importing
    tokamax, after a look at tokamax's own file) or a package both roots import (a project's
    `tests/` and its package), which were all read again at each move."""
    if root is None or (_roots and next(reversed(_roots)) == root):
        return
    _roots.pop(root, None)
    others = tuple(os.path.join(other, "") for other in _roots)
    _roots[root] = None
    manager = AstroidManager()
    if not others:  # where astroid looked for modules before, under another `sys.path`, is not where they are
        _forget_module_locations(manager)
        return
    here = os.path.join(root, "")
    cache = manager.astroid_cache
    still_found = functools.lru_cache(maxsize=None)(lambda top: _found_where_cached(cache, top))
    for name, module in list(cache.items()):
        file = module.file and os.path.abspath(module.file)
        if file and file.startswith(others) and not file.startswith(here) and not still_found(name.partition(".")[0]):
            del cache[name]
    _forget_module_locations(manager)


def _found_where_cached(cache: Mapping[str, nodes.Module], top: str) -> bool:
    """Would the interpreter, with `sys.path` as it is now, import the top-level module or
    package `top` from the file astroid read it from? (Not when another root shadows it, nor
    when only the root it was read under, no longer on `sys.path`, held it; a namespace
    package or a package found by an import hook is not compared: its modules are dropped.)"""
    cached = cache.get(top)
    if cached is None or not cached.file:
        return False
    try:
        spec = importlib.machinery.PathFinder.find_spec(top, sys.path)
    except (ImportError, ValueError, OSError):
        return False
    origin = spec.origin if spec is not None else None
    return origin is not None and os.path.abspath(origin) == os.path.abspath(cached.file)


def _forget_module_locations(manager: AstroidManager) -> None:
    """astroid also remembers where it found each module by name (and `sys.path` is not part
    of the key): forget that too, or `helpers.mma` keeps resolving to the other project."""
    getattr(manager, "_mod_file_cache", {}).clear()
    try:
        from astroid.interpreter._import import spec
    except ImportError:  # pragma: no cover - astroid reorganised
        return
    for cached in (getattr(spec, "_find_spec", None),
                   *(getattr(finder, "find_module", None) for finder in getattr(spec, "_SPEC_FINDERS", ()))):
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()

