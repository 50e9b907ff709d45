"""JAX's verdict on each mutant, from `harness.py` in each interpreter, cached by text.

A mutant's verdict in one JAX version comes from the cases its target gives it, and counts only
the cases whose unmodified original traces and lowers cleanly (the same harness, the same
version): `bug` (the first case that raises a message the linter predicts: code, message,
phase, line), `clean` (every counted case ran the mutated call and passed), `error` (JAX
raised something no rule predicts), `unreached` (no counted case ran the mutated call),
`original-not-clean`, `skipped`. Across versions: the same bug in every version that says
anything is `bug`; a bug in some and clean in others is `disagree`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HARNESS = Path(__file__).resolve().parent / "harness.py"
CHUNK = 20


# Part of every cache key: change it when a change to the harness changes verdicts.
HARNESS_VERSION = "b636ad753eca"


def _harness_version() -> str:
    return HARNESS_VERSION


class VerdictCache:
    def __init__(self, path: Path | None):
        self.path = path
        self.lock = threading.Lock()
        self.data: dict = {}
        if path is not None and path.exists():
            try:
                self.data = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                self.data = {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        with self.lock:
            self.data[key] = value

    def save(self):
        if self.path is None:
            return
        with self.lock:
            try:  # another run may have saved since: keep its verdicts too
                on_disk = json.loads(self.path.read_text())
            except (OSError, json.JSONDecodeError):
                on_disk = {}
            self.data = {**on_disk, **self.data}
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.data, indent=0, sort_keys=True))
            os.replace(tmp, self.path)


_VERSIONS: dict[str, str] = {}


def jax_version(python: str) -> str:
    if python not in _VERSIONS:
        out = subprocess.run([python, "-c", "import jax, sys; print(jax.__version__, sys.version.split()[0])"],
                             capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
        _VERSIONS[python] = out.stdout.strip() or f"unavailable ({out.stderr.strip()[-200:]})"
    return _VERSIONS[python]


_CALLS: dict[str, dict] = {}


def _site(mutant, original):
    """[first, last] line of the mutated call (the same in the original: mutants keep lines)."""
    import ast
    digest = hashlib.sha256(original.encode()).hexdigest()
    if digest not in _CALLS:
        _CALLS[digest] = {(n.lineno, n.col_offset): [n.lineno, n.end_lineno]
                          for n in ast.walk(ast.parse(original)) if isinstance(n, ast.Call)}
    return _CALLS[digest].get((mutant.line, mutant.col), [mutant.line, mutant.line])


def _key(version, spec, cases, text, site):
    blob = json.dumps([_harness_version(), version, spec, cases, site], sort_keys=True) + "\0" + text
    return hashlib.sha256(blob.encode()).hexdigest()


def _run_chunk(python, spec, jobs, cache, log):
    with tempfile.TemporaryDirectory(prefix="pallas-realcode-") as tmp:
        payload = dict(spec, jobs=[])
        for n, (key, text, cases, site, basename) in enumerate(jobs):
            d = Path(tmp) / str(n)
            d.mkdir()
            path = d / basename
            path.write_text(text, encoding="utf-8")
            payload["jobs"].append({"id": key, "file": str(path), "site": site, "cases": cases})
        spec_path = Path(tmp) / "jobs.json"
        spec_path.write_text(json.dumps(payload))
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}
        try:
            proc = subprocess.run([python, str(HARNESS), str(spec_path)], capture_output=True, text=True,
                                  timeout=300 + 120 * len(jobs), env=env, cwd=tmp)
            stdout, stderr = proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            stdout, stderr = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or ""), "timeout"
        seen = set()
        for line in stdout.splitlines():
            if line.startswith("RESULT "):
                out = json.loads(line[7:])
                cache.put(out["id"], out)
                seen.add(out["id"])
        for key, *_ in jobs:
            if key not in seen:
                cache.put(key, {"id": key, "cases": [], "error": {"phase": "harness", "code": None,
                                                                  "message": f"harness died: {stderr[-1500:]}"}})
        cache.save()
        log(f"  {python_label(python)}: {len(jobs)} jobs of {spec['module']} judged")


def python_label(python):
    return jax_version(python).split()[0]


def _version_verdict(orig, mut):
    """One JAX version's verdict on a mutant from the original's and the mutant's results."""
    if orig is None or mut is None:
        return {"status": "not-judged"}
    if orig.get("error"):
        return {"status": "original-not-clean", "message": orig["error"].get("message", "")[:300]}
    clean_cases = {c["name"] for c in orig["cases"] if c["status"] == "clean"}
    if not clean_cases:
        why = "; ".join(f"{c['name']}: {c['status']} {c.get('message', '')[:120]}" for c in orig["cases"][:3])
        return {"status": "original-not-clean", "message": why}
    if mut.get("error"):
        e = mut["error"]
        if e.get("code"):
            return {"status": "bug", **{k: e.get(k) for k in ("code", "message", "line", "phase")}}
        return {"status": "error", "message": e.get("message", "")[:300]}
    counted = [c for c in mut["cases"] if c["name"] in clean_cases]
    partial = len(clean_cases) < len(orig["cases"])  # some configurations could not be judged
    for c in counted:
        if c["status"] == "bug":
            return {"status": "bug", "case": c["name"], **{k: c.get(k) for k in ("code", "message", "line", "phase")}}
    for c in counted:
        if c["status"] == "error":
            return {"status": "error", "case": c["name"], "message": c.get("message", "")[:300],
                    "line": c.get("line"), "phase": c.get("phase")}
    if any(c["status"] == "clean" and c.get("reached") for c in counted):
        return {"status": "clean", "partial": partial}
    if any(c["status"] == "clean" for c in counted):
        return {"status": "unreached"}
    return {"status": "skipped"}


def merge(per_version: dict) -> dict:
    informative = {v: r for v, r in per_version.items() if r["status"] in ("bug", "clean", "error")}
    if not informative:
        first = next(iter(per_version.values()), {"status": "not-judged"})
        return {**first, "jax": "+".join(per_version), "per_version": per_version}
    statuses = {r["status"] for r in informative.values()}
    bugs = {v: r for v, r in informative.items() if r["status"] == "bug"}
    first = next(iter(bugs.values()), None) or next(iter(informative.values()))
    out = {**first, "jax": "+".join(informative), "per_version": per_version}
    if len(statuses) > 1:
        out["status"] = "disagree"
    elif bugs and len({(r.get("code"), r.get("line")) for r in bugs.values()}) > 1:
        out["status"] = "disagree"
    return out


def judge(work, pythons, cache: VerdictCache, *, linter_only=False, jobs=2, log=None):
    """[(source, mutant, merged verdict)] for work = [(source, target, mutant)]."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    pythons = [os.path.abspath(p) if os.sep in p else p for p in pythons]
    versions = {p: jax_version(p) for p in pythons} if not linter_only else {}
    plan = []  # (source, mutant, {python: (orig_key, mut_key)}) or a fixed verdict
    todo: dict = {}  # (python, source label) -> [(key, text, cases, site, basename)]
    specs = {}
    for source, target, mutant in work:
        cases = target.cases_for(mutant, source)
        if not cases:
            plan.append((source, mutant, None))
            continue
        spec = target.spec(source)
        basename = source.rel.rsplit("/", 1)[-1]
        basename = basename[:-3] + ".py" if basename.endswith(".md") else basename
        site = _site(mutant, source.text)
        keys = {}
        for python in pythons:
            version = versions.get(python) or _cached_version(cache, python)
            if version is None:  # --linter-only with an interpreter not seen before: ask it
                version = versions[python] = jax_version(python)
            orig_key = _key(version, spec, cases, source.text, None)
            mut_key = _key(version, spec, cases, mutant.text, site)
            keys[version] = (orig_key, mut_key)
            group = todo.setdefault((python, source.label), [])
            specs[(python, source.label)] = spec
            for k, text, s in ((orig_key, source.text, None), (mut_key, mutant.text, site)):
                if cache.get(k) is None and all(k != j[0] for j in group):
                    group.append((k, text, cases, s, basename))
        plan.append((source, mutant, keys))
    if not linter_only:
        for python in pythons:
            cache.put(f"version:{python}", versions[python])
        chunks = []
        for (python, label), group in todo.items():
            # originals first: they decide which cases count
            group.sort(key=lambda j: j[3] is not None)
            for i in range(0, len(group), CHUNK):
                chunks.append((python, specs[(python, label)], group[i:i + CHUNK]))
        if chunks:
            log(f"judging {sum(len(c[2]) for c in chunks)} jobs in {len(chunks)} chunks with {jobs} processes")
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for f in [pool.submit(_run_chunk, p, s, g, cache, log) for p, s, g in chunks]:
                    f.result()
    out = []
    for source, mutant, keys in plan:
        if keys is None:
            out.append((source, mutant, {"status": "no-harness-case"}))
            continue
        per_version = {v: _version_verdict(cache.get(o), cache.get(m)) for v, (o, m) in keys.items()}
        merged = merge(per_version)
        merged["keys"] = sorted({k for pair in keys.values() for k in pair})
        out.append((source, mutant, merged))
    return out


def _cached_version(cache, python):
    return cache.get(f"version:{python}")


_PATHS = re.compile(r"(/[\w.+-]+)+/(site-packages|dist-packages)/|(?<![\w.])/(tmp|work|root|home|Users)/[^\s'\"]*")


def _scrub(value):
    if isinstance(value, str):
        return _PATHS.sub("<path>/", value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k != "traceback"}
    return value


def record(cache: VerdictCache, judged, path: Path) -> int:
    """Write the harness results behind `judged` (no tracebacks, no machine paths) to `path`:
    what `tests/test_real_mutants.py` reads instead of running JAX again."""
    keys = sorted({k for _, _, verdict in judged for k in verdict.get("keys", ())})
    data = {k: _scrub(cache.get(k)) for k in keys if cache.get(k) is not None}
    path.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    return len(data)
