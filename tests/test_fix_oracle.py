"""The JAX oracle on what `pallas-lint check --fix` wrote: the fixed kernels trace (and, where
this JAX lowers with Warpgroup semantics, lower) without the errors the findings predicted.

The fixtures and the example are copied, fixed with `--fix --unsafe-fixes` (so every finding
is fixed, in helper modules too), and each file that had a finding is run through
`tests/oracle/run_fixture.py` as `tests/test_oracle.py` does.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

from conftest import ROOT  # noqa: E402
from oracle.markers import parse_markers, version_allowed  # noqa: E402
from test_oracle import CHECK_LOWERING, JAX_VERSION, _run  # noqa: E402


@pytest.fixture(scope="module")
def fixed(tmp_path_factory) -> list[Path]:
    """The copies of every file with a finding, after --fix --unsafe-fixes."""
    root = tmp_path_factory.mktemp("fixed")
    shutil.copytree(ROOT / "tests" / "fixtures", root / "fixtures",
                    ignore=shutil.ignore_patterns("__pycache__", "README.md"))
    shutil.copytree(ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    buggy = [path for path in sorted(root.glob("*/*.py")) if parse_markers(path)]
    result = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--fix", "--unsafe-fixes", "."],
                            cwd=root, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith(" remaining).\n") and " 0 remaining" in result.stdout, result.stdout
    return [path for path in buggy if version_allowed(path, JAX_VERSION)]


@pytest.fixture(scope="module")
def verdicts(fixed) -> dict[str, dict]:
    workers = max(1, min(len(fixed), os.cpu_count() or 2))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        results = pool.map(_run, fixed)
        return {f"{path.parent.name}/{path.name}": result for path, result in zip(fixed, results)}


def test_every_fixed_file_traces_cleanly(verdicts):
    assert len(verdicts) >= 15
    problems = {}
    for name, result in verdicts.items():
        if result.get("error"):
            problems[name] = result["error"]
            continue
        for case in result["cases"]:
            if case["trace"] is not None:
                problems[f"{name}::{case['name']}"] = case["trace"]
            lowering = case.get("lowering")
            if CHECK_LOWERING and lowering and "unsupported" not in lowering:
                problems[f"{name}::{case['name']} (lowering)"] = lowering
    assert not problems, json.dumps(problems, indent=1)[:8000]
