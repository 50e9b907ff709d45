"""The JAX oracle on what `pallas-lint check --fix` wrote.

The fixtures and the example are copied and fixed, then run through
`tests/oracle/run_fixture.py` as `tests/test_oracle.py` runs them:

- safe fixes (`--fix`): every file whose findings were all fixed traces and, where this JAX
  lowers with Warpgroup semantics (jax >= 0.11), lowers without any error: safe fixes keep the
  program's meaning;
- unsafe fixes too (`--fix --unsafe-fixes`, for the files safe fixes left with findings):
  no case raises the errors the findings predicted, at trace time or at lowering. Other lowering
  errors may appear; that is what "unsafe" means (e.g. jax 0.12 refuses a collective TMEM
  allocation in a kernel that another call site runs with a one-block cluster).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

from conftest import ROOT
from oracle.markers import parse_markers, version_allowed
from oracle.runner import run_fixture
from test_oracle import CHECK_LOWERING, JAX_VERSION, _lowers_here

CONCISE_PATH = r"^([^:]+):\d+:\d+: PLS\d{3} "


def _copy(root: Path) -> list[Path]:
    """Fixtures (with helpers/) and examples copied below `root`; the files with markers."""
    shutil.copytree(ROOT / "tests" / "fixtures", root / "fixtures",
                    ignore=shutil.ignore_patterns("__pycache__", "README.md"))
    shutil.copytree(ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return [path for path in sorted(root.glob("*/*.py")) if parse_markers(path)]


def _fix(root: Path, *options: str) -> set[Path]:
    """Run `pallas-lint check --fix` in `root`; the files with findings left."""
    result = subprocess.run([sys.executable, "-m", "pallas_lsp.cli", "check", "--fix", *options, "."],
                            cwd=root, capture_output=True, text=True, timeout=600)
    assert result.returncode in (0, 1) and " fixed, " in result.stdout, result.stdout + result.stderr
    return {(root / match).resolve() for match in re.findall(CONCISE_PATH, result.stdout, re.M)}


def _copy_list(root: Path) -> list[Path]:
    return [path for path in sorted(root.glob("*/*.py")) if parse_markers(path)]


def _with_helpers_left(files: list[Path], left: set[Path]) -> set[Path]:
    """`left`, and the files whose markers point at a finding left in a helper module
    (`[in helpers/...]`: the finding is reported there, and a rule without a fix leaves it)."""
    found = set(left)
    for path in files:
        for marker in parse_markers(path):
            if marker.where is not None and (path.parent / marker.where[0]).resolve() in left:
                found.add(path.resolve())
    return found


def _oracle(paths: list[Path]) -> dict[str, dict]:
    paths = [path for path in paths if version_allowed(path, JAX_VERSION)]
    workers = max(1, min(len(paths), os.cpu_count() or 2))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        results = pool.map(lambda p: run_fixture(p, _lowers_here(p)), paths)
        return {f"{p.parent.name}/{p.name}": result for p, result in zip(paths, results)}


@pytest.fixture(scope="module")
def fixed(tmp_path_factory) -> dict[str, dict[str, dict]]:
    safe_root = tmp_path_factory.mktemp("safe")
    buggy = _copy(safe_root)
    left = _with_helpers_left(buggy, _fix(safe_root))
    assert left and len(left) < len(buggy)
    unsafe_root = tmp_path_factory.mktemp("unsafe")
    _copy(unsafe_root)
    # some rules offer no fix: files with findings left still show the errors they predict
    left_unsafe = _with_helpers_left(_copy_list(unsafe_root), _fix(unsafe_root, "--unsafe-fixes"))
    unsafe = [unsafe_root / path.relative_to(safe_root) for path in buggy if path.resolve() in left]
    return {
        "safe": _oracle([path for path in buggy if path.resolve() not in left]),
        "unsafe": _oracle([path for path in unsafe if path.resolve() not in left_unsafe]),
    }


def _problems(verdicts: dict[str, dict], lowering_errors_allowed: bool, predicted: dict | None = None) -> dict:
    """What JAX still reports. With `lowering_errors_allowed` (unsafe fixes), a lowering error
    counts only when its code was predicted in the file: an unsafe fix may trade one error for
    another (forcing `collective=True` breaks a single-block variant), which is why it is unsafe."""
    problems = {}
    predicted = predicted or {}
    for name, result in verdicts.items():
        if result.get("error"):
            problems[name] = result["error"]
            continue
        for case in result["cases"]:
            if case["trace"] is not None:
                problems[f"{name}::{case['name']}"] = case["trace"]
            lowering = case.get("lowering")
            if not CHECK_LOWERING or not lowering or "unsupported" in lowering:
                continue
            if not lowering_errors_allowed or lowering.get("code") in predicted.get(name, {lowering.get("code")}):
                problems[f"{name}::{case['name']} (lowering)"] = lowering
    return problems


def test_safe_fixes_leave_kernels_that_trace_and_lower(fixed):
    assert len(fixed["safe"]) >= 8
    problems = _problems(fixed["safe"], lowering_errors_allowed=False)
    assert not problems, json.dumps(problems, indent=1)[:8000]


def test_unsafe_fixes_remove_the_predicted_errors(fixed):
    assert len(fixed["unsafe"]) >= 5
    predicted = {f"fixtures/{path.name}": {marker.code for marker in parse_markers(path)}
                 for path in (ROOT / "tests" / "fixtures").glob("*.py")}
    problems = _problems(fixed["unsafe"], lowering_errors_allowed=True, predicted=predicted)
    assert not problems, json.dumps(problems, indent=1)[:8000]
