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
    sys.path.insert(0, str(directory))
    name = "corpus_program_" + directory.name
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
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
                try:
                    fn, args = getattr(module, case_name)()
                    traced = jax.make_jaxpr(fn)(*args)
                except Exception as exc:  # noqa: BLE001
                    code = rf._classify(exc, rf.TRACE_MESSAGES)
                    site = _innermost(traceback.extract_tb(exc.__traceback__), files)
                    if code and site:
                        findings.add((site[0], site[1], code, "trace"))
                        entry["trace"] = [site[0], site[1], code, str(exc).splitlines()[0][:200]]
                    else:
                        entry["trace"] = "error"
                        out["errors"].append(f"{case_name} trace: " + _short(exc))
                    continue
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
                    code = "PLS001" if code == "PLS001|PLS017" else code
                    sites = _mma_sites(traced, files)
                    entry["lowering"] = [code, str(exc).splitlines()[0][:200], sites]
                    if len(sites) == 1:
                        findings.add((sites[0][0], sites[0][1], code, "lowering"))
                    else:
                        out["errors"].append(
                            f"{case_name} lowering: {code} with {len(sites)} MMA sites {sites}")
    finally:
        sys.path.remove(str(directory))
        for key, mod in list(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            if path and os.path.realpath(os.path.dirname(path)) == str(directory):
                del sys.modules[key]
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
