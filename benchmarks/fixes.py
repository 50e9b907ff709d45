"""Every fix the linter offers, applied and judged by real JAX: the fix figures.

    python benchmarks/fixes.py [-n 3000] [--seed 0] [--judge PY ...] [--no-corpus]
                               [--family-n 3000] [--no-families]
                               [--jax REPO] [--tokamax REPO] [--python PY ...] [--no-realcode]
                               [--jobs 2] [--cache FILE] [--json FILE]

For every buggy program of the generated corpus (`tests/corpus/`, seed 0, ``n`` programs of
which half are buggy; PLS001/PLS002), of its family stream (``--family-n`` programs,
`tests/corpus/families.py`: PLS003 on) and every real-code mutant JAX confirms as a bug (`benchmarks/realcode.py`,
its verdicts from the realcode cache), the program is linted and every fix offered on every
finding is applied on its own, as the language server offers them (each fix not display-only,
with edits: the preferred one and each alternative, safe and unsafe) and through the same code
`--fix` uses (`fixing.Plan`, `fixing.changes`). Then:

- real JAX judges the fixed program in every configuration its cases build (a corpus program's
  ``case_*`` functions, by `tests/corpus/judge.py`, in each ``--judge`` Python; a mutant's
  harness cases, by `tests/real_kernels/harness.py`, in each ``--python``): *bug gone* when no
  configuration still raises the original error and none stops earlier on a new one; *new JAX
  error* when any configuration raises an error the unfixed program did not;
- the linter judges it again: *new finding* when it reports a (file, line, code) the unfixed
  program did not have; *finding left* when the fixed finding is still reported.

Where several findings share one place (one JAX error: a loop passing two LHS allocations to
one MMA), the others get the fix `--fix --unsafe-fixes` gives them in the same edit, since the
error can only go when all of them are fixed.

A fix *does not apply cleanly* when its edits overlap, change nothing, or leave code that does
not parse (a real-code fix editing another file is counted there too: the harness judges one
file). Printed: a Markdown table per code and fix kind, then every fix that went wrong.

JAX's verdicts are cached by program text: a fixed corpus program that is its clean twin is
read from `tests/corpus/truth.json` (`truth_families.json` for the family stream), others from ``--cache`` (default
`benchmarks/.pallas_fixes_cache.json`); real-code verdicts go to the realcode cache
(`benchmarks/.pallas_realcode_cache.json`), keyed as `realcode.py` keys them. Without a
``--judge``/``--python`` a program not in a cache is counted as *not judged*.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
sys.path.insert(0, str(HERE))
import families  # noqa: E402
import generator  # noqa: E402
import realcode  # noqa: E402
import score  # noqa: E402
from real_kernels import targets as targets_mod  # noqa: E402
from real_kernels import verdicts  # noqa: E402
from real_kernels.mutate import KINDS, mutants  # noqa: E402

from pallas_lsp.analysis import analyze_file, analyze_source  # noqa: E402
from pallas_lsp.analysis.findings import Applicability, Finding, Fix  # noqa: E402
from pallas_lsp.analysis.fixing import Plan, SourceFile, changes, fix_to_apply  # noqa: E402

DEFAULT_CACHE = HERE / ".pallas_fixes_cache.json"
COLUMNS = ("applied", "not clean", "bug gone", "new JAX error", "new finding", "finding left", "not judged")


# ----------------------------------------------------------------------------- fixes

def offered(finding: Finding) -> list[Fix]:
    """The fixes the server offers as code actions (`server/convert.py`): all but display-only,
    each with edits."""
    return [fix for fix in finding.fixes if fix.applicability is not Applicability.DISPLAY_ONLY and fix.edits]


def kind(fix: Fix) -> str:
    return f"{'preferred' if fix.preferred else 'alternative'} {fix.applicability.value}"


def apply_fix(path: str, finding: Finding, fix: Fix, texts: dict[str, SourceFile] | None = None,
              companions: list[tuple[str, Finding]] = ()) -> tuple[dict[str, str] | None, str]:
    """{absolute path: new text} of the files `fix` changes, as `--fix` writes them, or None
    and why it does not apply cleanly. `companions`: the other findings at the same place (one
    JAX error, e.g. two LHS allocations a loop passes to one MMA; (the file analysed, finding))
    get the fix `--fix --unsafe-fixes` gives them in the same plan: the error can only go when
    all are fixed."""
    plan = Plan()
    if not plan.add(path, finding, fix):
        return None, "its edits overlap"
    for other_path, other in companions:  # each in the coordinates of the file analysed for it
        chosen = fix_to_apply(other, unsafe=True)
        if chosen is not None:
            plan.add(other_path, other, chosen)
    try:
        new = {change.path: change.after for change in changes(plan, texts)}
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        return None, f"cannot read a file to edit: {error}"
    if not new:
        return None, "changes nothing"
    broken = [why for why in (_parse_error(target, text) for target, text in new.items()) if why]
    return (None, broken[0]) if broken else (new, "")


def _parse_error(path: str, text: str) -> str:
    try:
        ast.parse(text)
    except SyntaxError as error:
        return f"{Path(path).name} does not parse: {error.msg} at line {error.lineno}"
    return ""


@dataclasses.dataclass
class Outcome:
    source: str  # "corpus", "families" (the generated streams) or "realcode"
    code: str
    kind: str
    title: str
    where: str  # the program or mutant, and the finding's line
    not_clean: str = ""  # why it does not apply cleanly
    judged: bool = False
    gone: bool = False
    new_jax: list = dataclasses.field(default_factory=list)
    new_lint: list = dataclasses.field(default_factory=list)
    left: bool = False
    remaining: list = dataclasses.field(default_factory=list)  # the original error where it stays

    @property
    def wrong(self) -> bool:
        if self.not_clean:
            return True
        return self.judged and (not self.gone or bool(self.new_jax)) or bool(self.new_lint) or self.left


def tally(outcomes: list[Outcome]) -> dict[tuple, Counter]:
    rows: dict[tuple, Counter] = defaultdict(Counter)
    for o in outcomes:
        for key in ((o.source, o.code, o.kind), (o.source, "all", ""), ("all", "all", "")):
            c = rows[key]
            c["applied"] += not o.not_clean
            c["not clean"] += bool(o.not_clean)
            if o.not_clean:
                continue
            c["judged"] += o.judged
            c["not judged"] += not o.judged
            c["bug gone"] += o.judged and o.gone
            c["new JAX error"] += o.judged and bool(o.new_jax)
            c["new finding"] += bool(o.new_lint)
            c["finding left"] += o.left
    return rows


def markdown(rows: dict[tuple, Counter]) -> str:
    def order(key):
        source, code, fix_kind = key
        return (source == "all", source, code == "all", code, fix_kind)

    lines = ["| programs | code | fix | " + " | ".join(COLUMNS) + " |", "|" + "---|" * (3 + len(COLUMNS))]
    for key in sorted(rows, key=order):
        source, code, fix_kind = key
        c = rows[key]
        cells = [f"**{source}**" if source == "all" else source, "" if code == "all" else code, fix_kind]
        cells += [str(c[column]) if column != "bug gone" else f"{c['bug gone']} of {c['judged']}"
                  for column in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def failures(outcomes: list[Outcome]) -> str:
    out = []
    for o in outcomes:
        if not o.wrong:
            continue
        what = []
        if o.not_clean:
            what.append(f"does not apply cleanly: {o.not_clean}")
        elif o.judged and not o.gone:
            what.append(f"bug not gone: {o.remaining}")
        if o.new_jax:
            what.append(f"new JAX error: {o.new_jax}")
        if o.new_lint:
            what.append(f"new finding: {o.new_lint}")
        if o.left:
            what.append("finding left")
        out.append(f"- {o.source} `{o.where}` {o.code} {o.kind} \"{o.title}\": " + "; ".join(what))
    return "\n".join(out)


# ----------------------------------------------------------------------------- the corpus

def _lint_findings(directory: Path) -> list[tuple[str, Finding]]:
    """(analysed file, finding) for every finding of the program, each (file, line, code,
    fixes) once (a helper module's finding may come from several files' analyses)."""
    seen, out = set(), []
    for path in sorted(directory.glob("*.py")):
        for finding in analyze_file(str(path)).findings:
            target = Path(finding.span.path).name if finding.span.path else path.name
            # the edits in absolute coordinates: the helper module's own analysis writes them
            # without a path, the kernel's with the helper's
            edits = tuple((fix.title, fix.applicability, tuple(
                (os.path.abspath(e.span.path or path), e.span.line, e.span.col, e.span.end_line, e.span.end_col,
                 e.new_text) for e in fix.edits)) for fix in finding.fixes)
            key = (target, finding.line, finding.code, edits)
            if key not in seen:
                seen.add(key)
                out.append((str(path), finding))
    return out


def _site(finding: Finding, analysed: str) -> tuple:
    return (Path(finding.span.path or analysed).name, finding.line, finding.code)


def _verdict_sites(entry: dict) -> tuple[set, bool]:
    """(file, line, code) JAX reports, and whether a configuration stopped at a trace-time
    error or an unexpected exception (so an error after it could not show)."""
    sites = {(f, line, code) for f, line, code, _ in entry["findings"]}
    stopped = bool(entry.get("errors")) or any(phase in ("trace", "import") for *_, phase in entry["findings"])
    return sites, stopped


class CorpusCache:
    def __init__(self, path: Path | None):
        self.path = path
        self.data = {}
        if path is not None and path.exists():
            try:
                self.data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                self.data = {}

    def get(self, ver: str, digest: str) -> dict | None:
        return self.data.get(ver, {}).get(digest)

    def put(self, ver: str, digest: str, entry: dict) -> None:
        self.data.setdefault(ver, {})[digest] = entry

    def save(self) -> None:
        if self.path is not None:
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.data, sort_keys=True, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self.path)


def _corpus_verdict(truth: dict, cache: CorpusCache, digest: str, ver: str) -> dict | None:
    entry = truth["programs"].get(digest, {}).get(ver)
    return entry if entry is not None else cache.get(ver, digest)


# the generated streams: (generator, truth file); an outcome's `source` is the stream's name
STREAMS = {"corpus": (generator.generate, score.TRUTH_FILE),
           "families": (families.generate, score.FAMILY_TRUTH_FILE)}


def corpus(seed: int, n: int, out: Path, judges: list[str], cache: CorpusCache, jobs: int = 2,
           log=print, programs=None, versions=None, stream: str = "corpus") -> list[Outcome]:
    """The outcome of every fix offered on the buggy programs (`programs`, else the first `n`
    of `seed`) of `stream` ("corpus": PLS001/PLS002, `generator.py`; "families": PLS003 on,
    `families.py`), JAX's verdicts in `versions` (default: every version the truth file has)."""
    generate, truth_file = STREAMS[stream]
    programs = [p for p in (programs or generate(seed, n)) if p.buggy]
    truth = score.load_truth(truth_file)
    versions = versions or [v for v in score.VERSIONS if v in truth["jax"]]
    fixed = []  # (outcome, program, fixed program, finding site, original lint sites)
    outcomes = []
    for p in programs:
        directory = p.write(out / "original")
        lint_sites = set()
        found = _lint_findings(directory)
        for analysed, finding in found:
            lint_sites.add(_site(finding, analysed))
        texts = {os.path.abspath(directory / rel): SourceFile(str(directory / rel), text, "utf-8", False)
                 for rel, text in p.files.items()}
        count = 0
        for analysed, finding in found:
            for fix in offered(finding):
                o = Outcome(stream, finding.code, kind(fix), fix.title, f"{p.name}:{finding.line}")
                outcomes.append(o)
                companions = [(a, f) for a, f in found if f is not finding and _site(f, a) == _site(finding, analysed)]
                new, why = apply_fix(analysed, finding, fix, texts, companions)
                if new is None:
                    o.not_clean = why
                    continue
                files = dict(p.files)
                for path, text in new.items():
                    files[Path(path).name] = text
                count += 1
                q = dataclasses.replace(p, name=f"{p.name}__fix{count}", files=files)
                fixed.append((o, p, q, _site(finding, analysed), lint_sites))
    log(f"{stream}: {len(programs)} buggy programs, {len(outcomes)} fixes offered, {len(fixed)} applied")
    # JAX: the originals' truth (judged live if missing) and the fixed programs
    todo = {}
    for _, p, q, _, _ in fixed:
        for prog in (p, q):
            if any(_corpus_verdict(truth, cache, prog.digest, v) is None for v in versions):
                todo.setdefault(prog.digest, prog)
    if todo and judges:
        log(f"judging {len(todo)} programs with {len(judges)} JAX installs ...")
        for prog in todo.values():
            prog.write(out / "judge")
        judged = score.judge_live(list(todo.values()), out / "judge", judges, jobs, log)
        for ver, per in judged.items():
            for digest, r in per.items():
                cache.put(ver, digest, {"findings": r["findings"], "errors": [e.strip().splitlines()[-1][:300] for e in r["errors"]]})
        cache.save()
    for o, p, q, site, lint_before in fixed:
        directory = q.write(out / "fixed")
        after = {_site(f, a) for a, f in _lint_findings(directory)}
        o.new_lint = sorted(after - lint_before)
        o.left = site in after
        gone, judged = True, True
        for ver in versions:
            before, after_jax = _corpus_verdict(truth, cache, p.digest, ver), _corpus_verdict(truth, cache, q.digest, ver)
            if before is None or after_jax is None:
                judged = False
                continue
            sites_before, _ = _verdict_sites(before)
            sites_after, stopped = _verdict_sites(after_jax)
            new = sorted(sites_after - sites_before) + [f"{ver}: {e}" for e in after_jax.get("errors", [])]
            o.new_jax += [f"{ver}: {s}" if not isinstance(s, str) else s for s in new]
            remaining = sites_after & sites_before
            o.remaining += [f"{ver}: {s}" for s in sorted(remaining)]
            if remaining or (stopped and new):
                gone = False
        o.judged, o.gone = judged, judged and gone
    return outcomes


# ----------------------------------------------------------------------------- real code

def _case_outcomes(orig: dict, mut: dict, fixed: dict) -> tuple[list, list, bool] | None:
    """Per version: (errors left, new errors, every counted configuration ran clean), or None
    when this version says nothing: as in `realcode.py`, only configurations whose original
    traces and lowers cleanly count, and a fixed file this interpreter cannot import (a
    package it lacks) is not judged."""
    if orig is None or mut is None or fixed is None or orig.get("error"):
        return None
    counted = {c["name"] for c in orig["cases"] if c["status"] == "clean"}
    error = fixed.get("error") or {}
    if not counted or not error.get("code") and "No module named" in (error.get("message") or ""):
        return None
    mutant_bugs = {(c["name"], c.get("code")) for c in mut["cases"] if c["status"] == "bug"}
    if mut.get("error") and mut["error"].get("code"):
        mutant_bugs |= {(name, mut["error"]["code"]) for name in counted}
    left, new = [], []
    if fixed.get("error"):
        e = fixed["error"]
        target = left if e.get("code") and any(code == e["code"] for _, code in mutant_bugs) else new
        target.append(f"module: {e.get('code')} {e.get('message', '')[:160]}")
        return left, new, False
    for c in fixed["cases"]:
        if c["name"] not in counted or c["status"] in ("clean", "skipped"):
            continue
        if c["status"] == "bug" and (c["name"], c.get("code")) in mutant_bugs:
            left.append(f"{c['name']}: {c.get('code')} line {c.get('line')}")
        else:
            new.append(f"{c['name']}: {c['status']} {c.get('code') or ''} line {c.get('line')} "
                       f"{(c.get('message') or '')[:160]}")
    clean = all(c["status"] in ("clean", "skipped") for c in fixed["cases"] if c["name"] in counted)
    return left, new, clean and bool(counted)


def _pythons(args, cache) -> list[str]:
    if args.python:
        return [os.path.abspath(p) if os.sep in p else p for p in args.python]
    by_version = {}
    for key, version in sorted(cache.data.items()):
        if key.startswith("version:") and os.path.exists(key[len("version:"):]):
            by_version.setdefault(version, key[len("version:"):])
    return list(by_version.values())


def _forget_missing_modules(work, pythons, versions, cache, targets) -> None:
    """A cached verdict that the fixed file could not import a package (`No module named ...`)
    says nothing about the fix, only about that interpreter then: judged again, since the
    package may be installed now (tokamax's `jaxtyping` was missing from the 3.12 install)."""
    for source, _, mutant in work:
        target = targets[source.label]
        spec, cases = target.spec(source), target.cases_for(mutant, source)
        where = verdicts._site(mutant, source.text)
        for python in pythons:
            key = verdicts._key(versions[python], spec, cases, mutant.text, where)
            error = (cache.get(key) or {}).get("error") or {}
            if not error.get("code") and "No module named" in (error.get("message") or ""):
                cache.data.pop(key, None)


def real(args, log=print) -> tuple[list[Outcome], int]:
    sources = realcode.collect(args)
    cache = verdicts.VerdictCache(Path(args.realcode_cache))
    pythons = _pythons(args, cache)
    if not pythons:
        log("realcode: no interpreter with JAX known: pass --python")
        return [], 0
    versions = {p: verdicts.jax_version(p) if args.python else cache.get(f"version:{p}") for p in pythons}
    work = []
    for source in sources:
        target = targets_mod.target_for(source)
        if target is not None:
            work += [(source, target, m) for m in mutants(source.text, KINDS)]
    judged = verdicts.judge(work, pythons, cache, linter_only=True, jobs=args.jobs)
    targets = {s.label: t for s, t, _ in work}
    linted = realcode.Linted()
    fixed_work, plan, outcomes, with_fixes = [], [], [], set()
    for source, mutant, verdict in judged:
        if verdict["status"] != "bug":
            continue
        found, base, _ = linted(source, mutant)
        view, _ = linted._view(source, mutant, mutant.text)
        result = analyze_source(view, source.lint_path)
        before = {(f[0], f[1], f[2]) for f in found}
        for finding in result.findings:
            if realcode.finding_tuple(source, finding) in base:
                continue  # on the unmodified code too: not this mutant's
            for fix in offered(finding):
                with_fixes.add((source.label, mutant.ident))
                o = Outcome("realcode", finding.code, kind(fix), fix.title,
                            f"{source.label}:{finding.line} ({mutant.ident})")
                outcomes.append(o)
                if any(edit.span.path not in (None, source.lint_path) for edit in fix.edits):
                    o.not_clean = "edits another file (not judged: the harness judges one file)"
                    continue
                text = SourceFile(source.lint_path, mutant.text, "utf-8", False)
                companions = [(source.lint_path, f) for f in result.findings if f is not finding
                              and realcode.finding_tuple(source, f)[:3] == realcode.finding_tuple(source, finding)[:3]]
                new, why = apply_fix(source.lint_path, finding, fix, {os.path.abspath(source.lint_path): text},
                                     companions)
                if new is None:
                    o.not_clean = why
                    continue
                fixed_text = next(iter(new.values()))
                fixed_mutant = dataclasses.replace(mutant, text=fixed_text)
                fixed_work.append((source, targets[source.label], fixed_mutant))
                plan.append((o, source, mutant, fixed_mutant, realcode.finding_tuple(source, finding)[:3], before))
    log(f"realcode: {sum(1 for *_, v in judged if v['status'] == 'bug')} JAX-confirmed bugs, "
        f"{len(outcomes)} fixes offered, {len(fixed_work)} applied")
    if args.python:
        _forget_missing_modules(fixed_work, pythons, versions, cache, targets)
        verdicts.judge(fixed_work, pythons, cache, linter_only=False, jobs=args.jobs)
    for o, source, mutant, fixed_mutant, site, before in plan:
        found, _, _ = linted(source, fixed_mutant)
        after = {(f[0], f[1], f[2]) for f in found}
        o.new_lint = sorted(after - before, key=str)
        o.left = site in after
        target = targets[source.label]
        cases = target.cases_for(mutant, source)
        spec = target.spec(source)
        where = verdicts._site(mutant, source.text)
        gone, judged_all, informative = True, True, 0
        for python in pythons:
            version = versions[python]
            orig = cache.get(verdicts._key(version, spec, cases, source.text, None))
            mut = cache.get(verdicts._key(version, spec, cases, mutant.text, where))
            fixed = cache.get(verdicts._key(version, spec, cases, fixed_mutant.text, where))
            if fixed is None:
                judged_all = False
                continue
            outcome = _case_outcomes(orig, mut, fixed)
            if outcome is None:
                continue
            informative += 1
            left, new, clean = outcome
            label = version.split()[0]
            o.remaining += [f"{label}: {x}" for x in left]
            o.new_jax += [f"{label}: {x}" for x in new]
            gone = gone and clean and not left
        o.judged = judged_all and informative > 0
        o.gone = o.judged and gone
    return outcomes, len(with_fixes)


# ----------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="corpus programs (half of them buggy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", action="append", default=[], help="a Python with JAX for the corpus (repeat per version)")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--family-n", type=int, default=3000,
                        help="family-stream programs (PLS003 on, tests/corpus/families.py; half buggy)")
    parser.add_argument("--no-families", action="store_true")
    parser.add_argument("--no-realcode", action="store_true")
    parser.add_argument("--jax", help="JAX's git repository (bare or checkout); $PALLAS_REALCODE_JAX")
    parser.add_argument("--tokamax", help="tokamax's git repository; $PALLAS_REALCODE_TOKAMAX")
    parser.add_argument("--python", action="append", default=None,
                        help="an interpreter with jax to judge fixed mutants with (repeatable; default: the "
                             "realcode cache's verdicts only)")
    parser.add_argument("--only", action="append", help="only real-code sources whose label contains this")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", default=str(DEFAULT_CACHE))
    parser.add_argument("--realcode-cache", default=str(realcode.DEFAULT_CACHE))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", help="write every fix's outcome here")
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    started = time.perf_counter()
    outcomes = []
    counted = []
    out = args.out or Path(tempfile.mkdtemp(prefix="pallas-fixes-"))
    cache = CorpusCache(Path(args.cache))
    if not args.no_corpus:
        outcomes += corpus(args.seed, args.n, out, args.judge, cache, args.jobs, log)
        counted.append(f"{args.n // 2} buggy programs of {args.n} (corpus seed {args.seed})")
    if not args.no_families:
        outcomes += corpus(args.seed, args.family_n, out / "families", args.judge, cache, args.jobs, log,
                           stream="families")
        counted.append(f"{args.family_n // 2} buggy programs of {args.family_n} (family stream seed {args.seed})")
    if not args.no_realcode:
        real_outcomes, with_fixes = real(args, log)
        outcomes += real_outcomes
        counted.append(f"{with_fixes} JAX-confirmed real-code mutants with fixes")
    print(f"Fixes applied one at a time and judged by real JAX: {'; '.join(counted)}.\n")
    print(markdown(tally(outcomes)))
    bad = failures(outcomes)
    print(f"\n## Fixes that went wrong ({bad.count(chr(10)) + 1 if bad else 0})\n\n{bad}")
    if args.json:
        Path(args.json).write_text(json.dumps([dataclasses.asdict(o) for o in outcomes], indent=1))
    log(f"({time.perf_counter() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
