"""Run a fixture file under real JAX in a process of its own (`run_fixture.py`) and return its
JSON verdict; `{"error": ...}` when the runner itself fails.

Every fixture still gets a fresh process, but not a fresh interpreter: the processes are forked
from a server process (`_Zygote`) that imported JAX once. A fresh `python run_fixture.py` spent
about 1.5 s of CPU importing JAX per fixture, most of what a fixture costs, and the test suite
runs a few hundred of them. The server never runs JAX itself, so its children fork before any
XLA backend (and its threads) exists. It is the oracle's own process, not multiprocessing's
"forkserver": a process has one of those, and `pallas-lint -j` may have started it already,
without JAX.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import importlib
import itertools
import multiprocessing
import os
import pickle
import sys
import threading
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT = 600
# What the server imports before it forks: JAX and the modules every fixture uses.
PRELOAD = ["jax", "jax.numpy", "jax.experimental.pallas", "jax.experimental.pallas.mosaic_gpu",
           "oracle.run_fixture"]
_ENVIRONMENT = {"JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}


def run_fixture(path: Path, lower: bool = False) -> dict:
    try:
        return _zygote().submit(_in_child, str(path), lower).result(timeout=TIMEOUT)
    except concurrent.futures.TimeoutError:
        return {"error": f"runner took more than {TIMEOUT} s"}
    except RuntimeError as error:
        return {"error": f"runner failed:\n{error}"}


def run_script(script: Path, *args: str) -> str:
    """What `python SCRIPT ARGS...` prints, the script run in a forked child as `__main__`;
    raises RuntimeError with the child's traceback when it fails."""
    return _zygote().submit(_script_in_child, str(script), list(args)).result(timeout=TIMEOUT)


def _in_child(path: str, lower: bool) -> dict:
    """In the forked child: what `run_fixture.py FIXTURE` prints, as a dict."""
    from oracle import run_fixture as runner

    os.chdir(os.path.dirname(path))
    with contextlib.redirect_stdout(sys.stderr):  # what the fixture or JAX prints
        return runner.run(path, lower)


def _script_in_child(script: str, args: list[str]) -> str:
    import io
    import runpy

    sys.argv = [script, *args]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runpy.run_path(script, run_name="__main__")
    return printed.getvalue()


class _Zygote:
    """The client side: tasks go to the server over a pipe, answers come back by task id."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        # spawned with this process's sys.path, on which `oracle` is (this module came from it)
        self._process = context.Process(target=_serve, args=(theirs,), daemon=True,
                                        name="pallas-oracle-zygote")
        self._process.start()
        theirs.close()
        self._lock = threading.Lock()
        self._waiting: dict[int, concurrent.futures.Future] = {}
        self._ids = itertools.count()
        threading.Thread(target=self._receive, daemon=True).start()
        atexit.register(self._connection.close)

    def submit(self, function: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            task = next(self._ids)
            self._waiting[task] = future
            self._connection.send((task, function, args))
        return future

    def _receive(self) -> None:
        while True:
            try:
                task, ok, value = self._connection.recv()
            except (EOFError, OSError):
                with self._lock:
                    waiting, self._waiting = self._waiting, {}
                for future in waiting.values():
                    future.set_exception(RuntimeError("the oracle's server process died"))
                return
            with self._lock:
                future = self._waiting.pop(task)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(RuntimeError(value))


_lock = threading.Lock()
_current: _Zygote | None = None


def _zygote() -> _Zygote:
    global _current
    with _lock:
        if _current is None or not _current._process.is_alive():
            _current = _Zygote()
        return _current


def _serve(connection: Any) -> None:
    """The server: import JAX, then fork one child per task, a CPU's worth at a time."""
    for name, value in _ENVIRONMENT.items():  # JAX reads them when it first makes a backend
        os.environ.setdefault(name, value)
    for module in PRELOAD:
        importlib.import_module(module)
    # its threads only wait on pipes, and a child touches nothing of theirs
    warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks", category=DeprecationWarning)
    sending = threading.Lock()
    slots = threading.Semaphore(os.cpu_count() or 2)
    while True:
        try:
            task, function, args = connection.recv()
        except (EOFError, OSError):
            return
        slots.acquire()
        threading.Thread(target=_fork, args=(connection, sending, slots, task, function, args),
                         daemon=True).start()


def _fork(connection: Any, sending: threading.Lock, slots: threading.Semaphore, task: int,
          function: Callable[..., Any], args: tuple) -> None:
    try:
        ok, value = _in_fork(function, args)
    except BaseException:  # noqa: BLE001 - every task gets an answer, or its caller waits forever
        ok, value = False, traceback.format_exc()
    finally:
        slots.release()
    with sending:
        connection.send((task, ok, value))


_forking = threading.Lock()


def _in_fork(function: Callable[..., Any], args: tuple) -> tuple[bool, Any]:
    reading, writing = os.pipe()
    with _forking:  # one fork at a time (filelock, which JAX imports, refuses concurrent forks)
        pid = os.fork()
    if pid == 0:  # the child: run, write the answer, leave without clean-up, whatever happens
        try:
            os.close(reading)
            _answer(writing, function, args)
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as answered:
        payload = answered.read()
    _, status = os.waitpid(pid, 0)
    if not payload:
        return False, f"the child died (wait status {status})"
    return pickle.loads(payload)


def _answer(writing: int, function: Callable[..., Any], args: tuple) -> None:
    try:
        payload = pickle.dumps((True, function(*args)))
    except BaseException:  # noqa: BLE001 - the caller raises it with this traceback
        payload = pickle.dumps((False, traceback.format_exc()))
    with os.fdopen(writing, "wb") as out:
        out.write(payload)
