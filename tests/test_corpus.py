"""The generated corpus (tests/corpus/): real JAX agrees with the generator's labels, and the
linter's recall and precision per axis do not fall below the committed floor.

The truth (JAX's findings per program, JAX 0.10 and 0.12) is read from
``tests/corpus/truth.json``; a few programs are judged live again by the JAX this interpreter
has, if any, to check that file.  Refresh it after changing the generator::

    python tests/corpus/score.py -n 3000 --refresh --judge PY310 --judge PY312

(``PY310``/``PY312``: Pythons with jax 0.10.2 and jax 0.12 installed.)  Raise the floor
(``tests/corpus/floor.json``) when the linter gets better: ``python tests/test_corpus.py``
prints the floor the current linter reaches.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
import generator  # noqa: E402
import score  # noqa: E402

SEED = 0
N = 300
FLOOR_FILE = HERE / "corpus" / "floor.json"
LIVE = 16  # programs judged live again


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    programs = generator.generate(SEED, N)
    for p in programs:
        p.write(root)
    return root, programs


@pytest.fixture(scope="module")
def truth():
    return score.load_truth()


def test_generator_is_deterministic_and_twinned():
    a = generator.generate(SEED, 40)
    b = generator.generate(SEED, 40)
    assert [p.files for p in a] == [p.files for p in b]
    assert [p.digest for p in generator.generate(SEED, 60)[:40]] == [p.digest for p in a]
    for bug, ok in zip(a[::2], a[1::2]):
        assert (bug.bug, bug.axes) == (ok.bug, ok.axes) and bug.buggy and not ok.buggy
        assert not ok.intent(), ok.name  # a clean twin carries no marker
    assert {p.bug for p in a} == set(generator.BUGS)
    assert len(generator.AXES) >= 12 and all(len(v) >= 3 for v in generator.AXES.values())


def test_truth_covers_the_sample(sample, truth):
    _, programs = sample
    for ver in score.VERSIONS:
        assert ver in truth["jax"], f"truth.json has no JAX {ver}: refresh it (see module doc)"
        missing = [p.name for p in programs if score.truth_sites(truth, p.digest, ver) is None]
        assert not missing, (f"{len(missing)} programs have no JAX {ver} truth (generator "
                             f"changed?): refresh truth.json (see module doc); e.g. {missing[:5]}")


@pytest.mark.parametrize("ver", score.VERSIONS)
def test_jax_agrees_with_the_labels(sample, truth, ver):
    root, programs = sample
    bad = []
    for p in programs:
        t = score.truth_sites(truth, p.digest, ver)
        errors = score.truth_errors(truth, p.digest, ver)
        if t is None:
            continue
        if t != p.intent(truth["jax"][ver]) or errors:
            bad.append(f"{p.name} {p.stacked}: JAX {sorted(t)} intent {sorted(p.intent(truth['jax'][ver]))}"
                       + (f" errors: {errors[0][-300:]}" if errors else ""))
    assert not bad, "\n".join(bad[:20])


def test_truth_file_matches_live_jax(sample, truth):
    jax = pytest.importorskip("jax")
    root, programs = sample
    ver = score.minor(jax.__version__)
    if ver not in truth["jax"]:
        pytest.skip(f"no truth for jax {ver}")
    # a spread over bugs and axes: every (N // LIVE)-th program, buggy and clean alternating
    step = max(1, len(programs) // LIVE)
    chosen = [p for p in programs[::step]][:LIVE]
    library = [p for p in programs if p.axes["library"] != "none"]  # slow: one of them
    chosen = [p for p in chosen if p.axes["library"] == "none"][:LIVE - 1] + library[:1]
    results = score._judge_batch(sys.executable, [root / p.name for p in chosen])
    for p, r in zip(chosen, results):
        live = {(f, line, code) for f, line, code, _ in r["findings"]}
        assert not r["errors"], (p.name, r["errors"])
        assert live == score.truth_sites(truth, p.digest, ver), (p.name, live)


def _reports(sample, truth):
    root, programs = sample
    linted = score.lint_all(programs, root)
    vers = [v for v in score.VERSIONS if v in truth["jax"]]
    return {v: score.score(programs, truth, linted, v) for v in vers}


def _floor_of(reports) -> dict:
    """What the linter reaches now, rounded down to 0.01, per version and row."""
    import math

    floor = {}
    for ver, r in reports.items():
        rows = {}
        for key, c in r["rows"].items():
            if key.startswith("code=") and key[5:] not in score.CORE_CODES:
                continue
            rec, prec = c.recall(), c.precision()
            rows[key] = [None if rec is None else math.floor(rec * 100) / 100,
                         None if prec is None else math.floor(prec * 100) / 100]
        floor[ver] = dict(sorted(rows.items()))
    return floor


def test_scores_do_not_fall_below_the_floor(sample, truth):
    reports = _reports(sample, truth)
    table = score.format_table(reports)
    print("\n" + table)
    print(score.format_disagreements(reports, sample[0], 10))
    floor = json.loads(FLOOR_FILE.read_text(encoding="utf-8"))
    below = []
    for ver, rows in floor.items():
        if ver not in reports:
            continue
        for key, (rec_floor, prec_floor) in rows.items():
            c = reports[ver]["rows"].get(key)
            if c is None:
                below.append(f"jax {ver} {key}: row missing")
                continue
            for name, value, low in (("recall", c.recall(), rec_floor),
                                     ("precision", c.precision(), prec_floor)):
                if low is not None and (value is None or value < low - 1e-9):
                    below.append(f"jax {ver} {key}: {name} {value} < floor {low}")
    assert not below, "\n".join(below) + "\n" + table


if __name__ == "__main__":  # print the floor the current linter reaches
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="pallas-corpus-"))
    programs = generator.generate(SEED, N)
    for p in programs:
        p.write(root)
    print(json.dumps(_floor_of(_reports((root, programs), score.load_truth())), indent=1))
