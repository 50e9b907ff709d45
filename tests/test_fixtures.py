"""The linter against the markers written beside the lines of every fixture and example."""

import os
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT
from oracle.markers import parse_markers
from pallas_lsp.analysis import analyze_file

FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_findings_match_markers(path: Path):
    expected = Counter((m.line, m.code) for m in parse_markers(path))
    result = analyze_file(str(path))
    assert result.error is None
    # a finding in a helper module (the MMA JAX's traceback names) is marked where this file
    # leads to it: its anchor
    got = Counter(((f.anchor or f.span).line, f.code) for f in result.findings)
    assert got == expected, "\n".join(f"{f.line}: {f.code} {f.message}" for f in result.findings)
    # and the finding itself is where the marker's `[in FILE:LINE]` says (else in this file)
    where = Counter((m.where, m.code) for m in parse_markers(path))
    placed = Counter(((os.path.relpath(f.span.path, path.parent), f.span.line) if f.span.path else None, f.code)
                     for f in result.findings)
    assert placed == where


def _messages(name: str) -> dict[int, list[str]]:
    messages: dict[int, list[str]] = {}
    for finding in analyze_file(str(ROOT / "tests" / "fixtures" / name)).findings:
        messages.setdefault(finding.line, []).append(finding.message)
    return messages


def test_flag_dependent_findings_say_where_they_fail():
    # the configs come from the fixture's own call sites, so the call that fails is named
    messages = [m for ms in _messages("flag_config_bugs.py").values() for m in ms]
    assert messages and all("via the call at line" in m for m in messages), messages


def test_union_member_message_says_jax_misses_it():
    messages = [m for ms in _messages("refunion_members.py").values() for m in ms]
    assert messages and all("member of the RefUnion" in m and "inconsistent" in m for m in messages)


def test_example_messages():
    findings = analyze_file(str(ROOT / "examples" / "collective_matmul.py")).findings
    assert [f.message for f in findings] == [
        "Accumulator 'acc_tmem' must be collective: collective_axis='x' is set, "
        "but it is allocated at line 35 without collective=True",
        "Some aliased TMEM references are collective and some are not: "
        "collective: line 52; not collective: line 53",
    ]
    assert [(f.line, f.col, f.span.end_line) for f in findings] == [(25, 12, 25), (51, 12, 54)]
    related = findings[0].related[0]
    assert (related.span.line, related.message) == (35, "TMEM allocated here without collective=True")


def test_an_undecided_when_condition_adds_no_condition_of_the_stub():
    """`pl.when` asks whether its condition is a Python bool; where that is not known (a
    traced value, an input), the body runs as a `lax.cond`'s does, and no condition of the
    stub's own (`isinstance(condition, bool)`) shows in a message or a hover."""
    from pallas_lsp.analysis import analyze_source

    text = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def build(leader, wide):
    def kernel(a_smem, b_smem, acc, barrier):
        @pl.when(leader)
        def _():
            plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier, collective_axis="x" if wide else None)

    return plgpu.kernel(kernel, out_type=(), cluster=(2,), cluster_names=("x",), scratch_types=[
        plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 128), jnp.float16),
        plgpu.TMEM((128, 256 if wide else 128), jnp.float32), plgpu.Barrier(orders_tensor_core=True)])
'''
    result = analyze_source(text, "when_input.py", want_facts=True)
    shown = [finding.message for finding in result.findings] + [fact.markdown for fact in result.facts]
    assert [finding.code for finding in result.findings] == ["PLS001"]
    assert shown and not any("isinstance" in text for text in shown)
