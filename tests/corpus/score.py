"""Score the linter on the generated corpus, with real JAX as the judge.

    python tests/corpus/score.py [--seed 0] [-n 400] [--judge PYTHON ...] [--truth FILE]
                                 [--update | --refresh] [--only AXIS=VARIANT ...] [--out DIR]
                                 [--jobs 2] [--disagreements 40]

The linter scored is the ``pallas_lsp`` that this Python imports (run it with a checkout's
own environment to score that checkout).  Truth comes from the committed truth file
(``truth.json`` beside this script: JAX's findings per program code hash and JAX version);
programs missing from it are judged live by each ``--judge`` Python (one with JAX 0.10.x,
one with 0.12.x: ``judge.py`` runs in batches there).  ``--update`` writes the truth file
for exactly this sample (judging only what it lacks), ``--refresh`` judges everything again.
``--only`` scores a subset (``path=fori``, ``bug=member``, ``buggy``, ``clean``).

Printed: per JAX version, recall and precision per axis variant, per bug and per code; the
programs where JAX disagrees with the generator's intent (generator bugs); the programs
where the linter disagrees with JAX, with their file paths, what JAX said and what we said.

A linter finding that JAX confirms only in another version (a RefUnion member used
collectively: JAX 0.11+ reports it when lowering, 0.10.2 lowers it) counts as
``other-version`` in that version's table, neither right nor wrong.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import families  # noqa: E402
import generator  # noqa: E402

TRUTH_FILE = HERE / "truth.json"
FAMILY_TRUTH_FILE = HERE / "truth_families.json"  # the family stream (families.py)
JUDGE = HERE / "judge.py"
VERSIONS = ("0.10", "0.12")  # the JAX minor versions the project supports

Site = tuple  # (file, line, code)
# The codes of the core bugs the corpus is about: the axis rows count only these; every code
# the linter or JAX reports has its own `code=` row.
CORE_CODES = ("PLS001", "PLS002")


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


# ---------------------------------------------------------------------------------------------
# Truth


def load_truth(path: Path = TRUTH_FILE) -> dict:
    if not path.exists():
        return {"format": 1, "jax": {}, "programs": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def save_truth(truth: dict, path: Path = TRUTH_FILE) -> None:
    """One program a line, sorted by hash (small diffs when the generator changes)."""
    programs = sorted(truth["programs"].items())
    lines = ['{"format": 1,', f'"jax": {json.dumps(truth["jax"], sort_keys=True)},', '"programs": {']
    lines += [f"{json.dumps(d)}: {json.dumps(e, sort_keys=True, separators=(',', ':'))}"
              + ("," if i < len(programs) - 1 else "") for i, (d, e) in enumerate(programs)]
    lines += ["}}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _judge_batch(python: str, dirs: list[Path], lower: bool = True, log=None) -> list[dict]:
    """JAX's verdict on each program directory, judged by one process of ``python``."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(str(d) for d in dirs))
        listing = f.name
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    cmd = [python, str(JUDGE), "--from", listing] + ([] if lower else ["--no-lower"])
    results = []
    with tempfile.TemporaryFile("w+") as err:
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
            for line in proc.stdout:
                if line.startswith("{"):
                    results.append(json.loads(line))
                    if log and len(results) % 250 == 0:
                        log(f"  {Path(python).parent.parent.name}: {len(results)} of {len(dirs)}")
            proc.wait()
        finally:
            os.unlink(listing)
        if proc.returncode != 0 or len(results) != len(dirs):
            err.seek(0)
            raise RuntimeError(f"judge {python} failed ({proc.returncode}), {len(results)} of "
                               f"{len(dirs)} results:\n{err.read()[-4000:]}")
    return results


def judge_live(programs, root: Path, pythons: list[str], jobs: int = 2, log=None) -> dict:
    """{minor version: {digest: {"findings": [...], "errors": [...], "jax": version}}}"""
    out: dict[str, dict] = {}
    batches = []
    for python in pythons:
        chunk = max(1, -(-len(programs) // jobs))
        for i in range(0, len(programs), chunk):
            batches.append((python, programs[i:i + chunk]))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [(pool.submit(_judge_batch, py, [root / p.name for p in ps], True, log), ps)
                   for py, ps in batches]
        for future, ps in futures:
            for p, result in zip(ps, future.result()):
                assert Path(result["dir"]).name == p.name
                entry = out.setdefault(minor(result["jax"]), {})
                entry[p.digest] = {"findings": result["findings"], "errors": result["errors"],
                                   "jax": result["jax"]}
    return out


def merge_truth(truth: dict, judged: dict) -> None:
    for ver, per in judged.items():
        for digest, r in per.items():
            truth["jax"][ver] = r["jax"]
            entry = truth["programs"].setdefault(digest, {})
            entry[ver] = {"findings": r["findings"]}
            if r["errors"]:  # the last line of each (no machine paths in the file)
                entry[ver]["errors"] = [e.strip().splitlines()[-1][:300] for e in r["errors"]]


def truth_sites(truth: dict, digest: str, ver: str) -> set[Site] | None:
    entry = truth["programs"].get(digest, {}).get(ver)
    if entry is None:
        return None
    return {(f, line, code) for f, line, code, _phase in entry["findings"]}


def truth_errors(truth: dict, digest: str, ver: str) -> list[str]:
    return truth["programs"].get(digest, {}).get(ver, {}).get("errors", [])


# ---------------------------------------------------------------------------------------------
# The linter


def lint_program(directory: Path) -> set[Site]:
    from pallas_lsp.analysis import analyze_file

    sites: set[Site] = set()
    for path in sorted(directory.glob("*.py")):
        result = analyze_file(str(path))
        if result.error:
            sites.add((path.name, 0, "ERROR"))
        for f in result.findings:
            where = f.span.path
            rel = Path(where).name if where else path.name
            sites.add((rel, f.line, f.code))
    return sites


def lint_all(programs, root: Path) -> dict[str, set[Site]]:
    return {p.digest: lint_program(root / p.name) for p in programs}


# ---------------------------------------------------------------------------------------------
# Scoring


class Counts:
    __slots__ = ("fn", "fp", "other", "programs", "tp")

    def __init__(self):
        self.programs = self.tp = self.fn = self.fp = self.other = 0

    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None


def score(programs, truth: dict, linted: dict[str, set[Site]], ver: str,
          codes: tuple[str, ...] | None = CORE_CODES) -> dict:
    """Per-row counts for one JAX version, the disagreements and the label mismatches.

    ``codes``: the codes the axis rows count (``None``: every code, as for the family
    stream, where each program is about its class's code)."""
    other_vers = [v for v in VERSIONS if v != ver]
    rows: dict[str, Counts] = collections.defaultdict(Counts)
    disagreements, label_mismatch, missing = [], [], []
    for p in programs:
        t = truth_sites(truth, p.digest, ver)
        if t is None:
            missing.append(p)
            continue
        errors = truth_errors(truth, p.digest, ver)
        intent = p.intent(truth["jax"].get(ver, ver + ".0"))
        if t != intent or errors:
            label_mismatch.append((p, t, intent, errors))
        got = linted[p.digest]
        others = set()
        for ov in other_vers:
            others |= truth_sites(truth, p.digest, ov) or set()
        tp_all = t & got
        fn_all = t - got
        fp_all = got - t
        other_all = {s for s in fp_all if s in others}
        fp_all = fp_all - other_all
        core = lambda sites: {s for s in sites if codes is None or s[2] in codes}  # noqa: E731
        tp, fn, fp, other = core(tp_all), core(fn_all), core(fp_all), core(other_all)
        keys = ["all", f"bug={p.bug}", f"bug={p.bug}:{'buggy' if p.buggy else 'clean'}",
                f"stack={len(p.stacked)}"]
        keys += [f"{a}={v}" for a, v in p.stacked.items()]
        keys += [f"{a}=*" for a in p.stacked]
        for key in keys:
            c = rows[key]
            c.programs += 1
            c.tp += len(tp)
            c.fn += len(fn)
            c.fp += len(fp)
            c.other += len(other)
        for code in {s[2] for s in t | got}:
            c = rows[f"code={code}"]
            c.programs += 1
            c.tp += len({s for s in tp_all if s[2] == code})
            c.fn += len({s for s in fn_all if s[2] == code})
            c.fp += len({s for s in fp_all if s[2] == code})
            c.other += len({s for s in other_all if s[2] == code})
        if fn_all or fp_all:
            disagreements.append((p, t, got, fn_all, fp_all))
    return {"rows": rows, "disagreements": disagreements, "label_mismatch": label_mismatch,
            "missing": missing}


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def _row_order(key: str) -> tuple:
    head = key.split("=")[0]
    order = ["all", "code", "bug", "stack"] + list(dict.fromkeys(
        list(generator.AXES) + list(families.FAMILY_AXES)))
    return (order.index(head) if head in order else 99, key)


def format_table(reports: dict[str, dict], codes: tuple[str, ...] | None = CORE_CODES) -> str:
    vers = list(reports)
    keys = sorted({k for r in reports.values() for k in r["rows"]}, key=_row_order)
    head = f"{'row':34s}" + "".join(
        f" | jax {v:5s} {'progs':>5s} {'tp':>4s} {'fn':>4s} {'fp':>4s} {'oth':>4s} {'recall':>6s} {'prec':>6s}"
        for v in vers)
    what = "PLS001 and PLS002" if codes else "every code"
    lines = [f"findings (file, line, code) of {what} (a code= row: that code); "
             "oth = confirmed only by another JAX version", head, "-" * len(head)]
    for key in keys:
        line = f"{key:34s}"
        for v in vers:
            c = reports[v]["rows"].get(key, Counts())
            line += (f" | {'':9s} {c.programs:5d} {c.tp:4d} {c.fn:4d} {c.fp:4d} {c.other:4d}"
                     f" {_fmt(c.recall()):>6s} {_fmt(c.precision()):>6s}")
        lines.append(line)
    return "\n".join(lines)


def format_disagreements(reports: dict[str, dict], root: Path, limit: int) -> str:
    out = []
    for v, r in reports.items():
        if r["label_mismatch"]:
            out.append(f"\nJAX {v} disagrees with the generator's intent (generator bugs) in "
                       f"{len(r['label_mismatch'])} programs:")
            for p, t, intent, errors in r["label_mismatch"][:limit]:
                out.append(f"  {root / p.name / 'kernel.py'}  {p.stacked}")
                out.append(f"      JAX: {sorted(t)}  intent: {sorted(intent)}")
                for e in errors[:2]:
                    out.append("      error: " + e.strip().splitlines()[-1][:300])
        out.append(f"\nJAX {v}: the linter disagrees in {len(r['disagreements'])} programs"
                   + (f" (first {limit})" if len(r["disagreements"]) > limit else "") + ":")
        for p, t, got, fn, fp in r["disagreements"][:limit]:
            out.append(f"  {root / p.name / 'kernel.py'}  bug={p.bug} {'buggy' if p.buggy else 'clean'} {p.stacked}")
            out.append(f"      JAX said: {sorted(t)}  we said: {sorted(got)}"
                       + (f"  missed: {sorted(fn)}" if fn else "")
                       + (f"  wrong: {sorted(fp)}" if fp else ""))
        if r["missing"]:
            out.append(f"\nJAX {v}: {len(r['missing'])} programs have no truth (pass --judge)")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------


def selected(programs, only: list[str]) -> list:
    """Programs matching every ``axis=variant`` / ``bug=name`` / ``buggy`` / ``clean`` filter."""
    def keep(p) -> bool:
        for f in only:
            if f == "buggy" and not p.buggy or f == "clean" and p.buggy:
                return False
            if "=" in f:
                key, value = f.split("=", 1)
                have = p.bug if key == "bug" else p.axes.get(key)
                if have != value:
                    return False
        return True
    return [p for p in programs if keep(p)]


def run(seed: int, n: int, out: Path, judges: list[str], truth_path: Path | None, refresh: bool,
        jobs: int, lint: bool = True, log=print, update: bool = False, only=(),
        stream: str = "core") -> tuple[list, dict, dict, dict]:
    """``stream``: ``"core"`` (generator.py, PLS001/PLS002) or ``"families"`` (families.py,
    PLS003..PLS019; its own truth file)."""
    t0 = time.perf_counter()
    if truth_path is None:
        truth_path = FAMILY_TRUTH_FILE if stream == "families" else TRUTH_FILE
    programs = (families.generate(seed, n) if stream == "families"
                else generator.generate(seed, n))
    if only:
        if refresh or update:
            raise SystemExit("--only cannot be combined with --refresh or --update")
        programs = selected(programs, list(only))
    for p in programs:
        p.write(out)
    truth = load_truth(truth_path)
    if judges:
        have = {v for v in truth["jax"]}
        todo = []
        for p in programs:
            entry = truth["programs"].get(p.digest, {})
            if refresh or any(minor_of(j) not in entry for j in judges):
                todo.append(p)
        if todo:
            log(f"judging {len(todo)} programs with {len(judges)} JAX installs ...")
            judged = judge_live(todo, out, judges, jobs, log)
            merge_truth(truth, judged)
        if refresh or update:  # the file holds exactly this sample
            keep = {p.digest for p in programs}
            truth["programs"] = {d: e for d, e in truth["programs"].items() if d in keep}
            save_truth(truth, truth_path)
        del have
    t1 = time.perf_counter()
    linted = lint_all(programs, out) if lint else {}
    t2 = time.perf_counter()
    vers = [v for v in VERSIONS if v in truth["jax"]]
    codes = None if stream == "families" else CORE_CODES
    reports = {v: score(programs, truth, linted, v, codes) for v in vers} if lint else {}
    timing = {"generate+judge_s": t1 - t0, "lint_s": t2 - t1}
    return programs, truth, reports, timing


_MINOR_CACHE: dict[str, str] = {}


def minor_of(python: str) -> str:
    if python not in _MINOR_CACHE:
        version = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('jax'))"],
            capture_output=True, text=True, check=True).stdout.strip()
        _MINOR_CACHE[python] = minor(version)
    return _MINOR_CACHE[python]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-n", type=int, default=400)
    parser.add_argument("--judge", action="append", default=[],
                        help="a Python with JAX installed (repeat for each JAX version)")
    parser.add_argument("--truth", type=Path, default=None,
                        help="the truth file (default: truth.json, or truth_families.json "
                             "with --families)")
    parser.add_argument("--families", action="store_true",
                        help="the family stream (families.py: PLS003..PLS019) instead of the "
                             "PLS001/PLS002 programs")
    parser.add_argument("--refresh", action="store_true",
                        help="judge every program again and write the truth file")
    parser.add_argument("--update", action="store_true",
                        help="judge the programs the truth file lacks and write it")
    parser.add_argument("--out", type=Path, help="where the programs are written")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--disagreements", type=int, default=40)
    parser.add_argument("--only", action="append", default=[],
                        help="score only programs with this axis=variant (or bug=..., buggy, "
                             "clean); repeat to narrow")
    ns = parser.parse_args(argv)
    out = ns.out or Path(tempfile.mkdtemp(prefix="pallas-corpus-"))
    programs, truth, reports, timing = run(ns.seed, ns.n, out, ns.judge, ns.truth, ns.refresh,
                                           ns.jobs, update=ns.update, only=ns.only,
                                           stream="families" if ns.families else "core")
    print(f"{len(programs)} programs (seed {ns.seed}) in {out}; "
          f"linter: {timing['lint_s']:.1f} s; JAX: " + ", ".join(
              f"{v} = {truth['jax'][v]}" for v in reports))
    print(format_table(reports, None if ns.families else CORE_CODES))
    print(format_disagreements(reports, out, ns.disagreements))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def format_markdown(reports: dict[str, dict], rows: str = "summary",
                    codes: tuple[str, ...] | None = CORE_CODES) -> str:
    """A Markdown table: recall and precision per JAX version (the findings of ``codes``, or
    of every code: the family stream).

    ``rows="summary"``: all, codes, bugs, stack depths and one row per axis; ``"full"``: also
    one row per axis variant."""
    vers = list(reports)
    keys = sorted({k for r in reports.values() for k in r["rows"]}, key=_row_order)
    if rows == "summary":
        keys = [k for k in keys if k.split("=")[0] in ("all", "code", "bug", "stack")
                and ":" not in k or k.endswith("=*")]
    head = "| row | programs | " + " | ".join(
        f"jax {v} recall | jax {v} precision | jax {v} missed / wrong / other version"
        for v in vers) + " |"
    lines = [head, "|" + "---|" * (2 + 3 * len(vers))]
    for key in keys:
        first = reports[vers[0]]["rows"].get(key, Counts())
        cells = [f"`{key}`", str(first.programs)]
        for v in vers:
            c = reports[v]["rows"].get(key, Counts())
            cells += [_fmt(c.recall()), _fmt(c.precision()), f"{c.fn} / {c.fp} / {c.other}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
