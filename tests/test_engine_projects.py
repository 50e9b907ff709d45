"""One process, several projects: astroid caches modules by dotted name, so `helpers.mma` of
one copy of a tree must not stand in for `helpers.mma` of another (a server with two workspace
folders; `pallas-lint` run in-process by tests), and a rewritten helper is read again."""

import shutil

from conftest import ROOT
from pallas_lsp.analysis import analyze_file


def _copy(tmp_path, name):
    dest = tmp_path / name
    shutil.copytree(ROOT / "tests" / "fixtures", dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _lines_and_paths(path):
    findings = analyze_file(str(path)).findings
    # the line of this file that leads to each finding (a helper module's MMA is reported there,
    # anchored at the call here)
    lines = sorted((f.anchor or f.span).line for f in findings)
    return lines, {e.span.path for f in findings for fix in f.fixes for e in fix.edits}


def test_each_copy_gets_its_own_helper_module(tmp_path):
    a, b = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    helper_b = b / "helpers" / "mma.py"
    old = "accumulate=accumulate,\n                    collective_axis=CLUSTER_AXIS)"
    helper_b.write_text(helper_b.read_text().replace(old, "accumulate=accumulate)"))
    for _ in range(2):  # back and forth
        lines, paths = _lines_and_paths(a / "helper_module.py")
        assert lines == [23, 44, 65]
        assert str(a / "helpers" / "mma.py") in paths and not any(str(b) in p for p in paths if p)
        lines, paths = _lines_and_paths(b / "helper_module.py")
        # this copy's helper issues a single-block MMA: one accumulator left to make
        # collective, and the two others now have the shape of a collective MMA's
        findings = analyze_file(str(b / "helper_module.py")).findings
        assert sorted(((f.anchor or f.span).line, f.code) for f in findings) == [
            (23, "PLS018"), (44, "PLS001"), (65, "PLS018")]
        assert lines == [23, 44, 65]
        assert not any(str(a) in p for p in paths if p)


def test_a_rewritten_helper_is_read_again(tmp_path):
    a = _copy(tmp_path, "a")
    assert _lines_and_paths(a / "helper_module.py")[0] == [23, 44, 65]
    helper = a / "helpers" / "mma.py"
    helper.write_text(helper.read_text().replace("collective=collective)", "collective=True)"))
    # no cache to clear by hand: a helper whose file changed is read again
    assert _lines_and_paths(a / "helper_module.py")[0] == [23]


def test_an_unchanged_helper_is_kept_between_analyses(tmp_path):
    from astroid.manager import AstroidManager

    a = _copy(tmp_path, "a")
    first = analyze_file(str(a / "helper_module.py"))
    kept = AstroidManager().astroid_cache["helpers.mma"]
    second = analyze_file(str(a / "helper_module.py"))
    assert AstroidManager().astroid_cache["helpers.mma"] is kept  # not built again
    assert first.findings == second.findings
    assert first.dependencies == second.dependencies == (str(a / "helpers" / "__init__.py"),
                                                          str(a / "helpers" / "mma.py"))


def test_a_helper_rewritten_with_the_same_size_is_read_again(tmp_path):
    import os

    a = _copy(tmp_path, "a")
    assert _lines_and_paths(a / "helper_module.py")[0] == [23, 44, 65]
    helper = a / "helpers" / "mma.py"
    before = helper.stat()
    text = helper.read_text()
    helper.write_text(text.replace("collective=collective)", "collective=True      )"))
    assert helper.stat().st_size == before.st_size
    os.utime(helper, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert _lines_and_paths(a / "helper_module.py")[0] == [23]


def test_an_edited_but_unsaved_helper_is_read_from_the_editor(tmp_path):
    from pallas_lsp.analysis import analyze_source

    a = _copy(tmp_path, "a")
    kernel, helper = a / "helper_module.py", a / "helpers" / "mma.py"
    edited = {str(helper): helper.read_text().replace("collective=collective)", "collective=True)")}
    def lines(**options):
        findings = analyze_source(kernel.read_text(), str(kernel), **options).findings
        return sorted((f.anchor or f.span).line for f in findings)

    assert lines() == [23, 44, 65]
    assert lines(overlays=edited) == [23]
    assert lines() == [23, 44, 65]  # edit undone
