"""JAX's own sources: all of the installed package is clean, and seeded mutants of its
Blackwell kernels are caught where JAX itself raises (confirmed by tracing them)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TESTS
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
        run = subprocess.run(
            [sys.executable, str(TESTS / "oracle" / "run_jax_kernel.py"), str(path), kind],
            capture_output=True, text=True, timeout=600,
        )
        assert run.returncode == 0, run.stderr
        verdicts[path] = json.loads(run.stdout.strip().splitlines()[-1])
    assert verdicts[original] is None
    assert verdicts[mutant]["message"] == "Accumulator Ref must be collective if collective_axis is set."
    assert verdicts[mutant]["line"] == findings[0].line
