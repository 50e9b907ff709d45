"""The flow of one file: prefilter -> astroid module -> rules -> findings.

`analyze_source` never raises: a file we cannot read, parse or analyse within its budget gives
no findings and a one-line reason, which frontends log (flake8 at debug level, the server through
`window/logMessage`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable

from astroid.builder import AstroidBuilder
from astroid.exceptions import AstroidSyntaxError
from astroid.manager import AstroidManager

from . import brain, noqa
from .context import Context
from .findings import Finding
from .rules import RULES, Rule
from .settings import Settings
from .solve import BudgetExceeded
from .source import Lines, decode

log = logging.getLogger("pallas_lsp")

DEFAULT_BUDGET_SECONDS = 10.0


@dataclass
class Result:
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # why nothing could be said about the file
    silenced: int = 0  # findings a noqa comment silenced (see `lint`)


def select_rules(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[Rule]:
    """Rules whose code starts with a `select` prefix and with no `ignore` prefix."""
    select = tuple(select or ("PLS",))
    ignore = tuple(ignore or ())
    return [
        rule for rule in RULES
        if rule.code.startswith(select) and not (ignore and rule.code.startswith(ignore))
    ]


def mentions_pallas(text: str | bytes, rules: Iterable[Rule] = RULES) -> bool:
    """The cheap prefilter: does the file contain any word a selected rule starts from?"""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return any(word in data for rule in rules for word in rule.triggers)


def analyze_file(path: str, **options) -> Result:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        return Result(error=f"cannot read {path}: {error.strerror}")
    return analyze_bytes(data, path, **options)


def analyze_bytes(data: bytes, path: str | None = None, **options) -> Result:
    rules = select_rules(options.get("select"), options.get("ignore"))
    if not mentions_pallas(data, rules):
        return Result()
    try:
        text = decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return Result(error=f"cannot decode: {error}")
    return _analyze_decoded(text, path, rules, options.get("budget", DEFAULT_BUDGET_SECONDS))


def analyze_source(
    text: str,
    path: str | None = None,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
) -> Result:
    rules = select_rules(select, ignore)
    if not rules or not mentions_pallas(text, rules):
        return Result()
    return _analyze_decoded(text, path, rules, budget)


def lint(text: str, path: str | None, settings: Settings) -> Result:
    """What the CLI and the server report: the rules `settings` select for `path`, minus what
    a `# noqa` comment silences."""
    result = analyze_source(
        text, path, select=settings.select, ignore=settings.ignored_for(path), budget=settings.budget
    )
    result.findings, result.silenced = noqa.unsilenced(result.findings, text)
    return result


def _analyze_decoded(text: str, path: str | None, rules: list[Rule], budget: float) -> Result:
    """The analysis proper, once the prefilter has let the file through."""
    started = time.monotonic()
    try:
        findings = _analyze(text, path, rules, started + budget)
    except BudgetExceeded:
        return _failed(path, f"analysis budget of {budget:g} s exceeded")
    except SyntaxError as error:
        return _failed(path, f"syntax error at line {error.lineno}: {error.msg}")
    except AstroidSyntaxError as error:
        cause = error.error if isinstance(error.error, SyntaxError) else None
        where = f" at line {cause.lineno}" if cause is not None else ""
        return _failed(path, f"syntax error{where}: {cause.msg if cause is not None else error}")
    except RecursionError:
        return _failed(path, "nesting too deep to analyse")
    except Exception as error:  # noqa: BLE001 - a linter must not take its host down
        log.debug("internal error analysing %s", path, exc_info=True)
        return _failed(path, f"internal error: {type(error).__name__}: {error}")
    log.debug("analysed %s in %.3f s", path, time.monotonic() - started)
    return Result(findings)


def _failed(path: str | None, reason: str) -> Result:
    log.debug("%s: no analysis: %s", path or "<buffer>", reason)
    return Result(error=reason)


def _analyze(text: str, path: str | None, rules: list[Rule], deadline: float) -> list[Finding]:
    brain.install()
    manager = AstroidManager()
    name = module_name(path)
    root = project_root(path)
    with _importable_from(root):
        _enter_project(root)
        module = AstroidBuilder(manager).string_build(text, name, path)
        return _run_rules(manager, module, name, text, path, root, rules, deadline)


def _run_rules(manager, module, name, text, path, root, rules, deadline) -> list[Finding]:
    try:
        ctx = Context(module, Lines(text), path)
        ctx.flow.deadline = deadline
        ctx.flow.project_root = root
        findings: list[Finding] = []
        for rule in rules:
            findings.extend(rule.check(ctx))
            if time.monotonic() > deadline:
                raise BudgetExceeded()
        return sorted(findings, key=lambda f: (f.span.line, f.span.col, f.code))
    finally:
        if manager.astroid_cache.get(name) is module:
            del manager.astroid_cache[name]


_sys_path_lock = threading.RLock()


def project_root(path: str | None) -> str | None:
    """The directory above the file's top-level package: where its imports start from."""
    if not path:
        return None
    root = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(root, "__init__.py")):
        root = os.path.dirname(root)
    return root


@contextlib.contextmanager
def _importable_from(root: str | None):
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
    root drops the modules read from under the other roots seen so far (not from under this
    one: roots may nest)."""
    if root is None or (_roots and next(reversed(_roots)) == root):
        return
    _roots.pop(root, None)
    others = tuple(os.path.join(other, "") for other in _roots)
    _roots[root] = None
    if not others:
        return
    here = os.path.join(root, "")
    manager = AstroidManager()
    cache = manager.astroid_cache
    for name, module in list(cache.items()):
        file = module.file and os.path.abspath(module.file)
        if file and file.startswith(others) and not file.startswith(here):
            del cache[name]
    _forget_module_locations(manager)


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
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


def forget(paths: Iterable[str]) -> None:
    """Drop the astroid modules built from `paths` (files just rewritten, e.g. by a fix in a
    helper module), so that the next analysis importing them reads them again."""
    wanted = {os.path.abspath(path) for path in paths}
    cache = AstroidManager().astroid_cache
    for name, module in list(cache.items()):
        if module.file and os.path.abspath(module.file) in wanted:
            del cache[name]


def module_name(path: str | None) -> str:
    """The dotted name a file would be imported as (packages found by their `__init__.py`)."""
    if not path:
        return "__pallas_lsp_buffer__"
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    parts = [os.path.splitext(filename)[0]]
    if parts[0] == "__init__":
        parts = []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return ".".join(parts) or "__init__"

