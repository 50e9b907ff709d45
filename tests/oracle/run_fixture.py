"""Run one fixture under real JAX and print what JAX says about each case, as JSON.

Usage::

    python run_fixture.py [--lower] FIXTURE.py

Run it in a fresh process per fixture (the test does).  The fixture's directory is put
first on ``sys.path`` so that it can import sibling helper modules (``helpers.*``).

For every top-level ``case_<name>()`` of the fixture, in source order, the runner calls
``jax.clear_caches()``, then the case function, then ``jax.make_jaxpr(fn)(*args)``.  The
trace verdict is ``null`` when that succeeds, ``{"code", "line", "message"}`` when JAX
raises one of the errors the linter predicts, and ``{"error": ...}`` for any other
exception.  With ``--lower`` every case that traced cleanly is also lowered for CUDA on
the CPU (``jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))``); its verdict
is ``null``, ``{"code", "message"}`` for the lowering errors the linter predicts
(``LOWERING_MESSAGES``), ``{"unsupported": ...}`` when this JAX
cannot lower that kind of kernel here at all (``pl.pallas_call`` without a GPU in
jax 0.12, ``pl.kernel`` with scratch operands), or ``{"error": ...}``.

Each case also lists ``lines``: the fixture lines of the equations in its jaxpr
(innermost frame in the fixture) and of the TMEM allocations made while it is built and
traced (``plgpu.TMEM(...)``: the calls around it at its innermost fixture frame, and the
fixture calls on the way there; a module-level allocation counts for every case), used to
tie ``[lowering]`` markers to the case that exercises them (JAX reports allocation errors
without a line).

Output (one JSON object on stdout)::

    {"fixture": ..., "jax": "0.12.0", "python": "3.12.1", "error": null,
     "cases": [{"name": "case_x", "trace": ..., "lowering": ..., "lines": [..]}]}
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import json
import os
import sys
import traceback
import warnings

# Message prefix -> finding code, for errors raised while building or tracing a case.
TRACE_MESSAGES = (
    ("Accumulator Ref must be collective if collective_axis is set.", "PLS001"),
    ("LHS Ref must be collective if collective_axis is set.", "PLS001"),
    ("Some aliased TMEM references are collective and some are not.", "PLS002"),
    ("packed, collective and layout arguments are only supported for TMEM.", "PLS003"),
    ("packed cannot be specified if layout is specified.", "PLS004"),
    ("dtypes narrower than 32-bit require either the packed argument or an explicit TMEM layout",
     "PLS005"),
    ("transforms are not supported for TMEM", "PLS006"),
    ("All aliased Refs must have the same memory space (SMEM or TMEM).", "PLS007"),
    ("TMEM references must have either 128 or 64 rows", "PLS019"),
    # plgpu.kernel's old spelling, jax 0.12: the names fall into **mesh_kwargs.
    ("got an unexpected keyword argument 'out_shape'", "PLS008"),
    ("got an unexpected keyword argument 'scratch_shapes'", "PLS008"),
    ("kernel() takes from 0 to 1 positional arguments", "PLS008"),
    ("Cannot specify both out_shape and out_type.", "PLS008"),
    ("Cannot specify both scratch_shapes and scratch_types.", "PLS008"),
    ("Accumulator must be a TMEM Ref.", "PLS009"),
    ("LHS must be a TMEM/SMEM Ref.", "PLS009"),
    ("RHS must be an SMEM Ref.", "PLS009"),
    ("a_scale must be a TMEM Ref", "PLS009"),
    ("b_scale must be a TMEM Ref", "PLS009"),
    ("MMA barrier must have orders_tensor_core set to True.", "PLS010"),
    ("a_scale and b_scale must both be present or absent.", "PLS011"),
    ("Accumulator and LHS have incompatible shapes.", "PLS018"),
    ("Accumulator and RHS have incompatible shapes.", "PLS018"),
    ("LHS and RHS have incompatible shapes.", "PLS018"),
    # A body missing the scratch ref plgpu.kernel dropped (scratch neither sequence nor mapping).
    ("missing 1 required positional argument", "PLS015"),
)
# Message prefix -> finding code, for warnings issued while building or tracing a case.
WARNING_MESSAGES = (
    ("The out_shape and scratch_shapes arguments to plgpu.kernel are deprecated.", "PLS008"),
)
# Message prefix -> finding code, for errors raised while lowering ("A|B": either code).
LOWERING_MESSAGES = (
    # Warpgroup semantics only (the default from jax 0.11): RefUnion members (PLS001), other
    # tcgen05 ops disagreeing with the kernel's TMEM (PLS017).
    ("Collective attributes are inconsistent across operations in the kernel.", "PLS001|PLS017"),
    ("Unknown cluster axis", "PLS012"),
    ("Can only perform collective MMA along minormost cluster axis.", "PLS012"),
    ("Collective arrivals require the minormost cluster dimension to have size 2", "PLS012"),  # 0.12
    ("Collective arrivals only support (2, 1, 1)-shaped clusters", "PLS012"),  # 0.10.2
    ("Collective TMEM allocations are only supported for clusters with an even number of blocks",
     "PLS013"),
    ("Can't mix collective and non-collective TMEM allocations within the same kernel.", "PLS014"),
    ("Only thread-collective allocations are supported in multithreaded kernels.", "PLS016"),
    ("Only thread-collective allocations are supported in run_scoped.", "PLS016"),  # collective_axes=None
    ("Scoped allocation must have the thread axis in its collective axes.", "PLS016"),  # interpret=...
)
# Lowering that this machine or JAX version cannot do at all, whatever the kernel says:
# reported as {"unsupported": message} rather than as an error.
LOWERING_UNSUPPORTED = (
    # pl.pallas_call lowering needs a GPU device from jax 0.12 on.
    ("No supported GPU devices found", "unsupported"),
    # pl.kernel(mesh=plgpu.Mesh(...), scratch_types=...) traces, but its mpmd_map
    # lowering takes no scratch operands (jax 0.12).
    ("Scratch operands are not supported by the Mosaic GPU mpmd_map lowering", "unsupported"),
    # plgpu.kernel(..., interpret=...) is run by JAX's interpreter, which lowers for the CPU
    # only: Mosaic GPU never lowers it (jax 0.12).
    ("is different from the lowering platform cuda", "unsupported"),
)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class _CallIndex:
    """Maps a position reported by a frame to the first line of the call around it."""

    def __init__(self, source: str):
        self.calls: list[ast.Call] = [
            node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
        ]

    def enclosing_lines(self, lineno, end_lineno=None, colno=None, end_colno=None) -> list[int]:
        """The first lines of every call around a position (the whole line when no column)."""
        found = []
        for call in self.calls:
            if colno is None or end_lineno is None or end_colno is None:
                contains = call.lineno <= lineno <= call.end_lineno
            else:
                contains = (call.lineno, call.col_offset) <= (lineno, colno) and \
                    (end_lineno, end_colno) <= (call.end_lineno, call.end_col_offset)
            if contains:
                found.append(call.lineno)
        return found

    def first_line(self, lineno, end_lineno=None, colno=None, end_colno=None) -> int:
        if lineno is None:
            return lineno
        if colno is None and any(call.lineno == lineno for call in self.calls):
            return lineno
        start = (lineno, colno if colno is not None else 0)
        end_line = end_lineno if end_lineno is not None else lineno
        end = (end_line, end_colno if end_colno is not None else 10**9)
        best = None
        for call in self.calls:
            c_start = (call.lineno, call.col_offset)
            c_end = (call.end_lineno, call.end_col_offset)
            if colno is None:
                # Only a line is known: any call whose lines include it.
                contains = call.lineno <= lineno <= call.end_lineno
            else:
                contains = c_start <= start and end <= c_end
            if not contains:
                continue
            size = (call.end_lineno - call.lineno, call.end_col_offset - call.col_offset)
            if best is None or size < best[0]:
                best = (size, call)
        if best is None:
            return lineno
        return best[1].lineno


def _classify(exc: BaseException, table) -> str | None:
    text = str(exc)
    for prefix, code in table:
        if text.startswith(prefix) or prefix in text:
            return code
    return None


def _jax_error(exc: BaseException) -> BaseException:
    """The exception JAX raised: `exc`, or the cause or context it was raised from (a handler's
    `raise RuntimeError(...) from e` ends the program with JAX's error as its cause)."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        if _classify(error, TRACE_MESSAGES) is not None:
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return exc


def _innermost(exc: BaseException, fixture: str) -> list | None:
    """[file relative to the fixture's directory, line] of the innermost frame under that
    directory: JAX's traceback points there (a helper module's MMA, say)."""
    directory = os.path.dirname(os.path.abspath(fixture))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename).startswith(directory + os.sep)]
    if not frames:
        return None
    return [os.path.relpath(os.path.abspath(frames[-1].filename), directory), frames[-1].lineno]


def _fixture_frame(exc: BaseException, fixture: str):
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if _same_file(f.filename, fixture)]
    return frames[-1] if frames else None


@contextlib.contextmanager
def _recording_warnings(fixture: str, index: _CallIndex, sink: list):
    """Warnings we predict, as ``{code, line, message}``, placed like errors: at the
    innermost frame of the fixture in the stack that issued them."""
    def show(message, category, filename, lineno, file=None, line=None):
        code = _classify(message, WARNING_MESSAGES)
        frames = [f for f in traceback.extract_stack() if _same_file(f.filename, fixture)]
        if code is None or not frames:
            return
        frame = frames[-1]
        line = index.first_line(frame.lineno, getattr(frame, "end_lineno", None),
                                getattr(frame, "colno", None), getattr(frame, "end_colno", None))
        sink.append({"code": code, "line": line, "message": str(message)})

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield


def _error_text(exc: BaseException) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines)
    if len(text) > 6000:
        text = text[:1500] + "\n...\n" + text[-4500:]
    return text


def _eqn_lines(closed_jaxpr, fixture: str, index: _CallIndex) -> list[int]:
    """Fixture lines of the case's equations, nested jaxprs included: the kernel call
    (``plgpu.kernel(...)(x)`` inside a fixture function), its MMAs, commits, copies."""
    lines: set[int] = set()
    seen: set[int] = set()

    def frames_of(eqn):
        tb = getattr(eqn.source_info, "traceback", None)
        return list(getattr(tb, "frames", None) or [])

    def walk(jaxpr):
        if id(jaxpr) in seen:
            return
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            for frame in frames_of(eqn):  # innermost first
                if _same_file(frame.file_name, fixture):
                    lines.add(index.first_line(frame.line_num))
                    break
            for value in eqn.params.values():
                for sub in _jaxprs_in(value):
                    walk(sub)

    walk(closed_jaxpr.jaxpr)
    return sorted(lines)


def _record_tmem_allocations(fixture: str, index: _CallIndex, sink: list) -> None:
    """Put into `sink` the fixture lines of every `plgpu.TMEM(...)` and
    `plgpu.ClusterBarrier(...)` call made from now on (JAX checks both when lowering, and
    names no line)."""
    from jax.experimental.pallas import mosaic_gpu as plgpu

    space = type(plgpu.TMEM)
    original = space.__call__

    def record():
        frames = [f for f in traceback.extract_stack()[:-2] if _same_file(f.filename, fixture)]
        for depth, frame in enumerate(reversed(frames)):
            position = (frame.lineno, getattr(frame, "end_lineno", None), getattr(frame, "colno", None),
                        getattr(frame, "end_colno", None))
            sink.append(index.first_line(*position))
            if depth == 0:
                sink.extend(index.enclosing_lines(*position))

    def call(self, *args, **kwargs):
        if self is plgpu.TMEM:
            record()
        return original(self, *args, **kwargs)

    barrier = plgpu.ClusterBarrier

    def cluster_barrier(*args, **kwargs):
        record()
        return barrier(*args, **kwargs)

    space.__call__ = call
    plgpu.ClusterBarrier = cluster_barrier


def _jaxprs_in(value):
    if hasattr(value, "eqns"):
        yield value
    elif hasattr(getattr(value, "jaxpr", None), "eqns"):
        yield value.jaxpr
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _jaxprs_in(item)


def run(fixture: str, lower: bool) -> dict:
    import jax

    fixture = os.path.abspath(fixture)
    with open(fixture, encoding="utf-8") as f:
        source = f.read()
    index = _CallIndex(source)
    result = {
        "fixture": os.path.basename(fixture),
        "jax": jax.__version__,
        "python": sys.version.split()[0],
        "error": None,
        "import_warnings": [],
        "cases": [],
    }

    allocated: list[int] = []
    _record_tmem_allocations(fixture, index, allocated)
    sys.path.insert(0, os.path.dirname(fixture))
    name = "pallas_fixture_" + os.path.splitext(os.path.basename(fixture))[0]
    try:
        spec = importlib.util.spec_from_file_location(name, fixture)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        with _recording_warnings(fixture, index, result["import_warnings"]):
            spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - reported, not swallowed
        result["error"] = "import failed:\n" + _error_text(exc)
        return result

    case_names = [
        node.name for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("case_")
    ]
    if not case_names:
        result["error"] = "no case_<name>() functions"
        return result

    at_import = list(allocated)
    for case_name in case_names:
        allocated[:] = at_import
        entry = {"name": case_name, "trace": None, "lowering": None, "lines": [], "warnings": []}
        result["cases"].append(entry)
        jax.clear_caches()
        traced = None
        try:
            with _recording_warnings(fixture, index, entry["warnings"]):
                fn, args = getattr(module, case_name)()
                traced = jax.make_jaxpr(fn)(*args)
        except Exception as raised:  # noqa: BLE001
            exc = _jax_error(raised)
            code = _classify(exc, TRACE_MESSAGES)
            frame = _fixture_frame(exc, fixture)
            if code is None or frame is None:
                entry["trace"] = {"error": _error_text(exc)}
            else:
                line = index.first_line(
                    frame.lineno,
                    getattr(frame, "end_lineno", None),
                    getattr(frame, "colno", None),
                    getattr(frame, "end_colno", None),
                )
                entry["trace"] = {
                    "code": code,
                    "line": line,
                    "frame_line": frame.lineno,
                    "message": str(exc),
                    "innermost": _innermost(exc, fixture),
                }
            continue
        entry["lines"] = sorted(set(_eqn_lines(traced, fixture, index)) | set(allocated))
        if not lower:
            continue
        jax.clear_caches()
        try:
            jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
        except Exception as exc:  # noqa: BLE001
            code = _classify(exc, LOWERING_MESSAGES)
            if code is not None:
                entry["lowering"] = {"code": code, "message": str(exc)}
            elif _classify(exc, LOWERING_UNSUPPORTED) is not None:
                entry["lowering"] = {"unsupported": str(exc).splitlines()[0]}
            else:
                entry["lowering"] = {"error": _error_text(exc)}
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixture")
    parser.add_argument("--lower", action="store_true",
                        help="also lower every cleanly traced case for CUDA")
    ns = parser.parse_args(argv)
    # Whatever the fixture or JAX prints goes to stderr; stdout carries only the JSON.
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        result = run(ns.fixture, ns.lower)
    json.dump(result, real_stdout, indent=1)
    real_stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
