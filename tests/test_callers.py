"""Who else in the project uses a name (`trace.callers`): the search for one name finds what
an index of every identifier of the file finds."""

import random

from conftest import ROOT
from pallas_lsp.analysis.trace import callers


def _identifiers(data: bytes) -> set[bytes]:
    return set(callers._WORD.findall(data))


def _found(data: bytes, name: bytes) -> bool:
    """Does the search of a project of one file, `data`, find `name` in it?"""
    return bool(callers._Corpus(["a.py"], [None], data, [0]).holders(name))


def test_a_name_is_found_exactly_where_the_identifiers_of_the_file_hold_it():
    texts = [b"", b"foo", b"9foo", b"x9foo", b"_9foo", b"0x1f", b"foo9", b"foo_bar foo", b"a.foo(b)", b"\xc3\xa9foo",
             b"foo\xc3\xa9", b"foofoo foo1 1foo", b"12 34foo_ foo"]
    texts += [path.read_bytes() for path in sorted((ROOT / "pallas_lsp").rglob("*.py"))[:60]]
    rng = random.Random(0)
    for data in texts:
        words = _identifiers(data)
        names = set(rng.sample(sorted(words), min(len(words), 150))) | {b"foo", b"foo_bar", b"bar", b"x9foo"}
        names |= {name[1:] for name in list(names) if len(name) > 1 and not name[1:2].isdigit()}
        names |= {name[:-1] for name in list(names) if len(name) > 1}
        for name in names:
            assert _found(data, name) == (name in words), (name, data[:60])


def test_used_elsewhere_asks_every_other_file(tmp_path):
    (tmp_path / "a.py").write_text("def build_kernel(x):\n    return x\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from a import build_kernel\nbuild_kernel(1)\n# only_in_a_comment\n",
                                   encoding="utf-8")
    here = callers.Callers(str(tmp_path / "a.py"), str(tmp_path))
    assert here.used_elsewhere("build_kernel")
    assert here.used_elsewhere("only_in_a_comment")  # a mention, as the index counted it
    assert not here.used_elsewhere("x")
    assert not here.used_elsewhere("build")
    assert callers.Callers(str(tmp_path / "b.py"), str(tmp_path)).used_elsewhere("return")
    assert not callers.Callers(str(tmp_path / "b.py"), str(tmp_path)).used_elsewhere("only_in_a_comment")


def test_a_name_the_analysed_file_mentions_first_is_still_found_in_another(tmp_path):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("shared_helper = 1\n", encoding="utf-8")
    for name in ("a.py", "b.py", "c.py"):
        assert callers.Callers(str(tmp_path / name), str(tmp_path)).used_elsewhere("shared_helper")


def test_a_changed_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(callers, "RECHECK_AFTER", 0.0)
    (tmp_path / "a.py").write_text("def late_helper():\n    pass\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("x = 1\n", encoding="utf-8")
    assert not callers.Callers(str(tmp_path / "a.py"), str(tmp_path)).used_elsewhere("late_helper")
    (tmp_path / "b.py").write_text("from a import late_helper\n", encoding="utf-8")
    assert callers.Callers(str(tmp_path / "a.py"), str(tmp_path)).used_elsewhere("late_helper")
