"""The linter on real Pallas Mosaic GPU Blackwell code nobody here wrote, and on its mutants.

    python benchmarks/realcode.py [--jax REPO] [--tokamax REPO] [--python PY ...]
                                  [--linter-only] [--timing] [--kinds K,...] [--json FILE]
                                  [--lint-python PY ...]

Sources (see `tests/real_kernels/sources.py`): JAX's git repository (`--jax`, or
$PALLAS_REALCODE_JAX: a bare mirror or a checkout) for its GPU ops, `tests/pallas/` and the
tutorials in `docs/pallas/gpu/`; tokamax's (`--tokamax`, $PALLAS_REALCODE_TOKAMAX); without
them, the installed `jax` and `tokamax` packages.

1. Every file, unmodified: any finding is listed (a false positive unless JAX raises there
   too, as in JAX's own tests of its error messages); with `--lint-python PY`, also as that
   interpreter's linter sees them (Python 3.12 parses tokamax's modules in 3.12 syntax, so the
   trace resolves their values: its findings there are new ground).
2. Mutants (`tests/real_kernels/mutate.py`: a `collective` flag dropped or flipped, a RefUnion
   member flipped, a barrier without `orders_tensor_core`, `packed` beside `layout`, `packed`
   dropped, the cluster dropped or made one block) of every file a harness can trace
   (`tests/real_kernels/targets.py`). Real JAX judges each one on the CPU, in every interpreter
   given with `--python` (default: this one; each needs jax, and tokamax for its kernels):
   `make_jaxpr`, then lowering for CUDA. JAX's verdicts are cached by mutant text, harness
   and JAX version (`--cache`, default `.pallas_realcode_cache.json` here), so that
   `--linter-only` re-scores the linter against the cache in seconds.
3. The score: per mutant kind and file, JAX-confirmed bugs found at JAX's line with JAX's code,
   found elsewhere, missed; findings on mutants JAX accepts (wrong reports), and new findings on
   lines other than JAX's. `--timing` adds warm analysis time per Blackwell file as a ratio
   to its `ast.parse`.
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

import measure  # noqa: E402
from real_kernels import targets as targets_mod  # noqa: E402
from real_kernels.mutate import BIG, KINDS, mutants, sliced, test_spans  # noqa: E402
from real_kernels.sources import Source, jax_sources, tokamax_sources  # noqa: E402
from real_kernels.verdicts import VerdictCache, judge, record  # noqa: E402

from pallas_lsp.analysis import Finding, analyze_source  # noqa: E402

DEFAULT_CACHE = HERE / ".pallas_realcode_cache.json"


def lint(source: Source, text: str | None = None) -> tuple[list[tuple], str | None]:
    """(path or None for the file itself, line, code, message) per finding, and the error."""
    result = analyze_source(source.text if text is None else text, source.lint_path)
    found = [finding_tuple(source, f) for f in result.findings]
    return sorted(found, key=lambda t: (t[0] or "", t[1], t[2])), result.error


def finding_tuple(source: Source, finding: Finding) -> tuple:
    """(path relative to the project, or None for the file itself; line, code, message)."""
    path = finding.span.path
    if path is not None and os.path.abspath(path) == os.path.abspath(source.lint_path):
        path = None
    if path is not None:
        try:
            path = Path(path).relative_to(source.root).as_posix()
        except ValueError:
            pass
    return (path, finding.span.line, finding.code, finding.message)


def collect(args) -> list[Source]:
    sources = jax_sources(args.jax) + tokamax_sources(args.tokamax)
    if args.only:
        sources = [s for s in sources if any(part in s.label for part in args.only)]
    return sources


# ----------------------------------------------------------------------------- unmodified code

def unmodified(sources: list[Source]) -> tuple[list[tuple[Source, tuple]], list[tuple[Source, str]]]:
    """Every finding on the files as they are, and the Blackwell files not analysed."""
    findings, errors = [], []
    for source in sources:
        found, error = lint(source)
        if error and source.blackwell:
            errors.append((source, error))
        findings += [(source, f) for f in found]
    return findings, errors


def unmodified_under(python: str, args: argparse.Namespace, here: list[tuple[Source, tuple]]) -> None:
    """The unmodified files linted by `python` (this script again, in a child that writes JSON):
    its findings, those this interpreter did not make marked new, and the files it could not
    analyse."""
    sources = [f"--jax={args.jax}"] if args.jax else []
    sources += [f"--tokamax={args.tokamax}"] if args.tokamax else []
    sources += [f"--only={only}" for only in args.only or []]
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "unmodified.json"
        done = subprocess.run([python, __file__, *sources, "--unmodified-json", str(out)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.exists():
            print(f"\n## Unmodified code under {python}: failed\n\n```\n{done.stderr[-2000:]}\n```")
            return
        data = json.loads(out.read_text())
    ours = {(s.label, *f) for s, f in here}
    found = [tuple(item) for item in data["findings"]]
    print(f"\n## Unmodified code under {python}: {len(found)} findings, "
          f"{sum(item not in ours for item in found)} not found here\n")
    for label, path, line, code, msg in found:
        new = "" if (label, path, line, code, msg) in ours else " (new)"
        print(f"- `{label}:{line}`{(' (in ' + path + ')') if path else ''} {code} {msg}{new}")
    for label, error in data["errors"]:
        print(f"- `{label}`: not analysed: {error}")


# ----------------------------------------------------------------------------- timing

def profile(source: Source, top: int = 25) -> str:
    analyze_source(source.text, source.lint_path)
    profiler = cProfile.Profile()
    profiler.enable()
    analyze_source(source.text, source.lint_path)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    text = out.getvalue()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return text + "\n" + out.getvalue()


# ----------------------------------------------------------------------------- scoring

class Linted:
    """The linter on a mutant and on its original (a big test file: one test method at a time,
    see `mutate.sliced`), originals memoized."""

    def __init__(self):
        self.bases = {}
        self.spans = {}

    def _view(self, source, mutant, text):
        if text.count("\n") <= BIG:
            return text, "whole"
        spans = self.spans.get(source.label)
        if spans is None:
            spans = self.spans[source.label] = test_spans(ast.parse(source.text))
        scope = tuple(mutant.scope[:2])
        if scope not in spans:
            return text, "whole"
        return sliced(text, spans, scope), scope

    def __call__(self, source, mutant):
        base_text, view = self._view(source, mutant, source.text)
        if (source.label, view) not in self.bases:
            self.bases[(source.label, view)] = lint(source, base_text)[0]
        text, _ = self._view(source, mutant, mutant.text)
        found, error = lint(source, text)
        return found, self.bases[(source.label, view)], error


LINTED_STATUSES = ("bug", "clean", "disagree")


def score(sources, judged, args):
    """judged: [(source, mutant, verdict)] with verdict the merged JAX verdict."""
    rows = defaultdict(Counter)
    misses, wrong, elsewhere, extra, disagree, unjudged = [], [], [], [], [], []
    linted = Linted()
    for source, mutant, verdict in judged:
        status = verdict["status"]
        key = (mutant.kind, source.label)
        if status not in LINTED_STATUSES:
            rows[key][status] += 1
            continue
        found, base, error = linted(source, mutant)
        new = [f for f in found if f not in base]
        if status == "bug":
            line, code = verdict["line"], verdict["code"]
            codes = set(code.split("|"))
            if verdict.get("phase") == "lower":  # JAX names no line: the right code anywhere
                at = [f for f in new if f[2] in codes]
            else:
                at = [f for f in new if f[0] is None and f[1] == line and f[2] in codes]
            if at:
                rows[key]["found"] += 1
                others = [f for f in new if f not in at]
                if others:
                    extra.append((source, mutant, verdict, others))
            elif new:
                rows[key]["elsewhere"] += 1
                elsewhere.append((source, mutant, verdict, new))
            else:
                rows[key]["missed"] += 1
                misses.append((source, mutant, verdict, error))
        elif status == "clean" and new and verdict.get("partial") and all(" when " in f[3] for f in new):
            # Only some configurations trace in JAX and our findings are about another one.
            rows[key]["unjudged-when"] += 1
            unjudged.append((source, mutant, verdict, new))
        elif status == "clean":
            rows[key]["jax-clean"] += 1
            if new:
                rows[key]["wrong"] += 1
                wrong.append((source, mutant, verdict, new))
        else:
            rows[key][status] += 1
            disagree.append((source, mutant, verdict, new))
    return rows, misses, wrong, elsewhere, extra, disagree + unjudged


def _fmt_findings(found) -> str:
    return "; ".join(f"{(p + ':') if p else ''}{line}: {code} {msg}" for p, line, code, msg in found)


def report(rows, misses, wrong, elsewhere, extra, disagree, out=sys.stdout):
    print("\n## Mutants (JAX-confirmed bugs: found at JAX's line / elsewhere / missed; JAX-clean: wrong reports)\n", file=out)
    print("| kind | file | bugs | found | elsewhere | missed | JAX-clean | wrong | not counted |", file=out)
    print("|---|---|---|---|---|---|---|---|---|", file=out)
    total = Counter()
    for (kind, label), c in sorted(rows.items()):
        bugs = c["found"] + c["elsewhere"] + c["missed"]
        uncounted = sum(v for k, v in c.items() if k not in ("found", "elsewhere", "missed", "jax-clean", "wrong"))
        total.update(c)
        total["bugs"] += bugs
        total["uncounted"] += uncounted
        print(f"| {kind} | {label} | {bugs} | {c['found']} | {c['elsewhere']} | {c['missed']} | {c['jax-clean']} | {c['wrong']} | {uncounted} |", file=out)
    print(f"| **all** | | {total['bugs']} | {total['found']} | {total['elsewhere']} | {total['missed']} | {total['jax-clean']} | {total['wrong']} | {total['uncounted']} |", file=out)

    def block(title, items, show):
        print(f"\n## {title} ({len(items)})\n", file=out)
        for source, mutant, verdict, extra_info in items:
            jax_says = (f"{verdict.get('code', '')} at line {verdict.get('line')} ({verdict.get('phase', '')}, "
                        f"{verdict.get('jax', '')}): `{(verdict.get('message') or '')[:160]}`")
            if verdict["status"] == "disagree":
                jax_says = "; ".join(f"{v}: {r['status']} {r.get('code') or ''} line {r.get('line')} "
                                     f"`{(r.get('message') or '')[:120]}`" for v, r in verdict["per_version"].items())
            print(f"- `{source.label}:{mutant.line}` {mutant.kind} ({mutant.what}); JAX: {jax_says}; "
                  f"ours: {show(extra_info)}", file=out)

    block("Missed (JAX raises, we say nothing)", misses, lambda e: f"nothing{(' (' + e + ')') if e else ''}")
    block("Found elsewhere (not at JAX's line or with another code)", elsewhere, _fmt_findings)
    block("Wrong reports (JAX accepts the mutant)", wrong, _fmt_findings)
    block("Found, plus findings on other lines", extra, _fmt_findings)
    block("Not counted: JAX versions disagree, or JAX traced only configurations our 'when' finding is not about",
          disagree, lambda f: _fmt_findings(f) or "nothing")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", help="JAX's git repository (bare or checkout); $PALLAS_REALCODE_JAX")
    parser.add_argument("--tokamax", help="tokamax's git repository; $PALLAS_REALCODE_TOKAMAX")
    parser.add_argument("--python", action="append", default=None,
                        help="an interpreter with jax to judge mutants with (repeatable; default: this one)")
    parser.add_argument("--linter-only", action="store_true", help="use cached JAX verdicts only")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--only", action="append", help="only sources whose label contains this")
    parser.add_argument("--timing", action="store_true", help="warm analysis time per Blackwell file")
    parser.add_argument("--profile", help="cProfile the analysis of the source with this label")
    parser.add_argument("--jobs", type=int, default=2, help="JAX processes at once")
    parser.add_argument("--json", help="write the results as JSON here")
    parser.add_argument("--record", help="write the JAX results behind this run's verdicts here (for the CI test: "
                                         "tests/real_kernels/recorded.json, from the installed packages)")
    parser.add_argument("--lint-python", action="append", default=[], metavar="PY",
                        help="lint the unmodified files under this interpreter too (repeatable): another Python "
                             "parses other files (tokamax's modules in 3.12 syntax), so the trace resolves more")
    parser.add_argument("--unmodified-json", help=argparse.SUPPRESS)  # --lint-python's child: write and stop
    args = parser.parse_args(argv)

    sources = collect(args)
    if not sources:
        print("no sources: give --jax/--tokamax or install jax", file=sys.stderr)
        return 2
    print(f"# Real code: {len(sources)} files, {sum(s.blackwell for s in sources)} Blackwell "
          f"({', '.join(sorted({s.origin + ' ' + s.revision for s in sources}))})")

    # 1. unmodified code
    started = time.perf_counter()
    clean_findings, errors = unmodified(sources)
    if args.unmodified_json:
        Path(args.unmodified_json).write_text(json.dumps({
            "findings": [(s.label, *f) for s, f in clean_findings], "errors": [(s.label, e) for s, e in errors]}))
        return 0
    print(f"\n## Unmodified code: {len(clean_findings)} findings ({time.perf_counter() - started:.1f} s)\n")
    cache = VerdictCache(Path(args.cache))
    for source, (path, line, code, msg) in clean_findings:
        print(f"- `{source.label}:{line}`{(' (in ' + path + ')') if path else ''} {code} {msg}")
    for source, error in errors:
        print(f"- `{source.label}`: not analysed: {error}")
    for python in args.lint_python:
        unmodified_under(python, args, clean_findings)

    # 2. mutants
    kinds = tuple(k for k in args.kinds.split(",") if k)
    pythons = args.python
    if not pythons and args.linter_only:
        pythons = sorted(k[len("version:"):] for k in cache.data if k.startswith("version:"))
    pythons = pythons or [sys.executable]
    work = []
    for source in sources:
        target = targets_mod.target_for(source)
        if target is None:
            continue
        for mutant in mutants(source.text, kinds):
            work.append((source, target, mutant))
    print(f"\n{len(work)} mutants of {len({s.label for s, _, _ in work})} files")
    judged = judge(work, pythons, cache, linter_only=args.linter_only, jobs=args.jobs)
    if args.record:
        print(f"recorded {record(cache, judged, Path(args.record))} JAX results in {args.record}", file=sys.stderr)
    rows, misses, wrong, elsewhere, extra, disagree = score(sources, judged, args)
    report(rows, misses, wrong, elsewhere, extra, disagree)

    if args.timing:
        rows_t, skipped = measure.dense_ratios(sources, analyze_source, repeat=7)
        for label in skipped:
            print(f"timing: {label} skipped, this Python cannot parse it", file=sys.stderr)
        print("\n## Warm analysis time per Blackwell file (CPU time, best of 7, ratio to ast.parse)\n")
        print("| file | lines | analysis ms | ast.parse ms | ratio |\n|---|---|---|---|---|")
        for label, lines, ours, base in sorted(rows_t, key=lambda r: -r[2] / r[3]):
            print(f"| {label} | {lines} | {ours * 1000:.1f} | {base * 1000:.2f} | {ours / base:.1f}x |")
        if rows_t:
            worst, p95, median = measure.summary([ours / base for _, _, ours, base in rows_t])
            print(f"\nworst {worst:.1f}x, p95 {p95:.1f}x, median {median:.1f}x (targets: p95 <= 5x, worst <= 10x)")
    if args.profile:
        chosen = [s for s in sources if args.profile in s.label]
        if chosen:
            print(f"\n## Profile of {chosen[0].label}\n\n```\n{profile(chosen[0])}\n```")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "unmodified": [(s.label, *f) for s, f in clean_findings],
            "misses": [(s.label, m.ident, m.what, v) for s, m, v, _ in misses],
            "wrong": [(s.label, m.ident, m.what, v, f) for s, m, v, f in wrong],
            "elsewhere": [(s.label, m.ident, m.what, v, f) for s, m, v, f in elsewhere],
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
