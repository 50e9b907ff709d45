"""Judge mutants of one real file with real JAX on the CPU (run in a fresh interpreter).

    python harness.py JOBS.json

JOBS.json: {"module": dotted name the file is loaded as, "purge": [package prefixes to forget
between jobs], "sys_path": [...], "intercept": bool, "setup": python run once,
"jobs": [{"id", "file", "site": [first, last line], "cases": [...]}]}. A case is
`{"kind": "call", "name", "code"}` (python that, with the loaded module as `mod`, evaluates to
`(fn, args)`: traced with `make_jaxpr`, then lowered for CUDA) or `{"kind": "test", "class",
"method"}` (every generated test of that method: `setUp` without the GPU checks, the test run
with each kernel call intercepted: the kernel is traced and lowered for CUDA on the arguments'
shapes, then zeros of its output shapes are returned so the test goes on; what the test asserts
afterwards is ignored).

Prints one JSON line per job, `RESULT {"id", "cases": [{"name", "status", ...}]}`: status
`bug` (a message the linter predicts: `code`, `message`, `phase` construct|trace|lower, `line`:
innermost frame of the file, for lowering the call that was lowered), `clean` (it traced and
lowered: `checked` kernels), `error` (anything else JAX raised), `skipped`, with `reached`:
whether a line of the mutated call ran.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import sys
import traceback
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))

from run_fixture import LOWERING_MESSAGES, LOWERING_UNSUPPORTED, TRACE_MESSAGES, _classify

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax
import jax.numpy as jnp
import numpy as np

STATE = {"file": None, "first": None, "checked": 0, "pending": [], "unsupported": None}


class _Recorded(Exception):
    pass


def _frames_in(file, tb_frames):
    return [f for f in tb_frames if os.path.abspath(f.filename) == file]


def _record(exc, phase, outer_stack=()):
    if STATE["first"] is not None:
        return
    frames = _frames_in(STATE["file"], list(outer_stack) + traceback.extract_tb(exc.__traceback__))
    table = LOWERING_MESSAGES if phase == "lower" else TRACE_MESSAGES
    code = _classify(exc, table)
    STATE["first"] = {
        "phase": phase, "code": code, "type": type(exc).__name__,
        "message": str(exc)[:600], "line": frames[-1].lineno if frames else None,
    }


def _struct(x):
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(np.shape(x), x.dtype)
    return x


def check(f, args, kwargs, outer_stack=()):
    """make_jaxpr, then lowering for CUDA; the first error is recorded and raised."""
    jax.clear_caches()
    try:
        out = jax.eval_shape(f, *args, **kwargs)
        jax.make_jaxpr(f)(*args, **kwargs)
    except Exception as exc:
        _record(exc, "trace", outer_stack)
        raise
    jax.clear_caches()
    try:
        jax.jit(f).trace(*args, **kwargs).lower(lowering_platforms=("cuda",))
    except Exception as exc:
        if _classify(exc, LOWERING_UNSUPPORTED) is not None:
            STATE["unsupported"] = str(exc).splitlines()[0][:200]
        else:
            _record(exc, "lower", outer_stack)
            raise
    STATE["checked"] += 1
    return out


def _intercepting(factory):
    def wrapped(*a, **kw):
        if not a or a[0] is None:
            if a:
                a = a[1:]
            return lambda body: wrapped(body, *a, **kw)
        f = factory(*a, **kw)

        def call(*args, **kwargs):
            leaves = jax.tree.leaves((args, kwargs))
            stack = traceback.extract_stack()[:-1]
            structs = jax.tree.map(_struct, (args, kwargs))
            if any(isinstance(x, jax.core.Tracer) for x in leaves):
                STATE["pending"].append((f, structs, stack))
                return f(*args, **kwargs)
            out = check(f, *structs, outer_stack=stack)
            return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), out)

        return call

    wrapped.__wrapped__ = factory
    return wrapped


def install_interception():
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    plgpu.kernel = _intercepting(plgpu.kernel)
    pl.pallas_call = _intercepting(pl.pallas_call)


def relax_gpu_checks():
    from jax._src import test_util as jtu
    jtu.is_cuda_compute_capability_at_least = lambda *a, **k: True
    jtu.is_cuda_compute_capability_equal = lambda *a, **k: True
    jtu.test_device_matches = lambda devices: any(d in ("gpu", "cuda") for d in devices)
    for name in ("skip_unless_sm90a", "skip_unless_sm100a", "skip_unless_tcgen05"):
        if hasattr(jtu.CudaArchSpecificTest, name):
            setattr(jtu.CudaArchSpecificTest, name, lambda self: None)


class _LineTracer:
    def __init__(self, file):
        self.file = file
        self.lines = set()

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename != self.file:
            return None
        return self.local

    def local(self, frame, event, arg):
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self.local


def load(spec, file):
    for name in list(sys.modules):
        if any(name == p or name.startswith(p + ".") for p in spec.get("purge", ())):
            del sys.modules[name]
    module_name = spec["module"]
    mspec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(mspec)
    sys.modules[module_name] = module
    parent, _, leaf = module_name.rpartition(".")
    mspec.loader.exec_module(module)
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], leaf, module)
    return module


def _test_ids(module, class_name, method):
    import ast
    cls = getattr(module, class_name)
    tree = ast.parse(open(module.__file__, encoding="utf-8").read())
    defs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defs |= {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    ids = []
    for name in sorted(dir(cls)):
        if not name.startswith("test"):
            continue
        best = max((d for d in defs if name == d or (name.startswith(d) and name[len(d)] in "0123456789_")),
                   key=len, default=None)
        if best == method:
            ids.append(name)
    return cls, ids[:8]


def _run_case(module, case):
    STATE.update(first=None, checked=0, pending=[], unsupported=None)
    try:
        if case["kind"] == "call":
            fn, args = eval(case["code"], {"mod": module, "jax": jax, "jnp": jnp, "np": np})
            check(fn, args, {})
        else:
            cls = case["cls"]
            test = cls(case["test_id"])
            try:
                test.setUp()
                getattr(test, case["test_id"])()
            finally:
                with contextlib.suppress(Exception):
                    test.doCleanups()
    except unittest.SkipTest as exc:
        if STATE["first"] is None:
            return {"status": "skipped", "message": str(exc)[:200]}
    except Exception as exc:  # noqa: BLE001 - judged below
        if STATE["first"] is None and _classify(exc, TRACE_MESSAGES) is not None:
            _record(exc, "construct")
        elif STATE["first"] is None and case["kind"] == "call":
            return {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:600],
                    "traceback": traceback.format_exc()[-2000:]}
    for f, (args, kwargs), stack in STATE["pending"]:
        if STATE["first"] is not None:
            break
        with contextlib.suppress(Exception):
            check(f, args, kwargs, outer_stack=stack)
    first = STATE["first"]
    if first is not None:
        return {"status": "bug" if first["code"] else "error", **first}
    if STATE["checked"] == 0:
        return {"status": "skipped", "message": "no kernel traced"}
    return {"status": "clean", "checked": STATE["checked"], "unsupported": STATE["unsupported"]}


def main(path):
    spec = json.load(open(path, encoding="utf-8"))
    sys.path[:0] = spec.get("sys_path", [])
    if spec.get("intercept"):
        install_interception()
        relax_gpu_checks()
    if spec.get("setup"):
        exec(spec["setup"], {"jax": jax, "jnp": jnp, "np": np})
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(Exception):
        importlib.import_module(spec["module"])  # the package around it, imported once as it is
    for job in spec["jobs"]:
        file = os.path.abspath(job["file"])
        STATE["file"] = file
        out = {"id": job["id"], "cases": [], "error": None}
        with contextlib.redirect_stdout(sys.stderr):
            try:
                module = load(spec, file)
            except Exception as exc:  # noqa: BLE001
                code = _classify(exc, TRACE_MESSAGES)
                frames = _frames_in(file, traceback.extract_tb(exc.__traceback__))
                out["error"] = {"phase": "import", "code": code, "message": str(exc)[:600],
                                "line": frames[-1].lineno if frames else None,
                                "traceback": traceback.format_exc()[-3000:]}
                module = None
            cases = []
            for case in job["cases"] if module is not None else ():
                if case["kind"] == "test":
                    try:
                        cls, ids = _test_ids(module, case["class"], case["method"])
                    except Exception as exc:  # noqa: BLE001
                        out["cases"].append({"name": f"{case['class']}.{case['method']}", "status": "error",
                                             "message": f"harness: {exc}"})
                        continue
                    cases += [{**case, "cls": cls, "test_id": i, "name": f"{case['class']}.{i}"} for i in ids]
                else:
                    cases.append(case)
            for case in cases:
                tracer = _LineTracer(file)
                sys.settrace(tracer)
                try:
                    verdict = _run_case(module, case)
                except BaseException as exc:  # noqa: BLE001
                    verdict = {"status": "error", "message": f"harness: {type(exc).__name__}: {exc}"[:600]}
                finally:
                    sys.settrace(None)
                first, last = job.get("site") or (0, 0)
                verdict["reached"] = any(first <= n <= last for n in tracer.lines)
                verdict["name"] = case["name"]
                out["cases"].append(verdict)
        real_stdout.write("RESULT " + json.dumps(out) + "\n")
        real_stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
