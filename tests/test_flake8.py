"""The flake8 plugin, end to end through flake8 itself."""

import ast
import subprocess
import sys
import types

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


def test_internal_error_is_a_pls000_not_a_silent_pass(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("flake8_pallas.analyze_source", boom)
    lines = ["from jax.experimental.pallas import mosaic_gpu as plgpu\n",
             "plgpu.tcgen05_mma(acc, a, b, collective_axis='x')  # TMEM\n"]
    assert [(line, col, text) for line, col, text, _ in PallasChecker(None, "x.py", lines).run()] == [
        (1, 0, "PLS000 internal error: RuntimeError: boom")]


def test_over_budget_is_pls000(tmp_path):
    (tmp_path / "kernel.py").write_text((ROOT / "examples" / "collective_matmul.py").read_text())
    result = flake8("--select=PLS", "--pallas-budget=0.000001", "kernel.py", cwd=tmp_path)
    assert result.stdout.startswith("kernel.py:1:1: PLS000 analysis budget of 1e-06 s exceeded"), result.stdout
    assert result.returncode == 1


def test_files_without_pallas_cost_nothing(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("analysed a file that never mentions the Pallas GPU API")

    monkeypatch.setattr("flake8_pallas.analyze_source", fail)
    assert list(PallasChecker(None, "x.py", ["import numpy as np\n"]).run()) == []


def _project(tmp_path, table=None):
    source = (ROOT / "examples" / "collective_matmul.py").read_text()
    (tmp_path / "kernel.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "kernel.py").write_text(source)
    if table is not None:
        (tmp_path / "pyproject.toml").write_text(f"[tool.pallas-lint]\n{table}\n")


def _codes_by_file(result):
    found = {}
    for line in result.stdout.splitlines():
        path, _, _, rest = line.split(":", 3)
        found.setdefault(path.removeprefix("./"), []).append(rest.split()[0])
    return found


def test_pyproject_configures_the_plugin(tmp_path):
    _project(tmp_path, 'ignore = ["PLS002"]\nper-file-ignores = { "tests/*" = ["PLS001"] }')
    result = flake8("--select=PLS", ".", cwd=tmp_path)
    assert _codes_by_file(result) == {"kernel.py": ["PLS001"]}, result.stdout + result.stderr


def test_pallas_options_override_pyproject(tmp_path):
    _project(tmp_path, 'select = ["PLS001"]\nanalysis-budget = 5')
    result = flake8("--select=PLS", "--pallas-select=PLS002", ".", cwd=tmp_path)
    assert _codes_by_file(result) == {"kernel.py": ["PLS002"], "tests/kernel.py": ["PLS002"]}
    result = flake8("--select=PLS", "--pallas-ignore=PLS001,PLS002", ".", cwd=tmp_path)
    assert result.stdout == "" and result.returncode == 0


def test_pallas_options_from_flake8_config(tmp_path):
    _project(tmp_path)
    (tmp_path / "setup.cfg").write_text("[flake8]\npallas-ignore = PLS001\n")
    result = flake8("--select=PLS", "kernel.py", cwd=tmp_path)
    assert _codes_by_file(result) == {"kernel.py": ["PLS002"]}


def test_budget_override_reaches_the_analysis(monkeypatch):
    seen = {}

    def fake(text, path, **options):
        seen.update(options)
        return types.SimpleNamespace(findings=[], error=None)

    monkeypatch.setattr("flake8_pallas.analyze_source", fake)
    PallasChecker.parse_options(types.SimpleNamespace(pallas_select=None, pallas_ignore=["pls002"],
                                                      pallas_budget=0.5, pallas_no_cache=True,
                                                      pallas_cache_dir=None))
    try:
        lines = ["plgpu.TMEM((1, 1), f32)\n"]
        tree = ast.parse("".join(lines))
        list(PallasChecker(tree, "x.py", lines).run())
    finally:
        PallasChecker.overrides = {}
        PallasChecker.caching = (False, None)
    # flake8's tree is handed on: the analysis does not parse the file again
    assert seen == {"select": ("PLS",), "ignore": ("PLS002",), "budget": 0.5, "tree": tree}


def test_bad_pyproject_is_pls000_on_every_file_never_a_crash(tmp_path):
    for number, (table, reason) in enumerate((('select = "PLS001"', "select must be a list of strings"),
                                              ('select = ["E501"]', "unknown rule selector 'E501'"))):
        (tmp_path / str(number)).mkdir()
        _project(tmp_path / str(number), table)
        result = flake8("--select=PLS", "kernel.py", cwd=tmp_path / str(number))
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout.startswith("kernel.py:1:1: PLS000 invalid configuration: "), result.stdout
        assert reason in result.stdout
        assert "failed during execution" not in result.stderr


def test_unknown_codes_in_flake8_options_stop_flake8_with_the_error(tmp_path):
    _project(tmp_path)
    for option in ("--pallas-select=FOO123", "--pallas-ignore=PLS999"):
        result = flake8("--select=PLS", option, "kernel.py", cwd=tmp_path)
        assert result.returncode == 1 and result.stdout.startswith("There was a critical error"), result
        assert "unknown rule selector" in result.stdout and "the nearest rule code is PLS0" in result.stdout
    (tmp_path / "setup.cfg").write_text("[flake8]\npallas-select = PLS9\n")
    result = flake8("--select=PLS", "kernel.py", cwd=tmp_path)
    assert result.returncode == 1 and "unknown rule selector 'PLS9'" in result.stdout
