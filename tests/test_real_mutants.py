"""Real code nobody here wrote: the installed jax package's Blackwell GPU kernels and, when it is
installed, tokamax's (PyPI). The unmodified code gets no finding, and every single-edit mutant
of it (`tests/real_kernels/mutate.py`) that real JAX confirms on the CPU is found at JAX's line
with JAX's code; a mutant JAX accepts gets no new finding.

JAX's verdicts come from `tests/real_kernels/recorded.json` when the file, the harness and the
JAX version are those it was recorded with (`python benchmarks/realcode.py --python PY ...
--record tests/real_kernels/recorded.json`, in every supported version), else JAX is run here
(`harness.py`, a subprocess per file). What the linter misses today is marked xfail (not strict)
with the reason, so that these tests document it and pass once the core finds it.
"""

from __future__ import annotations

import ast
import json
import re
import sys

import pytest

from conftest import TESTS
from pallas_lsp.analysis import analyze_source
from real_kernels.mutate import mutants
from real_kernels.sources import jax_sources, tokamax_sources
from real_kernels.targets import target_for
from real_kernels.verdicts import VerdictCache, judge

pytest.importorskip("jax")

RECORDED = TESTS / "real_kernels" / "recorded.json"

# What the linter gets wrong on these files today: (file, mutant ident) -> reason.
_QUANT = "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100_quant.py"
_POST = "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100_quant_post_scale.py"
_QUANT_WHY = ("tokamax's sm100 quantized ragged dot kernels (tokamax 0.0.12): the TMEM's dtype is an input "
              "array's (`w_scales.dtype`, the scale of a `qwix.QArray` the caller passes; nothing in the "
              "code makes it certain: its `Float[...]` annotation allows float32, which needs no packing)")
_ODD_WHY = ("nothing reported: PLS013 (JAX 0.10.2 lowering: collective TMEM, cluster of one) is not found in "
            "the installed copy; PLS012 at the MMAs, reported before, is what JAX never reaches (it stops at "
            "the allocation)")
KNOWN_MISSES: dict[tuple[str, str], str] = {
    (_QUANT, "packed-drop@453:18"): _QUANT_WHY + ": narrow TMEM without packed (PLS005)",
    (_QUANT, "cluster-one@513:6"): _ODD_WHY,
    (_POST, "packed-drop@415:18"): _QUANT_WHY + ": narrow TMEM without packed (PLS005)",
    ("tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100.py", "cluster-one@234:6"): _ODD_WHY,
    ("jax/experimental/pallas/ops/gpu/blackwell_matmul_mgpu.py", "cluster-one@218:6"): _ODD_WHY,
}
KNOWN_WRONG: dict[tuple[str, str], str] = {}
# Findings beside JAX's about parameterizations of a test the harness does not run (it records a
# test's first failing one): (file, mutant ident) -> the extra code, its " when ..." condition
# naming those parameterizations, and where JAX confirmed that code on such a kernel.
_MGT = "tests/pallas/mosaic_gpu_test.py"
_LHS_TMEM = ("PLS014", "lhs_tmem != False",
             "the collective accumulator beside the non-collective LHS TMEM the lhs_tmem=True runs allocate: "
             "JAX 0.10.2 refuses the mix when lowering a pallas_call (tests/fixtures/pallas_call_collective.py)")
OTHER_CONFIGURATIONS: dict[tuple[str, str], tuple[str, str, str]] = {
    (_MGT, "collective-true@6075:8"): _LHS_TMEM,
    (_MGT, "collective-true@6165:8"): _LHS_TMEM,
}
# Files the analysis cannot finish within its budget today.
KNOWN_SLOW: dict[str, str] = {}
# Unmodified code: findings JAX confirms (the deprecated plgpu.kernel spelling, a
# DeprecationWarning in jax 0.10.2 and a TypeError from 0.12).
DEPRECATED = re.compile(r"\b(out_shape|scratch_shapes)\s*=")


def _sources():
    sources = jax_sources(None)
    try:
        import tokamax
    except Exception:  # noqa: BLE001 - not installed, or not importable with this jax
        tokamax = None
    if tokamax is not None:
        sources += tokamax_sources(None)
    return [s for s in sources if s.blackwell]


SOURCES = _sources()
WORK = [(s, target_for(s), m) for s in SOURCES if target_for(s) is not None for m in mutants(s.text)]


def _lint(source, text):
    result = analyze_source(text, source.lint_path)
    assert result.error is None, result.error
    return [(f.span.path, f.span.line, f.code, f.message) for f in result.findings]


@pytest.mark.parametrize("source", [
    pytest.param(s, id=s.label, marks=[pytest.mark.xfail(strict=False, reason=KNOWN_SLOW[s.rel])]
                 if s.rel in KNOWN_SLOW else [])
    for s in SOURCES
])
def test_unmodified_code_is_clean(source):
    lines = source.text.splitlines()
    raising = _asserted_raises(source.text)
    unexpected = []
    for path, line, code, message in _lint(source, source.text):
        if code == "PLS008" and path is None and any(DEPRECATED.search(text) for text in lines[line - 1:line + 40]):
            continue
        if path is None and any(first <= line <= last and re.search(pattern, message)
                                for first, last, pattern in raising):
            continue  # (a test that asserts JAX raises this very error: `test_mixed_tmem_allocations_raise`)
        unexpected.append(f"{source.rel}:{line}: {code} {message}")
    assert unexpected == []


def _asserted_raises(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, pattern) of each test function holding `assertRaisesRegex(error,
    pattern)`: the error JAX raises on its kernel is what the test expects."""
    found = []
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef):
            continue
        for call in ast.walk(function):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and call.func.attr == "assertRaisesRegex" and len(call.args) >= 2 \
                    and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
                found.append((function.lineno, function.end_lineno or function.lineno, call.args[1].value))
    return found


@pytest.fixture(scope="module")
def verdicts():
    cache = VerdictCache(None)
    if RECORDED.exists():
        cache.data = json.loads(RECORDED.read_text())
    judged = judge(WORK, [sys.executable], cache, jobs=1, log=lambda msg: None)
    return {(s.label, m.ident): v for s, m, v in judged}


def _params():
    params = []
    for source, _, mutant in WORK:
        key = (source.rel, mutant.ident)
        marks = []
        reason = KNOWN_MISSES.get(key) or KNOWN_WRONG.get(key)
        if reason:
            marks.append(pytest.mark.xfail(strict=False, reason=reason))
        params.append(pytest.param(source, mutant, marks=marks, id=f"{source.rel}:{mutant.ident}"))
    return params


@pytest.mark.parametrize("source,mutant", _params())
def test_mutant(verdicts, source, mutant):
    verdict = verdicts[(source.label, mutant.ident)]
    status = verdict["status"]
    if status not in ("bug", "clean"):
        pytest.skip(f"JAX: {status} {verdict.get('message', '')[:200]}")
    base = _lint(source, source.text)
    new = [f for f in _lint(source, mutant.text) if f not in base]
    if status == "clean":
        if new and verdict.get("partial") and all(" when " in f[3] for f in new):
            pytest.skip("JAX traces only configurations these 'when' findings are not about")
        assert new == [], f"JAX accepts {mutant.what} at line {mutant.line}"
        return
    codes = set(verdict["code"].split("|"))
    if verdict.get("phase") == "lower":  # JAX names no line
        at = [f for f in new if f[2] in codes]
    else:
        at = [f for f in new if f[0] is None and f[1] == verdict["line"] and f[2] in codes]
    assert at, (f"{mutant.what} at line {mutant.line}: JAX raises {verdict['code']} at line {verdict['line']} "
                f"({verdict['message'][:200]}); we report {new}")
    extra = [f for f in new if f not in at]
    code, condition, _ = OTHER_CONFIGURATIONS.get((source.rel, mutant.ident), (None, None, None))
    assert [f for f in extra if not (f[2] == code and f" when {condition}" in f[3])] == []
