"""Each rule's own VALID/INVALID examples, its fixes, and its documentation sections."""

from collections import Counter

import pytest

from oracle.markers import parse_markers_source
from pallas_lsp.analysis import Applicability, analyze_source
from pallas_lsp.analysis.fixes import apply_edits
from pallas_lsp.analysis.rules import RULES

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Fix safety", "## JAX message")


def _cases(kind) -> list:
    return [
        pytest.param(rule, example, id=f"{rule.code}-{kind}-{index}")
        for rule in RULES
        for index, example in enumerate(getattr(rule, kind))
    ]


@pytest.mark.parametrize("rule,source", _cases("VALID"))
def test_valid(rule, source):
    assert analyze_source(source, select=[rule.code]).findings == []


@pytest.mark.parametrize("rule,example", _cases("INVALID"))
def test_invalid(rule, example):
    findings = analyze_source(example.code, select=[rule.code]).findings
    expected = Counter((m.line, m.code) for m in parse_markers_source(example.code))
    assert Counter((f.line, f.code) for f in findings) == expected
    if example.fixed is None:
        return
    fixes = [f.fixes[0] for f in findings]
    fixed = apply_edits(example.code, [edit for fix in fixes for edit in fix.edits])
    assert _strip_markers(fixed) == _strip_markers(example.fixed)
    assert analyze_source(fixed, select=[rule.code]).findings == []
    # applying the fix again changes nothing: there is nothing left to fix
    assert apply_edits(fixed, []) == fixed


def _strip_markers(source: str) -> str:
    return "\n".join(line.split("  # PLS")[0] for line in source.splitlines())


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_documentation_sections(rule):
    doc = rule.documentation()
    positions = [doc.find(section) for section in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), rule.code


def test_pls001_fix_is_safe_only_when_every_use_is_collective():
    rule = next(r for r in RULES if r.code == "PLS001")
    [finding] = analyze_source(rule.INVALID[0].code).findings
    assert [(fix.title, fix.applicability) for fix in finding.fixes] == [
        ("Add collective=True to the TMEM allocation", Applicability.SAFE),
    ]
    assert finding.fixes[0].preferred


def test_rule_state_lives_as_long_as_its_context():
    """`ctx.state(KEY)`: made by the key's `make` on first use, once per context (one analysis)."""
    import astroid

    from pallas_lsp.analysis.context import Context, State
    from pallas_lsp.analysis.prefilter import ReadNames
    from pallas_lsp.analysis.source import Lines

    made = []
    key = State("a test's counter", lambda ctx: made.append(ctx) or [])
    module = astroid.parse("x = 1\n")
    first, second = (Context(module, Lines("x = 1\n"), None, ReadNames(frozenset(), frozenset())) for _ in range(2))
    first.state(key).append(1)
    assert first.state(key) == [1] and second.state(key) == []
    assert made == [first, second]
