"""An edited text parsed again only where the edit is (`analysis.reparse.ParseMemo`) gives the
tree a parse of the whole text gives: every node's fields and positions, after random edits of
real files (the installed jax package's Pallas modules, and JAX's repository when
$PALLAS_REALCODE_JAX names it) and of the fixtures, and in the cases the run's parse cannot
tell alone. The walk kept per statement (`prefilter.WalkMemo`) finds what a walk of the whole
tree finds, in its order. And an analysis leaves the kept tree as it was parsed.
"""

from __future__ import annotations

import ast
import os
import random
import textwrap

import pytest

from conftest import TESTS
from pallas_lsp.analysis import Settings, lint
from pallas_lsp.analysis.prefilter import Bindings, WalkMemo
from pallas_lsp.analysis.reparse import ParseMemo, parse
from pallas_lsp.analysis.session import Session
from real_kernels.sources import jax_sources


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _found(bindings: Bindings) -> tuple[object, ...]:
    """Everything a walk finds, nodes as their dumps, in the order found."""
    return (
        [_dump(node) for node in bindings.calls], [_dump(node) for node in bindings.attributes],
        [_dump(node) for node in bindings.decorators], list(bindings.imports.items()), bindings.aliased_imports,
        bindings.rebound, bindings.loaded, bindings.star_import, bindings.star_paths, bindings.modules,
        bindings.bare,
    )


def _edited(text: str, rng: random.Random, step: int) -> str:
    """One random edit: lines put in at any indentation, deleted, changed, or a character put in."""
    lines = text.splitlines(True)
    at = rng.randrange(len(lines))
    indent = len(lines[at]) - len(lines[at].lstrip(" "))
    kind = rng.randrange(9)
    if kind == 0:
        lines.insert(at, " " * indent + "# a comment\n")
    elif kind == 1:
        lines.insert(at, " " * indent + f"edit_{step} = f(x.y, z=1)\n")
    elif kind == 2:
        lines.insert(at, " " * indent + f"import os.path as p{step}\n")
    elif kind == 3:
        del lines[at:at + rng.randrange(1, 6)]
    elif kind == 4:
        lines[at] = lines[at].rstrip("\n") + " + 1\n" if lines[at].strip() else lines[at]
    elif kind == 5:
        lines.insert(at, " " * rng.randrange(0, 9) + "z = 2\n")  # any indentation: often another block's
    elif kind == 6:
        lines.insert(at, "\n")
    elif kind == 7:
        lines.insert(at, " " * indent + "def added(a):\n" + " " * indent + "  return a\n")
    else:
        column = rng.randrange(len(lines[at]) + 1)
        lines[at] = lines[at][:column] + rng.choice(["x", "(", ")", "'", '"""', ":", " "]) + lines[at][column:]
    return "".join(lines)


def _check_edits(text: str, seed: int, edits: int) -> tuple[int, int]:
    """Edit `text` at random; after each edit the memos' tree and walk must be a whole
    parse's and walk's. Returns (edits parsed in part, edits that parsed)."""
    rng = random.Random(seed)
    parses, walks = ParseMemo(), WalkMemo()
    walks.bindings(parses.parse(text, "m.py"), "pkg", "m.py")
    in_part = parsed = 0
    for step in range(edits):
        if len(text.splitlines()) < 3:
            break
        new = _edited(text, rng, step)
        try:
            expected = parse(new)
        except SyntaxError:
            with pytest.raises(SyntaxError):
                parses.parse(new, "m.py")
            continue  # (the memo keeps the last text that parsed: the next edit is of it)
        got = parses.parse(new, "m.py")
        assert _dump(got) == _dump(expected), f"seed {seed}, edit {step}"
        assert _found(walks.bindings(got, "pkg", "m.py")) == _found(Bindings.of(expected, "pkg"))
        in_part += parses.reparsed is not None
        parsed += 1
        text = new
    return in_part, parsed


def _real_texts() -> list[tuple[str, str]]:
    found = [(s.label, s.text) for s in jax_sources(os.environ.get("PALLAS_REALCODE_JAX")) if not s.is_doc]
    return [(label, text) for label, text in found if len(text.splitlines()) >= 3 and _parses(text)]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False  # newer syntax than this Python
    return True


REAL = _real_texts()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")  # (their escapes)
@pytest.mark.parametrize(("label", "text"), REAL, ids=[label for label, _ in REAL])
def test_random_edits_of_real_files(label: str, text: str) -> None:
    in_part, parsed = _check_edits(text, seed=len(label), edits=40)
    assert in_part >= parsed // 2  # most edits are parsed in part


FIXTURES = sorted((TESTS / "fixtures").glob("*.py"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_random_edits_of_fixtures(fixture: object) -> None:
    _check_edits(fixture.read_text(), seed=3, edits=6)  # type: ignore[attr-defined]


_MODULE = textwrap.dedent('''\
    """A module."""
    # a comment above everything

    import jax


    @decorator(1)
    class Kernels(Base, metaclass=Meta):
      """Docstring."""

      def first(self, a,
                b):
        x = a + b
        return x

      def one_line(self): return 1

      a = 1; b = 2

      class Inner:
        def deep(self):
          def nested():
            return 3
          return nested


    def last(y):
      return y
    ''')


@pytest.mark.parametrize(("old", "new", "in_part"), [
    ("    x = a + b\n", "    x = a + b + 1\n", True),  # inside a method
    ("    x = a + b\n", "    x = a + b\n    y = 2\n", True),  # a line added: what follows moves
    ("    return x\n", "    return x\n  y = 2\n", True),  # a class statement after the method
    ("      return nested\n", "      return nested\ny = 2\n", False),  # a module statement: ends the class
    ("    x = a + b\n", "    x = a + b\n   y = 2\n", None),  # an indentation no block has
    ("  def one_line(self): return 1\n", "  def one_line(self): return 2\n", True),
    ("  a = 1; b = 2\n", "  a = 1; b = 3\n", True),  # statements sharing a line go together
    ("        return 3\n", "        return 4\n", True),  # four definitions deep
    ("class Kernels(Base, metaclass=Meta):\n", "class Kernels(Base):\n", True),  # a header: the class
    ("@decorator(1)\n", "@decorator(2)\n", True),
    ("# a comment above everything\n", "# another comment\n", True),  # (in the docstring's lines)
    ('  """Docstring."""\n', '  """Docstring, longer."""\n', True),
    ("def last(y):\n  return y\n", "def last(y):\n  return y + 1", True),  # at the end, no newline
    ("def last(y):\n  return y\n", "", True),  # a definition deleted
    ("  def first(self, a,\n", "  def first(self, a, c,\n", True),  # a header over two lines
    ("    x = a + b\n", "    x = (a +\n", None),  # an unclosed bracket
    ("    x = a + b\n", '    x = """a\n', None),  # an unclosed string
    ("    x = a + b\n", "    x = a +\tb\n", False),  # a tab
    ("    x = a + b\n", "    x = a + b  # type: int\n", True),  # a type comment
    ("    x = a + b\n", "    x = a + b  # type: ignore[e]\n", True),  # ... and a `# type: ignore`
    ("  def one_line(self): return 1\n", "  def one_line(self): return 1\n  # type: int\n", False),  # misplaced
    ("    x = a + b\n", "    x = a + b\r\n", False),
])
def test_an_edit(old: str, new: str, in_part: bool | None) -> None:
    """`in_part`: parsed in part (True), whole (False), or a syntax error (None)."""
    assert old in _MODULE
    edited = _MODULE.replace(old, new, 1)
    memo = ParseMemo()
    memo.parse(_MODULE, None)
    if in_part is None:
        with pytest.raises(SyntaxError):
            parse(edited)
        with pytest.raises(SyntaxError):
            memo.parse(edited, None)
        assert _dump(memo.parse(_MODULE, None)) == _dump(parse(_MODULE))  # the last good tree kept
        return
    assert _dump(memo.parse(edited, None)) == _dump(parse(edited))
    assert (memo.reparsed is not None) == in_part


def test_the_run_parsed_is_the_edited_definition() -> None:
    text = _MODULE
    memo = ParseMemo()
    memo.parse(text, None)
    text = text.replace("x = a + b", "x = a + b + 1")
    memo.parse(text, None)
    assert memo.reparsed == 1  # the statement
    memo.parse(text.replace("return nested", "return nested()"), None)
    assert memo.reparsed == 3  # the statement, and the blank lines after it up to `last`


def test_an_edit_above_every_statement() -> None:
    text = "# a licence\n\nimport jax\n"
    memo = ParseMemo()
    memo.parse(text, None)
    edited = text.replace("licence", "license")
    assert _dump(memo.parse(edited, None)) == _dump(parse(edited))
    assert memo.reparsed is None


def test_type_ignore_comments_move_with_their_lines() -> None:
    text = _MODULE.replace("return y", "return y  # type: ignore[a]").replace(
        "x = a + b", "x = a + b  # type: ignore[b]")
    memo = ParseMemo()
    memo.parse(text, None)
    for edited in (text.replace("    x = a + b", "    w = 0\n    x = a + b"),  # one line more above both
                   text.replace("  # type: ignore[b]", ""),  # one fewer
                   text.replace("return 3", "return 3  # type: ignore[c]")):  # one more
        assert _dump(memo.parse(edited, None)) == _dump(parse(edited))
        assert memo.reparsed is not None
        memo.parse(text, None)


def test_a_syntax_error_keeps_the_last_tree_that_parsed() -> None:
    memo = ParseMemo()
    memo.parse(_MODULE, None)
    with pytest.raises(SyntaxError):
        memo.parse(_MODULE.replace("x = a + b", "x = a +"), None)
    mended = _MODULE.replace("x = a + b", "x = a + c")
    assert _dump(memo.parse(mended, None)) == _dump(parse(mended))
    assert memo.reparsed is not None


def test_the_walk_goes_into_the_edited_statements_only() -> None:
    parses, walks = ParseMemo(), WalkMemo()
    walks.bindings(parses.parse(_MODULE, None), "", None)
    edited = _MODULE.replace("x = a + b", "x = a + b + f(c)")
    bindings = walks.bindings(parses.parse(edited, None), "", None)
    assert walks.walked == 1  # `first`: the class's other statements and the module's are kept
    assert _found(bindings) == _found(Bindings.of(parse(edited), ""))
    assert _found(walks.bindings(parses.parse(edited, None), "", None)) == _found(bindings)
    assert walks.walked == 0
    assert _found(walks.bindings(parse(edited), "", None)) == _found(bindings)  # a new tree: walked again
    assert walks.walked > 1


def test_an_analysis_leaves_the_kept_tree_as_parsed(tmp_path: object) -> None:
    """astroid takes docstrings out of the stdlib tree it builds from (`brain.Rebuilder._get_doc`
    keeps them): the next edit is parsed against the tree as it was parsed."""
    text = (TESTS / "fixtures" / "initialised_self_clean.py").read_text()
    session = Session(keep_trees=True)
    path = str(TESTS / "fixtures" / "initialised_self_clean.py")
    lint(text, path, Settings(), session=session)
    assert session.parses is not None
    kept = session.parses.parse(text, path)
    assert _dump(kept) == _dump(parse(text))
    assert ast.get_docstring(kept) is not None


def test_a_fault_in_the_partial_parse_costs_a_whole_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    from pallas_lsp.analysis import reparse

    memo = ParseMemo()
    memo.parse(_MODULE, None)

    def broken(*args: object) -> None:
        raise IndexError("a fault of ours")

    monkeypatch.setattr(reparse, "_statements_of", broken)
    edited = _MODULE.replace("x = a + b", "x = a + c")
    assert _dump(memo.parse(edited, None)) == _dump(parse(edited))
    assert memo.reparsed is None
