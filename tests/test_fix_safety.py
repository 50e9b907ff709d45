"""Every fix offered on every fixture: the result parses, the finding is gone, fixing again
changes nothing, and files are written byte for byte outside the edit, atomically."""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, TESTS

from pallas_lsp.analysis import analyze_file
from pallas_lsp.analysis.fixes import apply_edits
from pallas_lsp.analysis.fixing import Plan, SourceFile, changes, plan_fixes, write

FIXTURES = TESTS / "fixtures"
FILES = sorted(p for p in FIXTURES.glob("*.py")) + [ROOT / "examples" / "collective_matmul.py"]


@pytest.mark.parametrize("source", FILES, ids=[p.name for p in FILES])
def test_every_fix(source: Path, tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "project")
    path = tmp_path / "project" / source.name
    shutil.copy(source, path)
    findings = analyze_file(str(path)).findings
    checked = 0
    for finding in findings:
        for fix in finding.fixes:
            project = tmp_path / f"try{checked}"
            shutil.copytree(tmp_path / "project", project)
            target = project / source.name
            plan = Plan()
            assert plan.add(str(target), finding, _moved(fix, tmp_path / "project", project))
            for change in changes(plan):
                write(change)
                ast.parse(Path(change.path).read_text())  # the result parses
            after = analyze_file(str(target)).findings
            same = [f for f in after if f.code == finding.code and f.line == finding.line
                    and f.message == finding.message]
            assert not same, f"{fix.title} left {finding.code} at line {finding.line}"
            checked += 1
    if not findings:
        pytest.skip("a clean twin: nothing to fix")


@pytest.mark.parametrize("source", FILES, ids=[p.name for p in FILES])
def test_fixing_reaches_a_fixed_point(source: Path, tmp_path):
    """Fixing until nothing changes takes a pass or two; one more pass then changes nothing."""
    shutil.copytree(FIXTURES, tmp_path / "project")
    path = tmp_path / "project" / source.name
    shutil.copy(source, path)
    for passes in range(1, 6):  # noqa: B007 - read after the loop
        pending = changes(plan_fixes(str(path), analyze_file(str(path)).findings, unsafe=True))
        if not pending:
            break
        for change in pending:
            write(change)
    assert passes <= 3, f"still changing after {passes} passes"


def _moved(fix, old: Path, new: Path):
    """The fix with edits in other files of the project pointed at the copy."""
    from dataclasses import replace

    edits = tuple(
        replace(edit, span=replace(edit.span, path=str(new / Path(edit.span.path).relative_to(old))))
        if edit.span.path else edit
        for edit in fix.edits
    )
    return replace(fix, edits=edits)


@pytest.mark.parametrize("bom", [False, True])
def test_bytes_outside_the_edit_are_kept(tmp_path, bom):
    text = (ROOT / "examples" / "collective_matmul.py").read_text()
    text = "".join("\t" * ((len(line) - len(line.lstrip(" "))) // 4) + line.lstrip(" ")
                   for line in text.splitlines(True))
    text = text.replace("import jax\n", "import jax  # ça marche, 𝄞\n").replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    path = tmp_path / "kernel.py"
    path.write_bytes(data)
    findings = analyze_file(str(path)).findings
    plan = plan_fixes(str(path), findings, unsafe=False)
    [change] = changes(plan)
    write(change)
    result = path.read_bytes()
    assert result.startswith(b"\xef\xbb\xbf") == bom
    before_lines, after_lines = data.split(b"\r\n"), result.split(b"\r\n")
    assert len(before_lines) == len(after_lines) and b"\n" not in result.replace(b"\r\n", b"")
    changed = [i for i, (a, b) in enumerate(zip(before_lines, after_lines)) if a != b]
    assert len(changed) == 1 and after_lines[changed[0]].endswith(b", collective=True),")
    assert SourceFile.read(str(path)).text == apply_edits(SourceFile.read(str(tmp_path / "kernel.py")).text, ())


def test_latin1_cookie_is_kept(tmp_path):
    text = "# -*- coding: latin-1 -*-\n# café\n" + (ROOT / "examples" / "collective_matmul.py").read_text()
    path = tmp_path / "kernel.py"
    path.write_bytes(text.encode("latin-1"))
    [change] = changes(plan_fixes(str(path), analyze_file(str(path)).findings))
    write(change)
    result = path.read_bytes()
    assert b"# caf\xe9\n" in result and "collective=True" in result.decode("latin-1")


def test_a_killed_writer_leaves_the_old_file(tmp_path):
    """The writer is killed between writing the temporary file and the rename: the file keeps
    its old bytes, and no partial file takes its place."""
    path = tmp_path / "kernel.py"
    path.write_bytes(b"old\n" * 1000)
    script = textwrap.dedent(f"""
        import os, sys, time
        from pallas_lsp.analysis import fixing
        real_fsync = os.fsync
        def slow_fsync(fd):
            real_fsync(fd)
            print("written", flush=True)
            time.sleep(60)
        os.fsync = slow_fsync
        fixing.write_atomic({str(path)!r}, b"new\\n" * 5_000_000)
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "written"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert path.read_bytes() == b"old\n" * 1000
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "kernel.py"]
    assert all(name.startswith(".pallas-") for name in leftovers)  # only our temporary file


def _code(text: str) -> str:
    """The text without its module docstring and markers."""
    return re.sub(r"  # PLS00[12]\n", "\n", text[text.index('"""', 3) + 3:])


def test_the_tie_fixes_write_the_clean_twin(tmp_path):
    """PLS002's tie fix gives the odd member the others' flag: `--fix --unsafe-fixes` turns
    union_tied.py into its clean twin (JAX accepts both in every configuration: the
    oracle tests), the fix in the union's own statement safe, the one on a member made
    before it unsafe."""
    path = tmp_path / "union_tied.py"
    shutil.copy(FIXTURES / "union_tied.py", path)
    fixes = [(fix.applicability.value, fix.preferred, fix.title.split(": ")[-1])
             for finding in analyze_file(str(path)).findings for fix in finding.fixes]
    assert fixes == [("safe", True, "collective=collective"), ("unsafe", True, "collective=config.collective")]
    for change in changes(plan_fixes(str(path), analyze_file(str(path)).findings, unsafe=True)):
        write(change)
    assert _code(path.read_text()) == _code((FIXTURES / "union_tied_clean.py").read_text())


def test_the_dict_flag_tie_writes_the_clean_twin(tmp_path):
    """PLS001 ties the accumulator to `config["collective"]` (unsafe: the MMA names the flag
    only inside an expression); `--fix --unsafe-fixes` writes flag_dict_tie_clean.py."""
    path = tmp_path / "flag_dict_tie.py"
    shutil.copy(FIXTURES / "flag_dict_tie.py", path)
    fixes = [(fix.applicability.value, fix.title.split(": ")[-1])
             for finding in analyze_file(str(path)).findings for fix in finding.fixes]
    assert fixes == [("unsafe", "collective=config['collective']")]
    for change in changes(plan_fixes(str(path), analyze_file(str(path)).findings, unsafe=True)):
        write(change)
    assert _code(path.read_text()) == _code((FIXTURES / "flag_dict_tie_clean.py").read_text())
