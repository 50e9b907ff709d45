"""Every fix offered on a fixed sample of the generated corpus and of its family stream (PLS003
on), applied one at a time and judged by the JAX of this interpreter (`benchmarks/fixes.py`
measures the same on 3,000 programs of each and the real-code mutants; its table is in the
README):

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
import score  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_fixes", HERE.parent / "benchmarks" / "fixes.py")
bench = sys.modules["bench_fixes"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

SEED = 0
# stream -> (programs generated, which of them): the PLS001/PLS002 corpus's first 28 buggy
# programs, library ones left out (slow to trace); the family stream's first pair of each class
SAMPLES = {"corpus": (56, lambda p: p.axes["library"] == "none"), "families": (46, lambda p: True)}
FAMILY_CODES = {"PLS003", "PLS004", "PLS005", "PLS006", "PLS008", "PLS010", "PLS011", "PLS015", "PLS016"}


@pytest.fixture(scope="module", params=list(SAMPLES))
def outcomes(request, tmp_path_factory):
    stream = request.param
    n, keep = SAMPLES[stream]
    generate, truth_file = bench.STREAMS[stream]
    version = score.minor(jax.__version__)
    if version not in score.load_truth(truth_file)["jax"]:
        pytest.skip(f"no {stream} truth for jax {version}")
    programs = [p for p in generate(SEED, n) if keep(p)]
    root = tmp_path_factory.mktemp(f"fixes-{stream}")
    return bench.corpus(SEED, n, root, [sys.executable], bench.CorpusCache(None), jobs=1,
                        log=lambda message: None, programs=programs, versions=[version], stream=stream)


def _codes(sites) -> set[str]:
    return {re.search(r"PLS\d{3}", str(site)).group(0) for site in sites if re.search(r"PLS\d{3}", str(site))}


def test_the_sample_covers_every_code_with_fixes_and_every_kind(outcomes):
    if outcomes[0].source == "corpus":
        assert len(outcomes) >= 25
        assert {o.code for o in outcomes} >= {"PLS001", "PLS002"}
    else:
        assert {o.code for o in outcomes} >= FAMILY_CODES
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
