"""How the benchmarks time things: side by side, in CPU time, the best of several runs.

These machines are shared and noisy. Wall time measures the neighbours as much as us, so an
in-process measurement takes the CPU time of this process (`time.process_time`), runs ours and
the baseline alternately (both see the same machine), and keeps each one's best run: noise
only ever adds time. A command is timed by the CPU time of its children (user + system) with
the same alternation; wall time is shown beside it where a person waits for it.
"""

from __future__ import annotations

import ast
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_kernels.sources import Source  # noqa: E402


def side_by_side(ours: Callable[[], object], base: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best CPU time of each, their runs interleaved (after one warm-up run of each)."""
    ours()
    base()
    best_ours = best_base = float("inf")
    for _ in range(repeat):
        best_ours = min(best_ours, cpu_time(ours))
        best_base = min(best_base, cpu_time(base))
    return best_ours, best_base


def cpu_time(function: Callable[[], object]) -> float:
    """The CPU time this process spends in one call."""
    started = time.process_time()
    function()
    return time.process_time() - started


def commands_side_by_side(ours: Sequence[str], base: Sequence[str], repeat: int,
                          env: dict | None = None, before_ours: Callable[[], object] | None = None
                          ) -> tuple[dict, dict]:
    """CPU (children's user + system, best run) and wall (median) time of two commands;
    `before_ours` runs before each run of ours, untimed (to clear a cache, say)."""
    runs: dict[int, list[tuple[float, float]]] = {0: [], 1: []}
    for _ in range(repeat):
        for index, command in enumerate((ours, base)):
            if index == 0 and before_ours is not None:
                before_ours()
            runs[index].append(run_command(command, env))
    return tuple({"cpu": min(c for c, _ in runs[i]), "wall": statistics.median(w for _, w in runs[i])}
                 for i in (0, 1))  # type: ignore[return-value]


def run_command(command: Sequence[str], env: dict | None = None) -> tuple[float, float]:
    """(CPU seconds of the command and its children, wall seconds)."""
    before = os.times()
    started = time.perf_counter()
    subprocess.run(list(command), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    wall = time.perf_counter() - started
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system), wall


def dense_ratios(sources: list[Source], analyse: Callable[[str, str], object], repeat: int
                 ) -> tuple[list[tuple[str, int, float, float]], list[str]]:
    """Warm analysis vs `ast.parse` of every Blackwell file this Python can parse: rows of
    (label, lines, ours s, parse s), and the files skipped (newer syntax than this Python's)."""
    rows, skipped = [], []
    for source in sources:
        if not source.blackwell:
            continue
        try:
            ast.parse(source.text)
        except SyntaxError as error:
            skipped.append(f"{source.label} ({error.msg}, line {error.lineno})")
            continue
        text, path = source.text, source.lint_path
        ours, base = side_by_side(lambda: analyse(text, path), lambda: ast.parse(text), repeat)  # noqa: B023
        rows.append((source.label, len(source.text.splitlines()), ours, base))
    return rows, skipped


def summary(ratios: list[float]) -> tuple[float, float, float]:
    """(worst, p95, median) of per-file ratios (p95: the file 5 % of them are above; with
    fewer than 20 files, the worst)."""
    ordered = sorted(ratios, reverse=True)
    return ordered[0], ordered[int(len(ordered) * 0.05)], statistics.median(ordered)
