"""Run a fixture file under real JAX in a process of its own (`run_fixture.py`) and return its
JSON verdict; `{"error": ...}` when the runner itself fails.

Every fixture still gets a fresh process, but not a fresh interpreter: the processes are forked
from a server that imported JAX once (multiprocessing's "forkserver", one task per child). A
fresh `python run_fixture.py` spent about 1.5 s of CPU importing JAX per fixture, most of what a
fixture costs, and the test suite runs a few hundred of them. The server never runs JAX itself,
so the children fork before any XLA backend (and its threads) exists.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import functools
import multiprocessing
import os
import sys
import threading
from pathlib import Path
from collections.abc import Iterator

HERE = Path(__file__).resolve().parent
TIMEOUT = 600
# What the server imports before it forks: JAX and the modules every fixture uses.
PRELOAD = ["jax", "jax.numpy", "jax.experimental.pallas", "jax.experimental.pallas.mosaic_gpu",
           "oracle.run_fixture"]
_ENVIRONMENT = {"JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}
_lock = threading.Lock()


def run_fixture(path: Path, lower: bool = False) -> dict:
    pool = _pool()
    try:
        return pool.submit(_in_child, str(path), lower).result(timeout=TIMEOUT)
    except concurrent.futures.TimeoutError:
        return {"error": f"runner took more than {TIMEOUT} s"}
    except concurrent.futures.process.BrokenProcessPool as error:
        # a child died (a crash in JAX): this fixture's verdict, and a new pool for the others
        with _lock:
            if _pool() is pool:
                _pool.cache_clear()
        return {"error": f"runner died: {error}"}


def run_script(script: Path, *args: str) -> str:
    """What `python SCRIPT ARGS...` prints, the script run in a forked child as `__main__`;
    raises RuntimeError with the traceback when it fails."""
    stdout, error = _pool().submit(_script_in_child, str(script), list(args)).result(timeout=TIMEOUT)
    if error:
        raise RuntimeError(error)
    return stdout


def _script_in_child(script: str, args: list[str]) -> tuple[str, str | None]:
    import io
    import runpy
    import traceback

    _set_environment()
    sys.argv = [script, *args]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(script, run_name="__main__")
    except BaseException:  # noqa: BLE001 - the caller raises it with the child's traceback
        return printed.getvalue(), traceback.format_exc()
    return printed.getvalue(), None


def _in_child(path: str, lower: bool) -> dict:
    """In the forked child: what `run_fixture.py FIXTURE` prints, as a dict."""
    from oracle import run_fixture as runner

    _set_environment()
    os.chdir(os.path.dirname(path))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # what the fixture or JAX prints
            return runner.run(path, lower)
    except BaseException as error:  # noqa: BLE001 - the verdict says what went wrong
        return {"error": f"runner failed: {type(error).__name__}: {error}"}


def _set_environment() -> None:
    """JAX's settings for a child (the server may have been started by another pool of this
    process, `pallas-lint -j`'s, without them): read when JAX first makes a backend."""
    for name, value in _ENVIRONMENT.items():
        os.environ.setdefault(name, value)


@functools.cache
def _pool() -> concurrent.futures.ProcessPoolExecutor:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    with _environment(), _importable():
        from multiprocessing import forkserver
        forkserver.ensure_running()  # started now, with JAX's environment and `oracle` importable
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=os.cpu_count() or 2, mp_context=context, max_tasks_per_child=1)
    # shut down before the interpreter tears its modules down (else the pool's clean-up
    # callback runs after `multiprocessing.util` is gone and prints a traceback)
    atexit.register(pool.shutdown, wait=True, cancel_futures=True)
    return pool


@contextlib.contextmanager
def _environment() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in _ENVIRONMENT}
    for name, value in _ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _importable() -> Iterator[None]:
    added = str(HERE.parent) not in sys.path
    if added:
        sys.path.insert(0, str(HERE.parent))
    try:
        yield
    finally:
        if added:
            sys.path.remove(str(HERE.parent))
