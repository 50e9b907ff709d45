"""Run a fixture file under real JAX in a fresh subprocess (`run_fixture.py`) and return its
JSON verdict; `{"error": ...}` when the runner itself fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).resolve().parent / "run_fixture.py"
TIMEOUT = 600


def run_fixture(path: Path, lower: bool = False) -> dict:
    cmd = [sys.executable, str(RUNNER), str(path)] + (["--lower"] if lower else [])
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=str(path.parent))
    if proc.returncode != 0:
        return {"error": f"runner exited with {proc.returncode}:\n{proc.stderr[-6000:]}"}
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": f"runner printed no JSON:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"}
