"""`# noqa` directives: what they silence, and the edits that add them."""

from __future__ import annotations

from pallas_lsp.analysis import Finding, Span, lint
from pallas_lsp.analysis.fixes import apply_edits
from pallas_lsp.analysis.noqa import ALL, add_noqa, directives, noqa_edit, unsilenced
from pallas_lsp.analysis.settings import Settings

from conftest import ROOT

EXAMPLE = (ROOT / "examples" / "collective_matmul.py").read_text(encoding="utf-8")


def finding(line: int, code: str = "PLS001") -> Finding:
    return Finding(code, "message", Span(line, 0, line, 1))


def test_directives():
    text = (
        "a = 1  # noqa\n"
        "b = 2  # noqa: PLS001, pls002\n"
        "c = 3  # NOQA:PLS0\n"
        "d = '# noqa'\n"
        "e = 5  # a comment, then # noqa: PLS002\n"
        "f = 6  # noqa:PLS\n"
    )
    marks = directives(text)
    # a code prefix needs a digit, as in flake8; "noqa:PLS" with no digit is read as a bare noqa
    assert marks.lines == {1: ALL, 2: frozenset({"PLS001", "PLS002"}), 3: frozenset({"PLS0"}),
                           5: frozenset({"PLS002"}), 6: ALL}
    assert marks.file == frozenset()


def test_unsilenced():
    text = "x = 1  # noqa: PLS001\ny = 2  # noqa: PLS\nz = 3  # noqa\nw = 4\n"
    findings = [finding(1), finding(1, "PLS002"), finding(2, "PLS002"), finding(3, "PLS002"), finding(4)]
    kept, silenced = unsilenced(findings, text)
    assert [(f.line, f.code) for f in kept] == [(1, "PLS002"), (4, "PLS001")]
    assert silenced == 3


def test_file_level_directive():
    kept, silenced = unsilenced([finding(1), finding(2, "PLS002")], "# pallas-lint: noqa: PLS002\nx = 1\n")
    assert [(f.line, f.code) for f in kept] == [(1, "PLS001")] and silenced == 1
    kept, _ = unsilenced([finding(1), finding(2, "PLS002")], "x = 1\n# pallas-lint: noqa\n")
    assert kept == []


def test_a_noqa_inside_a_string_is_not_a_directive():
    kept, silenced = unsilenced([finding(1)], "x = 'tcgen05_mma  # noqa'\n")
    assert len(kept) == 1 and silenced == 0


def test_noqa_edit_adds_or_extends():
    text = "x = f(a)\ny = g(b)  # noqa: PLS001\nz = h(c)  # noqa\n"
    assert apply_edits(text, [noqa_edit(text, 1, ["PLS002", "PLS001"])]).splitlines()[0] == \
        "x = f(a)  # noqa: PLS001, PLS002"
    assert apply_edits(text, [noqa_edit(text, 2, ["PLS002"])]).splitlines()[1] == \
        "y = g(b)  # noqa: PLS001, PLS002"
    assert noqa_edit(text, 2, ["PLS001"]) is None  # already silenced
    assert noqa_edit(text, 3, ["PLS002"]) is None  # a bare noqa silences everything


def test_noqa_edit_keeps_line_endings_and_trailing_spaces():
    text = "x = f(a)   \r\ny = 2\r\n"
    assert apply_edits(text, [noqa_edit(text, 1, ["PLS001"])]) == "x = f(a)  # noqa: PLS001\r\ny = 2\r\n"


def test_no_comment_inside_a_multiline_string():
    text = 's = """first\nsecond"""\n'
    assert noqa_edit(text, 1, ["PLS001"]) is None
    assert noqa_edit(text, 2, ["PLS001"]) is not None


def test_no_comment_inside_a_multiline_f_string():  # Python 3.12 tokenizes it in parts
    text = 's = f"""first {x}\nsecond"""\nt = 1\n'
    assert noqa_edit(text, 1, ["PLS001"]) is None
    assert noqa_edit(text, 2, ["PLS001"]) is not None
    assert noqa_edit(text, 3, ["PLS001"]) is not None


def test_add_noqa_round_trip():
    settings = Settings()
    findings = lint(EXAMPLE, None, settings).findings
    assert [f.code for f in findings] == ["PLS001", "PLS002"]
    edits = add_noqa(EXAMPLE, findings)
    assert len(edits) == 2
    baselined = apply_edits(EXAMPLE, edits)
    compile(baselined, "kernel.py", "exec")
    result = lint(baselined, None, settings)
    assert (result.findings, result.silenced) == ([], 2)
    assert add_noqa(baselined, findings) == []  # idempotent
    # the marker comments already on those lines are kept, the noqa goes after them
    assert '# PLS001  # noqa: PLS001' in baselined


def test_add_noqa_groups_codes_per_line():
    text = "x = 1\ny = 2\n"
    edits = add_noqa(text, [finding(2, "PLS002"), finding(2), finding(2)])
    assert apply_edits(text, edits) == "x = 1\ny = 2  # noqa: PLS001, PLS002\n"


def test_code_at_a_column_of_a_noqa_comment():
    from pallas_lsp.analysis.noqa import code_at

    line = "x = f()  # noqa: PLS001, pls002"
    assert code_at(line, line.index("PLS001") + 2) == "PLS001"
    assert code_at(line, line.index("pls002")) == "PLS002"
    assert code_at(line, 2) is None
    assert code_at("x = f()  # noqa", 12) is None


def test_a_helper_modules_finding_is_silenced_there_or_at_its_anchor():
    helper = Finding("PLS001", "m", Span(11, 2, 11, 9, "helpers/mma.py"), anchor=Span(23, 2, 23, 9))
    kernel = "\n" * 22 + "  issue(acc)\n"
    texts = {"helpers/mma.py": "\n" * 10 + "  plgpu.tcgen05_mma(acc)  # noqa: PLS001\n"}
    assert unsilenced([helper], kernel, texts.get) == ([], 1)  # silenced where it is
    assert unsilenced([helper], kernel, {"helpers/mma.py": ""}.get) == ([helper], 0)
    at_call = "\n" * 22 + "  issue(acc)  # noqa: PLS001\n"
    assert unsilenced([helper], at_call, {"helpers/mma.py": ""}.get) == ([], 1)  # or where it is reached
