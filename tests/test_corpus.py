"""The generated corpus (tests/corpus/): real JAX agrees with the generator's labels, and the
linter's recall and precision per axis do not fall below the committed floor.

The truth (JAX's findings per program, JAX 0.10 and 0.12) is read from
``tests/corpus/truth.json``; a few programs are judged live again by the JAX this interpreter
has, if any, to check that file.  Refresh it after changing the generator::

    python tests/corpus/score.py -n 3000 --refresh --judge PY310 --judge PY312

(``PY310``/``PY312``: Pythons with jax 0.10.2 and jax 0.12 installed.)  Raise the floor
(``tests/corpus/floor.json``) when the linter gets better: ``python tests/test_corpus.py``
prints the floor the current linter reaches.

The family stream (``tests/corpus/families.py``, PLS003..PLS019) is checked the same way
against ``truth_families.json`` and ``floor_families.json``: refresh with ``score.py --families
-n 3000 --update --judge PY310 --judge PY312``, print its floor with ``python
tests/test_corpus.py --families``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
import families  # noqa: E402
import generator  # noqa: E402
import score  # noqa: E402

SEED = 0
N = 300
FLOOR_FILE = HERE / "corpus" / "floor.json"
LIVE = 16  # programs judged live again
# The family stream (families.py: one class per error of PLS003..PLS019): 20 pairs of each
# class; its truth is truth_families.json, its floor floor_families.json.
FAMILY_N = 40 * len(families.CLASSES)
FAMILY_FLOOR_FILE = HERE / "corpus" / "floor_families.json"
FAMILY_LIVE = 8


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


# stream -> (its sample fixture, its truth fixture, the truth file, how to refresh it)
STREAMS = {"corpus": ("sample", "truth", "truth.json", "see module doc"),
           "families": ("family_sample", "family_truth", "truth_families.json", "score.py --families --update")}


@pytest.fixture(params=list(STREAMS))
def judged(request):
    """Each stream's (sample, truth, truth file, refresh hint), for the checks both share."""
    sample_fixture, truth_fixture, truth_file, refresh = STREAMS[request.param]
    return request.getfixturevalue(sample_fixture), request.getfixturevalue(truth_fixture), truth_file, refresh


def test_truth_covers_the_sample(judged):
    (_, programs), truth, truth_file, refresh = judged
    for ver in score.VERSIONS:
        assert ver in truth["jax"], f"{truth_file} has no JAX {ver}: refresh it ({refresh})"
        missing = [p.name for p in programs if score.truth_sites(truth, p.digest, ver) is None]
        assert not missing, (f"{len(missing)} programs have no JAX {ver} truth (generator "
                             f"changed?): refresh {truth_file} ({refresh}); e.g. {missing[:5]}")


@pytest.mark.parametrize("ver", score.VERSIONS)
def test_jax_agrees_with_the_labels(judged, ver):
    (_, programs), truth, _, _ = judged
    bad = []
    for p in programs:
        t = score.truth_sites(truth, p.digest, ver)
        errors = score.truth_errors(truth, p.digest, ver)
        if t is None:
            continue
        intent = p.intent(truth["jax"][ver])
        if t != intent or errors:
            bad.append(f"{p.name} {p.stacked}: JAX {sorted(t)} intent {sorted(intent)}"
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


def _reports(sample, truth, codes=score.CORE_CODES):
    root, programs = sample
    linted = score.lint_all(programs, root)
    vers = [v for v in score.VERSIONS if v in truth["jax"]]
    return {v: score.score(programs, truth, linted, v, codes) for v in vers}


def _floor_of(reports, codes=score.CORE_CODES) -> dict:
    """What the linter reaches now, rounded down to 0.01, per version and row."""
    import math

    floor = {}
    for ver, r in reports.items():
        rows = {}
        for key, c in r["rows"].items():
            if key.startswith("code=") and codes is not None and key[5:] not in codes:
                continue
            rec, prec = c.recall(), c.precision()
            rows[key] = [None if rec is None else math.floor(rec * 100) / 100,
                         None if prec is None else math.floor(prec * 100) / 100]
        floor[ver] = dict(sorted(rows.items()))
    return floor


def _below(reports, floor_file: Path) -> list[str]:
    floor = json.loads(floor_file.read_text(encoding="utf-8"))
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
    return below


def test_scores_do_not_fall_below_the_floor(sample, truth):
    reports = _reports(sample, truth)
    table = score.format_table(reports)
    print("\n" + table)
    print(score.format_disagreements(reports, sample[0], 10))
    below = _below(reports, FLOOR_FILE)
    assert not below, "\n".join(below) + "\n" + table


# -- the family stream ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def family_sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    programs = families.generate(SEED, FAMILY_N)
    for p in programs:
        p.write(root)
    return root, programs


@pytest.fixture(scope="module")
def family_truth():
    return score.load_truth(score.FAMILY_TRUTH_FILE)


def test_family_generator_is_deterministic_twinned_and_covers_every_rule():
    n = 2 * len(families.CLASSES)
    a = families.generate(SEED, n)
    assert [p.files for p in a] == [p.files for p in families.generate(SEED, n)]
    assert [p.digest for p in families.generate(SEED, n + 6)[:n]] == [p.digest for p in a]
    for bug, ok in zip(a[::2], a[1::2]):
        assert (bug.bug, bug.axes) == (ok.bug, ok.axes) and bug.buggy and not ok.buggy
        assert not ok.intent(), ok.name
    codes = {families.CLASS_BY_NAME[p.bug].code for p in a}
    assert codes >= {f"PLS{n:03d}" for n in range(3, 20)}, sorted(codes)
    # the PLS001/PLS002 stream is not touched by the families
    assert all(p.name.startswith("s") for p in generator.generate(SEED, 8))


def test_family_truth_file_matches_live_jax(family_sample, family_truth):
    jax = pytest.importorskip("jax")
    root, programs = family_sample
    ver = score.minor(jax.__version__)
    if ver not in family_truth["jax"]:
        pytest.skip(f"no truth for jax {ver}")
    # one buggy program of every few classes, and a clean twin
    step = max(1, len(programs) // FAMILY_LIVE)
    chosen = [p for p in programs[::step + 1]][:FAMILY_LIVE]
    results = score._judge_batch(sys.executable, [root / p.name for p in chosen])
    for p, r in zip(chosen, results):
        live = {(f, line, code) for f, line, code, _ in r["findings"]}
        assert not r["errors"], (p.name, r["errors"])
        assert live == score.truth_sites(family_truth, p.digest, ver), (p.name, live)


def test_family_scores_do_not_fall_below_the_floor(family_sample, family_truth):
    reports = _reports(family_sample, family_truth, codes=None)
    table = score.format_table(reports)
    print("\n" + table)
    print(score.format_disagreements(reports, family_sample[0], 10))
    below = _below(reports, FAMILY_FLOOR_FILE)
    assert not below, "\n".join(below) + "\n" + table


if __name__ == "__main__":  # print the floor the current linter reaches (--families: theirs)
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="pallas-corpus-"))
    if "--families" in sys.argv:
        programs = families.generate(SEED, FAMILY_N)
        truth, codes = score.load_truth(score.FAMILY_TRUTH_FILE), None
    else:
        programs = generator.generate(SEED, N)
        truth, codes = score.load_truth(), score.CORE_CODES
    for p in programs:
        p.write(root)
    print(json.dumps(_floor_of(_reports((root, programs), truth, codes), codes), indent=1))
