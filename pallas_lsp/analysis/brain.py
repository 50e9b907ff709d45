"""An astroid brain for jax: the Pallas API stand-ins of `api.STUBS`, and nothing else of jax.

astroid normally finds `jax` on `sys.path` and parses it: several hundred files, slow, and
pointless, since the behaviour we model lives in lowering code no inference could follow. Where
jax is not installed the import simply fails. Either way we want the same answer, so every
`jax.*` module is served from here: the modelled ones from their stub source, all others as
empty modules (names in them infer to nothing, and the analysis stays silent about them).

astroid offers failed-import hooks but no hook that runs *before* the file-system search, so
`install` wraps `AstroidManager.ast_from_module_name` for the `jax` namespace only.
"""

from __future__ import annotations

import functools
import threading

from astroid import nodes
from astroid.builder import AstroidBuilder
from astroid.manager import AstroidManager

from . import api

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


def install() -> None:
    """Register the brain with astroid's manager (idempotent; safe after `clear_cache`)."""
    global _installed
    with _lock:
        if _installed and getattr(AstroidManager.ast_from_module_name, "pallas_guard", False):
            return
        original = AstroidManager.ast_from_module_name
        if getattr(original, "pallas_guard", False):
            original = original.__wrapped__

        @functools.wraps(original)
        def ast_from_module_name(self, modname, context_file=None, use_cache=True):
            if is_jax_module(modname):
                return stub_module(modname)
            return original(self, modname, context_file, use_cache)

        ast_from_module_name.pallas_guard = True
        AstroidManager.ast_from_module_name = ast_from_module_name
        _installed = True
