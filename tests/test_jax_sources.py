"""JAX's own sources: all of the installed package is clean, and seeded mutants of its
Blackwell kernels are caught where JAX itself raises (confirmed by tracing them)."""

import ast
import json
import re
from pathlib import Path

import pytest

from conftest import TESTS
from oracle.runner import run_script
from pallas_lsp.analysis import analyze_file

jax = pytest.importorskip("jax")
JAX_DIR = Path(jax.__file__).parent
KERNELS = JAX_DIR / "experimental" / "pallas" / "ops" / "gpu"


def test_whole_jax_package_is_clean():
    reports = []
    files = sorted(JAX_DIR.rglob("*.py"))
    for path in files:
        result = analyze_file(str(path))
        reports += [f"{path}:{f.line}: {f.code} {f.message}" for f in result.findings]
        assert result.error is None, f"{path}: {result.error}"
    assert len(files) > 300
    assert reports == []


def mutate_tmem_flag(source: str) -> str:
    """Every `plgpu.TMEM(..., collective=<expr>)` gets `collective=False` instead."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "TMEM":
            for keyword in node.keywords:
                if keyword.arg == "collective":
                    value = keyword.value
                    edits.append((value.lineno, value.col_offset, value.end_lineno, value.end_col_offset))
    assert edits, "no TMEM(collective=...) to mutate"
    for line, col, end_line, end_col in sorted(edits, reverse=True):
        assert line == end_line
        text = lines[line - 1]
        lines[line - 1] = text[:col] + "False" + text[end_col:]
    return "".join(lines)


@pytest.mark.parametrize("name,kind", [("blackwell_matmul_mgpu", "matmul"), ("blackwell_ragged_dot_mgpu", "ragged")])
def test_mutant_caught_where_jax_raises(tmp_path, name, kind):
    original = KERNELS / f"{name}.py"
    mutant = tmp_path / f"{name}.py"
    mutant.write_text(mutate_tmem_flag(original.read_text()))

    findings = analyze_file(str(mutant)).findings
    assert [f.code for f in findings] == ["PLS001"]
    assert "when config.collective is True" in findings[0].message

    verdicts = {}
    for path in (original, mutant):
        printed = run_script(TESTS / "oracle" / "run_jax_kernel.py", str(path), kind)
        verdicts[path] = json.loads(printed.strip().splitlines()[-1])
    assert verdicts[original] is None
    assert verdicts[mutant]["message"] == "Accumulator Ref must be collective if collective_axis is set."
    assert verdicts[mutant]["line"] == findings[0].line


# Mutants of JAX's Blackwell kernels for the rest of the family: (kernel, kind, pattern,
# replacement, code, where we report (the first line matching), what JAX raises, the version
# from which JAX raises something else first).
FAMILY_MUTANTS = {
    "barrier_without_orders_tensor_core": (
        "blackwell_matmul_mgpu", "matmul",
        r"(consumed_barrier=plgpu\.Barrier\(\s*num_arrivals=1,\s*num_barriers=max_concurrent_steps,)\s*"
        r"orders_tensor_core=True,", r"\1",
        "PLS010", r"plgpu\.tcgen05_mma\(", "MMA barrier must have orders_tensor_core set to True.", None),
    "packed_with_layout": (
        "blackwell_matmul_mgpu", "matmul",
        r"collective=collective\n(\s*)\),\n(\s*)acc_smem",
        r"collective=collective,\n\1    packed=True, layout=plgpu.TMEMLayout.SCALES_LAYOUT\n\1),\n\2acc_smem",
        "PLS004", r"acc_tmem=plgpu\.TMEM\(", "packed cannot be specified if layout is specified.", None),
    "narrow_dtype_without_packed": (
        "blackwell_matmul_mgpu", "matmul",
        r"\(block_tile_m, tile_n \* 2\), jnp\.float32", "(block_tile_m, tile_n * 2), jnp.float16",
        "PLS005", r"acc_tmem=plgpu\.TMEM\(", "dtypes narrower than 32-bit require either the packed argument", None),
    "narrow_dtype_in_run_scoped": (
        "blackwell_ragged_dot_mgpu", "ragged",
        r"\(block_tile_m, tile_n \* 2\), jnp\.float32", "(block_tile_m, tile_n * 2), jnp.bfloat16",
        "PLS005", r"acc_tmem=plgpu\.TMEM\(", "dtypes narrower than 32-bit require either the packed argument", None),
    # lowering-time: JAX names no line; we report on the minority's run_scoped / the collective
    # TMEM allocation of the scratch
    "mixed_collective_tmem": (
        "blackwell_ragged_dot_mgpu", "ragged",
        r"(\n  num_sms = jax\.local_devices)",
        "\n    pl.run_scoped(lambda extra: None, plgpu.TMEM((128, 128), jnp.float32), collective_axes=(\"wg\",))\n\\1",
        "PLS014", r"pl\.run_scoped\(lambda extra",
        "Can't mix collective and non-collective TMEM allocations within the same kernel.", None),
    # jax 0.12 stops earlier on this mutant (its collective TMA loads no longer fit a
    # one-block cluster), which we do not model; jax 0.10.2 reaches the allocation
    "collective_tmem_odd_cluster": (
        "blackwell_matmul_mgpu", "matmul",
        r"cluster=\(1 \+ collective,\),", "cluster=(1,),",
        "PLS013", r"acc_tmem=plgpu\.TMEM\(",
        "Collective TMEM allocations are only supported for clusters with an even number", (0, 12)),
}


@pytest.mark.parametrize("name", list(FAMILY_MUTANTS))
def test_family_mutant_caught_where_jax_raises(tmp_path, name):
    kernel, kind, pattern, replacement, code, anchor, message, before = FAMILY_MUTANTS[name]
    source, count = re.subn(pattern, replacement, (KERNELS / f"{kernel}.py").read_text())
    assert count == 1, "the kernel changed: update the mutant"
    line = source[: re.search(anchor, source).start()].count("\n") + 1
    mutant = tmp_path / f"{kernel}.py"
    mutant.write_text(source)

    findings = analyze_file(str(mutant)).findings
    # only what JAX reports: an odd cluster would also fail the collective MMA's arrivals
    # (PLS012), but JAX stops at the allocation first
    assert code in [f.code for f in findings] and {f.code for f in findings} == {code}
    assert line in [f.line for f in findings if f.code == code]

    if before is not None and tuple(int(x) for x in jax.__version__.split(".")[:2]) >= before:
        pytest.skip(f"jax {jax.__version__} raises another error first on this mutant")
    printed = run_script(TESTS / "oracle" / "run_jax_kernel.py", str(mutant), kind, "--lower")
    verdict = json.loads(printed.strip().splitlines()[-1])
    assert verdict is not None and verdict["message"].startswith(message), verdict
    if verdict["line"] is not None:  # trace time: JAX points at the call we report
        assert verdict["line"] == line
