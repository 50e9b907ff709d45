"""The flake8 plugin, end to end through flake8 itself."""

import subprocess
import sys

from conftest import ROOT
from flake8_pallas import PallasChecker


def flake8(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_examples_show_pls001_and_pls002():
    result = flake8("--select=PLS", "examples/")
    lines = sorted(result.stdout.splitlines())
    assert [line.split(" ", 2)[:2] for line in lines] == [
        ["examples/collective_matmul.py:25:13:", "PLS001"],
        ["examples/collective_matmul.py:51:13:", "PLS002"],
    ], result.stdout + result.stderr
    assert result.returncode == 1


def test_noqa(tmp_path):
    source = (ROOT / "examples" / "collective_matmul.py").read_text()
    source = source.replace('collective_axis="x")  # PLS001', 'collective_axis="x")  # noqa: PLS001')
    (tmp_path / "kernel.py").write_text(source)
    result = flake8("--select=PLS", "kernel.py", cwd=tmp_path)
    assert "PLS001" not in result.stdout
    assert "PLS002" in result.stdout


def test_bad_input_never_fails_the_run(tmp_path):
    (tmp_path / "syntax.py").write_text("plgpu.TMEM((128, 128), f32\ndef (:\n")
    (tmp_path / "latin1.py").write_bytes(b"x = '\xff' # TMEM tcgen05_mma\n")
    (tmp_path / "deep.py").write_text("plgpu.TMEM(" + "(" * 3000 + "1" + ")" * 3000 + ")\n")
    (tmp_path / "ok.py").write_text((ROOT / "examples" / "collective_matmul.py").read_text())
    result = flake8("--select=PLS,E999,E902", ".", cwd=tmp_path)
    assert "failed during execution" not in result.stderr, result.stderr
    assert "ok.py:25:13: PLS001" in result.stdout


def test_internal_error_is_swallowed(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("flake8_pallas.analyze_source", boom)
    lines = ["plgpu.tcgen05_mma(acc, a, b, collective_axis='x')  # TMEM\n"]
    assert list(PallasChecker(None, "x.py", lines).run()) == []


def test_files_without_pallas_cost_nothing(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("analysed a file that never mentions the Pallas GPU API")

    monkeypatch.setattr("flake8_pallas.analyze_source", fail)
    assert list(PallasChecker(None, "x.py", ["import numpy as np\n"]).run()) == []
