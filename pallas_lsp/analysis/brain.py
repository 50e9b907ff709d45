"""An astroid brain for jax: the Pallas API stand-ins of `api.STUBS`, and nothing else of jax.

astroid normally finds `jax` on `sys.path` and parses it: several hundred files, slow, and
pointless, since the behaviour we model lives in lowering code no inference could follow. Where
jax is not installed the import simply fails. Either way we want the same answer, so every
`jax.*` module is served from here: the modelled ones from their stub source, all others as
empty modules (names in them infer to nothing, and the analysis stays silent about them).

astroid offers failed-import hooks but no hook that runs *before* the file-system search, so
`install` wraps `AstroidManager.ast_from_module_name` for the `jax` namespace only.

An editor knows texts that are not on disk yet: `overlaid({path: text})` makes astroid build
those files from the given text (`AstroidBuilder.file_build` is wrapped for that).

Building a huge module can take longer than the analysis budget, so `TreeRebuilder.visit` is
wrapped too: under `deadline(...)` it stops the build once the budget is spent.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import threading
import time
from typing import Callable, Iterator, Mapping

from astroid import nodes
from astroid.builder import AstroidBuilder
from astroid.manager import AstroidManager
from astroid.rebuilder import TreeRebuilder

from . import api
from .solve import BudgetExceeded, Cancelled

_STUB_DIR = "<pallas-lsp stubs>"
_lock = threading.Lock()
_installed = False


def is_jax_module(modname: str | None) -> bool:
    return modname is not None and (modname == "jax" or modname.startswith("jax."))


def stub_module(modname: str) -> nodes.Module:
    """The stand-in for `modname` (a `jax.*` name), built once and cached by astroid."""
    manager = AstroidManager()
    cached = manager.astroid_cache.get(modname)
    if cached is not None and getattr(cached, "pallas_stub", False):
        return cached
    source = api.STUBS.get(modname, "")
    filename = "__init__.py" if modname in api.PACKAGES else modname.rsplit(".", 1)[-1] + ".py"
    path = f"{_STUB_DIR}/{modname.replace('.', '/')}/{filename}"
    module = AstroidBuilder(manager).string_build(source, modname, path)
    module.pallas_stub = True
    manager.astroid_cache[modname] = module
    return module


_overlays: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("pallas_overlays", default={})


@contextlib.contextmanager
def overlaid(texts: Mapping[str, str] | None) -> Iterator[None]:
    """While active, files named in `texts` are read from there instead of the disk."""
    token = _overlays.set({os.path.abspath(path): text for path, text in (texts or {}).items()})
    try:
        yield
    finally:
        _overlays.reset(token)


def overlay_text(path: str) -> str | None:
    overlays = _overlays.get()
    return overlays.get(os.path.abspath(path)) if overlays else None


_deadline: contextvars.ContextVar[tuple[float, Callable[[], bool]] | None] = contextvars.ContextVar(
    "pallas_deadline", default=None)
_visits = 0


@contextlib.contextmanager
def deadline(until: float, cancelled: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """While active, building astroid trees raises BudgetExceeded past `until` (a
    `time.monotonic()` value) and Cancelled once `cancelled()` is true."""
    token = _deadline.set((until, cancelled))
    try:
        yield
    finally:
        _deadline.reset(token)


def _check_deadline() -> None:
    limit = _deadline.get()
    if limit is None:
        return
    if limit[1]():
        raise Cancelled()
    if time.monotonic() > limit[0]:
        raise BudgetExceeded()


def _bounded_build(original):
    def visit(self, node, parent):
        global _visits
        _visits += 1
        if not _visits & 1023:  # the clock is read once per 1024 nodes
            _check_deadline()
        return original(self, node, parent)

    return visit


def _wrap(owner: type, name: str, make) -> None:
    original = getattr(owner, name)
    if getattr(original, "pallas_guard", False):
        original = original.__wrapped__
    wrapper = functools.wraps(original)(make(original))
    wrapper.pallas_guard = True
    setattr(owner, name, wrapper)


def _stub_imports(original):
    def ast_from_module_name(self, modname, context_file=None, use_cache=True):
        if is_jax_module(modname):
            return stub_module(modname)
        return original(self, modname, context_file, use_cache)

    return ast_from_module_name


def _overlay_files(original):
    def file_build(self, path, modname=None):
        text = overlay_text(path) if path else None
        if text is not None:
            return self.string_build(text, modname or os.path.splitext(os.path.basename(path))[0], path)
        return original(self, path, modname)

    return file_build


def install() -> None:
    """Register the brain with astroid's manager (idempotent; safe after `clear_cache`)."""
    global _installed
    with _lock:
        if _installed and getattr(AstroidManager.ast_from_module_name, "pallas_guard", False):
            return
        _wrap(AstroidManager, "ast_from_module_name", _stub_imports)
        _wrap(AstroidBuilder, "file_build", _overlay_files)
        _wrap(TreeRebuilder, "visit", _bounded_build)
        _installed = True
