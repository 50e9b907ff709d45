"""Fix plans and byte-faithful, atomic writes."""

from __future__ import annotations

import os
import stat

import pytest

from pallas_lsp.analysis import Applicability, Edit, Finding, Fix, Span, lint
from pallas_lsp.analysis.fixing import (
    Plan, SourceFile, changes, fix_to_apply, plan_fixes, plan_noqa, write, write_atomic,
)
from pallas_lsp.analysis.settings import Settings

from conftest import ROOT


def edit(line, col, end_col, text="", path=None) -> Edit:
    return Edit(Span(line, col, line, end_col, path), text)


def fix(title, applicability, *edits, preferred=False) -> Fix:
    return Fix(title, applicability, tuple(edits), preferred)


def finding(*fixes, line=1) -> Finding:
    return Finding("PLS001", "m", Span(line, 0, line, 1), fixes=tuple(fixes))


SAFE = fix("safe", Applicability.SAFE, edit(1, 0, 1, "a"))
UNSAFE = fix("unsafe", Applicability.UNSAFE, edit(1, 2, 3, "b"))
SHOWN = fix("shown", Applicability.DISPLAY_ONLY, edit(1, 4, 5, "c"))


def test_fix_to_apply():
    assert fix_to_apply(finding(UNSAFE, SAFE)) is SAFE
    assert fix_to_apply(finding(UNSAFE)) is None
    assert fix_to_apply(finding(UNSAFE), unsafe=True) is UNSAFE
    assert fix_to_apply(finding(SHOWN), unsafe=True) is None
    preferred = fix("preferred", Applicability.UNSAFE, edit(2, 0, 0, "p"), preferred=True)
    assert fix_to_apply(finding(UNSAFE, preferred), unsafe=True) is preferred
    assert fix_to_apply(finding(fix("empty", Applicability.SAFE))) is None


def test_plan_shares_identical_edits_and_refuses_overlaps(tmp_path):
    path = str(tmp_path / "k.py")
    plan = Plan()
    same = fix("x", Applicability.SAFE, edit(3, 5, 5, ", collective=True"))
    assert plan.add(path, finding(same), same)
    assert plan.add(path, finding(same, line=2), same)  # two MMAs, one allocation
    assert plan.edits == {path: [edit(3, 5, 5, ", collective=True")]}
    assert len(plan.fixed) == 2
    clash = fix("y", Applicability.SAFE, edit(3, 5, 5, ", other=1"))
    assert not plan.add(path, finding(clash), clash)  # two insertions at one point
    overlapping = fix("z", Applicability.SAFE, edit(3, 0, 6, "q"))
    assert not plan.add(path, finding(overlapping), overlapping)
    assert len(plan.fixed) == 2


def test_edits_in_another_file_are_planned_there(tmp_path):
    here, helper = str(tmp_path / "k.py"), str(tmp_path / "helpers" / "mma.py")
    both = fix("x", Applicability.SAFE, edit(1, 0, 1, "a"), edit(7, 2, 3, "b", path=helper))
    plan = plan_fixes(here, [finding(both)])
    assert plan.edits == {here: [edit(1, 0, 1, "a")], helper: [edit(7, 2, 3, "b")]}  # local coordinates


def test_source_file_round_trips_bytes(tmp_path):
    samples = {
        "bom.py": b"\xef\xbb\xbfx = 'caf\xc3\xa9'\r\n",
        "latin.py": b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n",
        "plain.py": b"x = 1\n\ty = 2\rz = 3",
    }
    for name, data in samples.items():
        path = tmp_path / name
        path.write_bytes(data)
        source = SourceFile.read(str(path))
        assert not source.text.startswith("\ufeff")
        assert source.encode(source.text) == data
    assert SourceFile.read(str(tmp_path / "bom.py")).bom
    assert SourceFile.read(str(tmp_path / "latin.py")).encoding == "iso-8859-1"


def test_source_file_errors(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"# -*- coding: nope -*-\n")
    with pytest.raises(SyntaxError):
        SourceFile.read(str(tmp_path / "bad.py"))
    with pytest.raises(OSError):
        SourceFile.read(str(tmp_path / "missing.py"))


def test_write_atomic_keeps_the_mode_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"old")
    path.chmod(0o750)
    write_atomic(str(path), b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert os.listdir(tmp_path) == ["k.py"]
    write_atomic(str(tmp_path / "fresh.py"), b"x")  # a new file
    assert (tmp_path / "fresh.py").read_bytes() == b"x"


def test_write_atomic_cleans_up_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "k.py"
    path.write_bytes(b"old")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        write_atomic(str(path), b"new")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["k.py"]


def test_changes_and_write_keep_everything_outside_the_edits(tmp_path):
    original = (ROOT / "examples" / "collective_matmul.py").read_text(encoding="utf-8")
    data = ("# -*- coding: latin-1 -*-\n# \xe9\n" + original).replace("\n", "\r\n").encode("latin-1")
    path = tmp_path / "k.py"
    path.write_bytes(data)
    source = SourceFile.read(str(path))
    findings = lint(source.text, str(path), Settings()).findings
    plan = plan_fixes(str(path), findings)
    (change,) = changes(plan)
    write(change)
    assert path.read_bytes() == data.replace(
        b"jnp.float32),\r\n            barrier", b"jnp.float32, collective=True),\r\n            barrier")
    assert changes(plan_fixes(str(path), [])) == []


def test_plan_noqa(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("x = 1\n")
    plan = plan_noqa(str(path), "x = 1\n", [finding()])
    (change,) = changes(plan)
    assert change.after == "x = 1  # noqa: PLS001\n"
    assert plan_noqa(str(path), "x = 1  # noqa\n", [finding()]).edits == {}
