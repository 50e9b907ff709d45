"""The JAX oracle: every fixture's markers must agree with what real JAX raises.

Each fixture runs in its own process (``tests/oracle/run_fixture.py``, forked by
``tests/oracle/runner.py`` from one that imported JAX once; see ``tests/fixtures/README.md``
for the protocol).  The processes are started together,
a few at a time, the first time any fixture's result is needed.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

jax = pytest.importorskip("jax")

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
from oracle import markers as markers_mod  # noqa: E402
from oracle.runner import run_fixture  # noqa: E402

def _rule_examples() -> tuple[list[Path], set[Path]]:
    """The rules' VALID/INVALID programs, written out so JAX can trace them too, and those of
    rules JAX reports when lowering."""
    from pallas_lsp.analysis.rules import RULES

    directory = Path(tempfile.mkdtemp(prefix="pallas-rule-examples-"))
    paths, lowering = [], set()
    for rule in RULES:
        programs = [("valid", code) for code in rule.VALID] + [("invalid", ex.code) for ex in rule.INVALID]
        for index, (kind, code) in enumerate(programs):
            path = directory / f"{rule.code}_{kind}_{index}.py"
            path.write_text(code, encoding="utf-8")
            paths.append(path)
            if rule.lowering:
                lowering.add(path)
    return paths, lowering


RULE_EXAMPLES, LOWERING_EXAMPLES = _rule_examples()
FIXTURE_FILES = (
    sorted(p for p in FIXTURES.glob("*.py") if not p.name.startswith("_"))
    + sorted((HERE.parent / "examples").glob("*.py"))
    + RULE_EXAMPLES
)
JAX_VERSION = jax.__version__


def _version_tuple(text: str) -> tuple[int, ...]:
    return markers_mod._version_tuple(text)


# Warpgroup lowering semantics, which report RefUnion members, are the default from 0.11.
CHECK_LOWERING = _version_tuple(JAX_VERSION) >= (0, 11)


def _lowers_here(path: Path) -> bool:
    """Lower every case from jax 0.11 on; before, only files that expect a lowering error in
    this version, and the examples of rules JAX reports when lowering (elsewhere jax 0.10.2
    needs real SMEM transforms before its lowering gets anywhere)."""
    return CHECK_LOWERING or path in LOWERING_EXAMPLES or any(
        m.kind == "lowering" and m.applies(JAX_VERSION) for m in markers_mod.parse_markers(path))


@pytest.fixture(scope="module")
def oracle_results():
    runnable = [p for p in FIXTURE_FILES if markers_mod.version_allowed(p, JAX_VERSION)]
    workers = max(1, min(len(runnable), os.cpu_count() or 2))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    # Largest files first: they tend to take longest.
    order = sorted(runnable, key=lambda p: -p.stat().st_size)
    futures = {p.name: pool.submit(run_fixture, p, _lowers_here(p)) for p in order}
    yield futures
    pool.shutdown(wait=False, cancel_futures=True)


def _describe(result: dict) -> str:
    return json.dumps(result, indent=1)[:8000]


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_fixture_agrees_with_jax(path: Path, oracle_results):
    if not markers_mod.version_allowed(path, JAX_VERSION):
        pytest.skip(f"{path.name} is restricted to {markers_mod.oracle_restriction(path)}; "
                    f"jax is {JAX_VERSION}")
    result = oracle_results[path.name].result()
    assert not result.get("error"), result["error"]
    cases = result["cases"]

    # 1. No case may fail for a reason other than the findings we predict.
    for case in cases:
        trace = case["trace"]
        assert not (trace and "error" in trace), (
            f"{case['name']} raised an unexpected exception while tracing:\n{trace['error']}")

    expected = markers_mod.parse_markers(path)
    trace_markers = [m for m in expected if m.kind == "trace"]
    lowering_markers = [m for m in expected if m.kind == "lowering"]

    # 2. Trace verdicts (errors, and the warnings we predict, also those issued on import):
    #    set of (line, code) equals the markers without [lowering].
    observed = [c["trace"] for c in cases if c["trace"]] + result.get("import_warnings", []) + [
        warning for c in cases for warning in c.get("warnings", [])]
    seen = {(o["line"], o["code"]) for o in observed}
    want = {(m.line, m.code) for m in trace_markers}
    assert seen == want, (
        f"JAX saw {sorted(seen)}, markers say {sorted(want)}\n"
        f"missing in JAX: {sorted(want - seen)}; unmarked in fixture: {sorted(seen - want)}\n"
        + _describe(result))

    # 3. A line marked twice with the same code must show two distinct JAX errors there
    #    (accumulator and LHS), one per case; a line marked once shows one.
    #    A warning counts only where no error was raised at that line (jax 0.10.2 warns and
    #    then raises for `plgpu.kernel(out_shape=..., out_type=...)`: one finding).
    messages = collections.defaultdict(set)
    errors = [c["trace"] for c in cases if c["trace"]]
    for o in errors + [o for o in observed if o not in errors]:
        key = (o["line"], o["code"])
        if o in errors or not any((e["line"], e["code"]) == key for e in errors):
            messages[key].add(o["message"])
    counts = collections.Counter((m.line, m.code) for m in trace_markers)
    for key, count in counts.items():
        assert len(messages[key]) == count, (
            f"line {key[0]}: {count} x {key[1]} marked, JAX raised {sorted(messages[key])}")

    # 4. Lowering (every case that traced cleanly, where the file is lowered here): a case
    #    whose lowering fails with an error we predict must carry a [lowering] marker of that
    #    code, for this version, on one of its lines (the kernel call, its MMAs, ...); every
    #    [lowering] marker for this version must be confirmed by such a case.  Any other
    #    lowering error means the fixture is not valid apart from its bug.
    if not _lowers_here(path):
        return
    lowering_markers = [m for m in lowering_markers if m.applies(JAX_VERSION)]
    confirmed = set()
    for case in cases:
        low = case["lowering"]
        if case["trace"] or not low or "unsupported" in low:
            continue
        assert "error" not in low, (
            f"{case['name']} failed to lower for an unexpected reason:\n{low['error']}")
        marked = {m.line for m in lowering_markers if m.code in low["code"].split("|")}
        hit = marked & set(case["lines"])
        assert hit, (f"{case['name']} fails lowering ({low['message']}) but none of its "
                     f"lines {case['lines']} carries a [lowering] marker for {low['code']}")
        confirmed |= hit
    for m in lowering_markers:
        assert m.line in confirmed, (
            f"line {m.line}: {m.code} [lowering] marked, but no case with that line "
            f"failed lowering\n" + _describe(result))


@pytest.mark.parametrize("path", [p for p in FIXTURE_FILES if any(m.where for m in markers_mod.parse_markers(p))],
                         ids=lambda p: p.name)
def test_findings_in_helper_modules_are_where_jax_points(path: Path, oracle_results):
    """A marker's `[in FILE:LINE]` (the finding sits in a helper module) is JAX's innermost
    frame for the case that raises at the marker's line."""
    result = oracle_results[path.name].result()
    innermost = {(c["trace"]["line"], c["trace"]["code"]): tuple(c["trace"]["innermost"])
                 for c in result["cases"] if c["trace"] and c["trace"].get("innermost")}
    for marker in markers_mod.parse_markers(path):
        if marker.where:
            assert innermost.get((marker.line, marker.code)) == marker.where, (marker, innermost)
