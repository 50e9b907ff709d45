"""Every fix offered on a fixed sample of the generated corpus, applied one at a time and judged
by the JAX of this interpreter (`benchmarks/fixes.py` measures the same on 3,000 programs and
the real-code mutants; its table is in the README):

- every fix applies cleanly and the linter no longer reports the finding it fixed;
- a preferred or safe fix leaves a kernel JAX accepts in every configuration its case
  functions build (the bug gone, no new error) and no new finding;
- an unsafe alternative removes the bug JAX raised; whatever new error JAX raises instead
  (that is why it is unsafe: members made non-collective under a collective MMA), the linter
  reports on the fixed program too.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

jax = pytest.importorskip("jax")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
import generator  # noqa: E402
import score  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_fixes", HERE.parent / "benchmarks" / "fixes.py")
bench = sys.modules["bench_fixes"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

SEED, N = 0, 56  # the first 28 buggy programs, library ones left out (slow to trace)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    version = score.minor(jax.__version__)
    if version not in score.load_truth()["jax"]:
        pytest.skip(f"no corpus truth for jax {version}")
    programs = [p for p in generator.generate(SEED, N) if p.axes["library"] == "none"]
    root = tmp_path_factory.mktemp("fixes")
    return bench.corpus(SEED, N, root, [sys.executable], bench.CorpusCache(None), jobs=1,
                        log=lambda message: None, programs=programs, versions=[version])


def _codes(sites) -> set[str]:
    return {re.search(r"PLS\d{3}", str(site)).group(0) for site in sites if re.search(r"PLS\d{3}", str(site))}


def test_the_sample_covers_both_codes_and_every_kind(outcomes):
    assert len(outcomes) >= 25
    assert {o.code for o in outcomes} >= {"PLS001", "PLS002"}
    assert {o.kind for o in outcomes} >= {"preferred safe", "alternative unsafe"}


def test_every_fix_applies_and_removes_its_finding(outcomes):
    bad = [(o.where, o.title, o.not_clean or "finding left") for o in outcomes if o.not_clean or o.left]
    assert not bad, bad


def test_preferred_and_safe_fixes_satisfy_jax_in_every_configuration(outcomes):
    chosen = [o for o in outcomes if o.kind != "alternative unsafe"]
    assert chosen and all(o.judged for o in chosen)
    bad = [(o.where, o.title, o.remaining, o.new_jax, o.new_lint) for o in chosen
           if not o.gone or o.new_jax or o.new_lint]
    assert not bad, bad


def test_unsafe_fixes_remove_the_bug_and_the_linter_sees_what_they_trade_it_for(outcomes):
    chosen = [o for o in outcomes if o.kind == "alternative unsafe"]
    assert chosen and all(o.judged for o in chosen)
    bad = [(o.where, o.title, o.remaining, o.new_jax, o.new_lint) for o in chosen
           if o.remaining or not _codes(o.new_jax) <= _codes(o.new_lint)]
    assert not bad, bad
