"""Real JAX judges generated programs: many programs per process (importing JAX is slow).

Usage (with a Python that has JAX installed)::

    python judge.py [--no-lower] DIR [DIR ...]      # or: --from FILE (one directory a line)

Prints one JSON object per line per program directory (``kernel.py`` is its main file)::

    {"dir": ..., "jax": "0.12.0.1", "findings": [["kernel.py", 31, "PLS001", "trace"], ...],
     "errors": [...], "cases": [{"name", "trace", "lowering"}]}

For each ``case_<name>()`` of ``kernel.py``, in source order, as the fixture oracle does
(``tests/oracle/run_fixture.py``): ``jax.clear_caches()``, the case function, then
``jax.make_jaxpr(fn)(*args)``; an error JAX raises with a message of ``TRACE_MESSAGES`` is a
finding at the innermost traceback frame that lies in one of the program's files (the first
line of the call around it).  Cases that trace cleanly are lowered for CUDA on the CPU
(``jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))``); a lowering error of
``LOWERING_MESSAGES`` is a finding at the ``tcgen05_mma`` equations of the case's jaxpr (their
innermost program frame), ``PLS001|PLS017`` read as PLS001 (the corpus has no PLS017 bug).
Any other exception is listed in ``errors``: a program must be valid apart from its bug.
Importing the module also counts (a ``RefUnion`` built at module level raises there).

Where JAX gives no source line, the finding goes where the rule's docs say (``_Recorder``
records the program's calls of ``plgpu.kernel``, ``pl.run_scoped`` and the tcgen05 ops, with
their arguments and the program frames of the call, while a case is built and traced):

* PLS012: the tcgen05 ops given a ``collective_axis`` (their innermost program frame);
* PLS013: the kernel call when its scratch has collective TMEM, else the ``pl.run_scoped``
  calls allocating it; PLS014: the same for the minority side of the kernel's TMEM (on a tie,
  the side that disagrees with the first allocation); PLS016: the ``pl.run_scoped`` calls
  allocating without ``collective_axes`` (their innermost program frame: the call to fix).
  For PLS013 and PLS014 a ``run_scoped`` call is placed at its innermost frame in the kernel
  call's file (the call there that leads to a helper module making it);
* ``Collective attributes are inconsistent...``: PLS001 when every op that disagrees with the
  kernel's TMEM is an MMA with ``collective_axis`` (a RefUnion member: at the MMA equations,
  as before), else PLS017 at the disagreeing ops that are not such MMAs;
* PLS008 in jax 0.10.2 is a ``DeprecationWarning``: a warning of ``WARNING_MESSAGES`` is a
  finding at the innermost program frame of the stack that issued it.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib.util
import json
import os
import sys
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "oracle"))
import run_fixture as rf


def _program_files(directory: Path) -> dict[str, tuple[str, rf._CallIndex]]:
    files = {}
    for path in sorted(directory.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        files[os.path.realpath(path)] = (path.name, rf._CallIndex(text))
    return files


def _innermost(frames, files) -> tuple[str, int] | None:
    for frame in reversed(frames):
        key = os.path.realpath(frame.filename)
        if key in files:
            rel, index = files[key]
            line = index.first_line(frame.lineno, getattr(frame, "end_lineno", None),
                                    getattr(frame, "colno", None), getattr(frame, "end_colno", None))
            return rel, line
    return None


def _mma_sites(closed_jaxpr, files) -> list[tuple[str, int]]:
    sites: set[tuple[str, int]] = set()
    seen: set[int] = set()

    def walk(jaxpr):
        if id(jaxpr) in seen:
            return
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            if "tcgen05_mma" in eqn.primitive.name:
                tb = getattr(eqn.source_info, "traceback", None)
                for frame in list(getattr(tb, "frames", None) or []):  # innermost first
                    key = os.path.realpath(frame.file_name)
                    if key in files:
                        rel, index = files[key]
                        sites.add((rel, index.first_line(frame.line_num)))
                        break
            for value in eqn.params.values():
                for sub in rf._jaxprs_in(value):
                    walk(sub)

    walk(closed_jaxpr.jaxpr)
    return sorted(sites)


class _Recorder:
    """The program's calls of the APIs whose errors JAX reports without a source line."""

    def __init__(self):
        self.files: dict = {}
        self.on = False
        self.reset()

    def reset(self):
        self.kernels: list[dict] = []  # {"stack", "scratch"}
        self.scopes: list[dict] = []  # {"stack", "types", "collective_axes"}
        self.ops: list[dict] = []  # {"stack", "name", "axis"}

    def stack(self) -> list[tuple[str, int]]:
        out = []
        for frame in traceback.extract_stack()[:-2]:
            key = os.path.realpath(frame.filename)
            if key in self.files:
                rel, index = self.files[key]
                out.append((rel, index.first_line(frame.lineno, getattr(frame, "end_lineno", None),
                                                  getattr(frame, "colno", None),
                                                  getattr(frame, "end_colno", None))))
        return out

    def install(self):
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import mosaic_gpu as plgpu

        rec = self

        def wrap(module, name, record):
            real = getattr(module, name)

            @functools.wraps(real)
            def wrapper(*args, **kwargs):
                if rec.on:
                    stack = rec.stack()
                    if stack:
                        record(stack, args, kwargs)
                return real(*args, **kwargs)

            setattr(module, name, wrapper)

        wrap(plgpu, "kernel", lambda st, a, kw: self.kernels.append(
            {"stack": st, "scratch": kw.get("scratch_types", kw.get("scratch_shapes", ())),
             "cluster_names": tuple(kw.get("cluster_names", ()))}))
        wrap(pl, "run_scoped", lambda st, a, kw: self.scopes.append(
            {"stack": st, "types": list(a[1:]) + [v for k, v in kw.items() if k != "collective_axes"],
             "collective_axes": kw.get("collective_axes", ())}))
        for op, pos in (("tcgen05_mma", 99), ("tcgen05_commit_arrive", 1),
                        ("async_copy_smem_to_tmem", 2)):
            wrap(plgpu, op, lambda st, a, kw, op=op, pos=pos: self.ops.append(
                {"stack": st, "name": op,
                 "axis": kw.get("collective_axis", a[pos] if len(a) > pos else None)}))


def _allocations(tree) -> list:
    """The allocations of a scratch tree (a RefUnion is one)."""
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in _allocations(v)]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in _allocations(v)]
    return [tree]


def _tmem_collective(alloc) -> bool | None:
    """True / False for a TMEM allocation (or a TMEM RefUnion), None for anything else."""
    if str(getattr(alloc, "memory_space", "")).lower() != "tmem":
        return None
    return bool(getattr(alloc, "collective", False))


def _place(rec: _Recorder, code: str) -> list[tuple[str, int]] | None:
    """Where a finding JAX reports without a line goes (module doc); None: cannot tell."""
    if code in ("PLS013", "PLS014", "PLS016") and len(rec.kernels) != 1:
        return None
    kernel = rec.kernels[0] if rec.kernels else None

    def scope_site(scope):
        kfile = kernel["stack"][-1][0]
        mine = [f for f in scope["stack"] if f[0] == kfile]
        return (mine or scope["stack"])[-1]

    if code == "PLS012":  # the axes that are not the kernel's minor-most cluster axis, else all
        given = [op for op in rec.ops if op["axis"] is not None]
        names = [n for k in rec.kernels for n in k["cluster_names"][-1:]]
        wrong = [op for op in given if op["axis"] not in names]
        return sorted({op["stack"][-1] for op in (wrong or given)}) or None
    if code == "PLS016":  # the run_scoped call itself (in a helper module: that line)
        return sorted({s["stack"][-1] for s in rec.scopes
                       if _allocations(s["types"]) and not s["collective_axes"]}) or None
    allocs = [("kernel", c) for c in map(_tmem_collective, _allocations(kernel["scratch"]))
              if c is not None]
    for scope in rec.scopes:
        allocs += [(scope_site(scope), c) for c in map(_tmem_collective,
                                                       _allocations(scope["types"]))
                   if c is not None]
    if code == "PLS013":
        side = {w for w, c in allocs if c}
    elif code == "PLS014":
        n_true = sum(1 for _, c in allocs if c)
        n_false = len(allocs) - n_true
        if n_true == n_false:
            minority = not allocs[0][1]
        else:
            minority = n_true < n_false
        side = {w for w, c in allocs if c == minority}
    else:
        return None
    if "kernel" in side:
        return [kernel["stack"][-1]]
    return sorted(side) or None


def _inconsistent(rec: _Recorder) -> tuple[str, list[tuple[str, int]]] | None:
    """``Collective attributes are inconsistent``: PLS001 (at the MMA equations) or PLS017."""
    allocs = []
    for k in rec.kernels:
        allocs += [c for c in map(_tmem_collective, _allocations(k["scratch"])) if c is not None]
    for scope in rec.scopes:
        allocs += [c for c in map(_tmem_collective, _allocations(scope["types"])) if c is not None]
    collective = any(allocs)
    wrong = [op for op in rec.ops if (op["axis"] is not None) != collective]
    if all(op["name"] == "tcgen05_mma" and op["axis"] is not None for op in wrong):
        return None  # PLS001, placed as before
    return "PLS017", sorted({op["stack"][-1] for op in wrong
                             if not (op["name"] == "tcgen05_mma" and op["axis"] is not None)})


_RECORDER = _Recorder()


@contextlib.contextmanager
def _warnings_to(sink: list, files):
    """Warnings of ``WARNING_MESSAGES``, as (file, line, code): the innermost program frame of
    the stack that issued them."""
    def show(message, category, filename, lineno, file=None, line=None):
        code = rf._classify(message, rf.WARNING_MESSAGES)
        if code is None:
            return
        site = _innermost(traceback.extract_stack(), files)
        if site:
            sink.append((site[0], site[1], code))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", DeprecationWarning)
        warnings.showwarning = show
        yield


def _short(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text if len(text) < 3000 else text[:800] + "\n...\n" + text[-2000:]


def judge(directory: Path, lower: bool = True) -> dict:
    import jax

    directory = directory.resolve()
    files = _program_files(directory)
    main = directory / "kernel.py"
    out = {"dir": str(directory), "jax": jax.__version__, "findings": [], "errors": [], "cases": []}
    findings: set[tuple[str, int, str, str]] = set()
    rec = _RECORDER
    if not getattr(rec, "installed", False):
        rec.install()
        rec.installed = True
    rec.files = files
    warned: list[tuple[str, int, str]] = []
    sys.path.insert(0, str(directory))
    name = "corpus_program_" + directory.name
    try:
        with _warnings_to(warned, files):
            try:
                spec = importlib.util.spec_from_file_location(name, main)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
            except Exception as exc:  # noqa: BLE001
                code = rf._classify(exc, rf.TRACE_MESSAGES)
                site = _innermost(traceback.extract_tb(exc.__traceback__), files)
                if code and site:
                    findings.add((site[0], site[1], code, "import"))
                else:
                    out["errors"].append("import: " + _short(exc))
                module = None
            case_names = [n.name for n in ast.parse(main.read_text(encoding="utf-8")).body
                          if isinstance(n, ast.FunctionDef) and n.name.startswith("case_")]
            for case_name in case_names if module is not None else []:
                entry = {"name": case_name, "trace": None, "lowering": None}
                out["cases"].append(entry)
                jax.clear_caches()
                rec.reset()
                rec.on = True
                try:
                    fn, args = getattr(module, case_name)()
                    traced = jax.make_jaxpr(fn)(*args)
                except Exception as exc:  # noqa: BLE001
                    rec.on = False
                    code = rf._classify(exc, rf.TRACE_MESSAGES)
                    site = _innermost(traceback.extract_tb(exc.__traceback__), files)
                    if code and site:
                        findings.add((site[0], site[1], code, "trace"))
                        entry["trace"] = [site[0], site[1], code, str(exc).splitlines()[0][:200]]
                    else:
                        entry["trace"] = "error"
                        out["errors"].append(f"{case_name} trace: " + _short(exc))
                    continue
                finally:
                    rec.on = False
                if not lower:
                    continue
                jax.clear_caches()
                try:
                    jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
                except Exception as exc:  # noqa: BLE001
                    code = rf._classify(exc, rf.LOWERING_MESSAGES)
                    if code is None:
                        if rf._classify(exc, rf.LOWERING_UNSUPPORTED):
                            entry["lowering"] = "unsupported"
                            continue
                        entry["lowering"] = "error"
                        out["errors"].append(f"{case_name} lowering: " + _short(exc))
                        continue
                    if code == "PLS001|PLS017":
                        other = _inconsistent(rec)
                        if other is None:
                            code, sites = "PLS001", _mma_sites(traced, files)
                        else:
                            code, sites = other
                    elif code == "PLS001":
                        sites = _mma_sites(traced, files)
                    else:
                        sites = _place(rec, code) or []
                    entry["lowering"] = [code, str(exc).splitlines()[0][:200], sites]
                    if len(sites) == 1 or (sites and code not in ("PLS001",)):
                        for site in sites:
                            findings.add((site[0], site[1], code, "lowering"))
                    else:
                        out["errors"].append(
                            f"{case_name} lowering: {code} with {len(sites)} sites {sites}")
    finally:
        rec.on = False
        sys.path.remove(str(directory))
        for key, mod in list(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            if path and os.path.realpath(os.path.dirname(path)) == str(directory):
                del sys.modules[key]
    for site in warned:
        findings.add((*site, "warning"))
    out["findings"] = sorted(list(f) for f in findings)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*")
    parser.add_argument("--from", dest="from_file")
    parser.add_argument("--no-lower", action="store_true")
    ns = parser.parse_args(argv)
    dirs = list(ns.dirs)
    if ns.from_file:
        dirs += [line.strip() for line in Path(ns.from_file).read_text().splitlines() if line.strip()]
    real_stdout = sys.stdout
    for d in dirs:
        with contextlib.redirect_stdout(sys.stderr):
            result = judge(Path(d), lower=not ns.no_lower)
        real_stdout.write(json.dumps(result) + "\n")
        real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
