"""A short, bounded fuzzing run for CI (the long one is `python tests/fuzz/run.py`): random
valid programs (hypothesmith) and broken real kernels must never make a frontend raise."""

from __future__ import annotations

import random

import pytest

from fuzz import mutations, targets

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")

from hypothesis import HealthCheck, given, settings  # noqa: E402

from pallas_lsp.analysis import analyze_source  # noqa: E402

HEADER = "from jax.experimental.pallas import mosaic_gpu as plgpu\n"
TAIL = "\nplgpu.tcgen05_mma(x, y, z, collective_axis='x')\nplgpu.RefUnion(plgpu.TMEM((1,), None))\n"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_random_valid_programs(program):
    result = analyze_source(HEADER + program + TAIL, "generated.py", budget=2.0)
    assert result.error is None or result.error.startswith(("syntax", "analysis budget", "nesting"))


@pytest.mark.parametrize("target", ["core", "flake8", "cli"])
def test_mutants_of_real_kernels(target, tmp_path):
    runner = {"core": targets.core, "flake8": targets.flake8_plugin, "cli": targets.cli}[target]
    for _, data in mutations.mutants(random.Random(7), 150):
        runner(data, str(tmp_path))  # raising is the failure


def test_mutants_through_the_server():
    server = targets.Server()
    try:
        for _, data in mutations.mutants(random.Random(11), 40):
            server(data, "")
    finally:
        server.close()
