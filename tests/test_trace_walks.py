"""The trace's own walks of astroid trees answer as astroid's generators (and the walk they
replaced) do: free names, the names a function binds, and whether it is a generator."""

from collections import Counter

import astroid
import pytest
from astroid import nodes

from conftest import ROOT
from pallas_lsp.analysis.trace import interp, objects

FILES = sorted((ROOT / "tests" / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").glob("*.py"))

SNIPPETS = [
    "def g():\n  yield 1\n",
    "def g():\n  x = yield\n",
    "def g():\n  x += yield\n",
    "def g():\n  yield from h()\n",
    "def g():\n  if (yield):\n    pass\n",
    "def g():\n  while (yield):\n    pass\n",
    "def g():\n  f((yield 2))\n",  # astroid does not count this one: neither may we
    "def g():\n  def h():\n    yield 1\n  return h\n",
    "def g():\n  return lambda: (yield)\n",
    "def g():\n  class A:\n    def m(self):\n      yield 1\n  return A\n",
    "async def g():\n  yield 1\n",
    "def g(a, b=1, *c, d, **e):\n  global G\n  G = [x for x in a if x]\n  a.b = 1\n  del a.c\n"
    "  return lambda y: y + b\n",
]


def _trees():
    for path in FILES:
        yield path.name, astroid.parse(path.read_text(encoding="utf-8"))
    for index, text in enumerate(SNIPPETS):
        yield f"snippet {index}", astroid.parse(text)


def _reference_free_names(scope, known):
    """The walk `interp._free_names` replaced: isinstance tests and `get_children` on every node."""
    if scope in known:
        return known[scope]
    names = {}
    own = scope.locals
    stack = list(scope.get_children())
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.Name):
            if node.name not in own:
                names[node.name] = None
        elif isinstance(node, interp._SCOPES):
            names.update((name, None) for name in _reference_free_names(node, known) if name not in own)
        else:
            stack.extend(node.get_children())
    known[scope] = tuple(names)
    return known[scope]


@pytest.mark.parametrize(("name", "tree"), list(_trees()), ids=lambda value: value if isinstance(value, str) else "")
def test_the_walks_answer_as_astroid_does(name: str, tree: nodes.Module):
    known, yields, reference = {}, {}, {}
    for scope in tree.nodes_of_class((nodes.FunctionDef, nodes.Lambda, nodes.ClassDef)):
        assert interp._free_names(scope, known, yields) == _reference_free_names(scope, reference)
        if isinstance(scope, nodes.FunctionDef):
            # without a yield anywhere inside, astroid does not call it a generator
            assert yields[scope] or not scope.is_generator()
            bound, written = Counter(), set()
            for node in scope.nodes_of_class((nodes.AssignName, nodes.AssignAttr, nodes.DelAttr)):
                if isinstance(node, nodes.AssignName):
                    bound[node.name] += 1
                else:
                    written.add(node.attrname)
            assert objects._writes(scope, {}) == (bound, written)


def test_the_snippets_hold_generators_and_others():
    snippets = [tree for _, tree in list(_trees())[len(FILES):]]
    generators = [next(tree.nodes_of_class(nodes.FunctionDef)).is_generator() for tree in snippets]
    assert any(generators) and not all(generators)
