"""The generated corpus, large: the linter's recall and precision per axis, JAX as the judge.

    python benchmarks/corpus.py [-n 3000] [--seed 0] [--judge PY ...] [--full] [--out DIR]
                                [--families]

Writes ``n`` programs of ``tests/corpus/generator.py`` (buggy and clean twins of the four core
bugs, 1 to 4 idiom axes stacked), takes JAX's verdict on each from ``tests/corpus/truth.json``
(programs missing there are judged live by each ``--judge`` Python: one with jax 0.10.2, one
with jax 0.12), lints them with the ``pallas_lsp`` this Python imports, and prints a Markdown
table of recall and precision per JAX version (the README's corpus table is a copy of it),
then every program where the linter disagrees with JAX.  ``--full`` adds a row per axis
variant.  ``--families``: the family stream instead (``tests/corpus/families.py``: one class
per error of PLS003..PLS019, truth in ``tests/corpus/truth_families.json``; every code counts
in every row).  See ``tests/corpus/README.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
import score  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", action="append", default=[])
    parser.add_argument("--truth", type=Path, default=None)
    parser.add_argument("--families", action="store_true",
                        help="the family stream (PLS003..PLS019)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--out", type=Path)
    ns = parser.parse_args(argv)
    if ns.n < 3000:
        print(f"note: {ns.n} programs (the benchmark's figure is for 3000)", file=sys.stderr)
    out = ns.out or Path(tempfile.mkdtemp(prefix="pallas-corpus-"))
    t0 = time.perf_counter()
    programs, truth, reports, timing = score.run(
        ns.seed, ns.n, out, ns.judge, ns.truth, refresh=False, jobs=ns.jobs,
        log=lambda m: print(m, file=sys.stderr), stream="families" if ns.families else "core")
    missing = {v: len(r["missing"]) for v, r in reports.items() if r["missing"]}
    what = "Family corpus (PLS003..PLS019)" if ns.families else "Generated corpus"
    print(f"{what}: {len(programs)} programs (seed {ns.seed}), JAX "
          + ", ".join(truth["jax"][v] for v in reports)
          + f"; linting took {timing['lint_s']:.1f} s "
          f"({1000 * timing['lint_s'] / max(1, len(programs)):.0f} ms a program)."
          + (f" No truth for {missing} programs: pass --judge." if missing else ""))
    print()
    print(score.format_markdown(reports, "full" if ns.full else "summary",
                                codes=None if ns.families else score.CORE_CODES))
    print(score.format_disagreements(reports, out, limit=10**6))
    print(f"\n({time.perf_counter() - t0:.0f} s in all)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
