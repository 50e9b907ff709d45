"""The trace's own walks of astroid trees answer as astroid's generators (and the walk they
replaced) do: free names, the names a function binds, and whether it is a generator."""

import ast
from collections import Counter
from types import SimpleNamespace

import astroid
import pytest
from astroid import nodes

from conftest import ROOT
from pallas_lsp.analysis import analyze_file
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


LIBRARY = """
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def accumulator(config):
  if len(config.shape) > 2:  # undecided: an opaque test, whose access path is walked
    return plgpu.TMEM((128, 128), jnp.float32, collective=True)
  return plgpu.TMEM((128, 128), jnp.float32)
"""

KERNEL = """
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

import lib

OUT = jax.ShapeDtypeStruct((128, 128), jnp.float16)


def body(a_gmem, out_gmem, acc_tmem):
  del a_gmem, out_gmem, acc_tmem


def build(config):
  if len(config.shape) > 2:
    pass
  return plgpu.kernel(body, out_type=OUT, scratch_types=[lib.accumulator(config)])
"""


def test_a_tree_that_outlives_the_analysis_is_walked_once(tmp_path, monkeypatch):
    """The names a function reads and a test's access path depend on its tree alone: those of
    an imported module's tree (which the next analysis takes again) are kept with its nodes.
    The analysed file's tree is new in every analysis: the names its functions read are kept
    by their text (the same text reads the same names), its access paths are walked again
    (the editor's `TreeMemo` moves its definitions into the next version's tree, where the
    names around them may differ)."""
    (tmp_path / "lib.py").write_text(LIBRARY)
    (tmp_path / "kernel.py").write_text(KERNEL)
    walked = Counter()

    def counting(walk):
        def counted(node, *args, **kwargs):
            walked[walk.__name__, node.root().name] += 1
            return walk(node, *args, **kwargs)
        return counted

    monkeypatch.setattr(interp, "_free_names", counting(interp._free_names))
    monkeypatch.setattr(objects, "access_path", counting(objects.access_path))
    reports, walks = [], []
    for _ in range(2):
        walked.clear()
        reports.append(analyze_file(str(tmp_path / "kernel.py")))
        walks.append(Counter(walked))
    assert reports[0].findings == reports[1].findings and reports[0].error is None
    assert walks[0]["_free_names", "kernel"] and not walks[1]["_free_names", "kernel"]
    assert walks[1]["access_path", "kernel"]
    assert not walks[1]["_free_names", "lib"] and not walks[1]["access_path", "lib"]


TEXTS = [  # what `Interpreter._text_of` must cut out of each: a function with its decorators
    "@deco(1)\n@other\ndef f(a, b=2):\n  return a + b  # é\n\n\ng = lambda x: (x,\n  'ü')\n",
    "class A:\n  @staticmethod\n  def m():\n    def inner(): return 'ß' + m\n    return inner\n",
    "x = 'é'; h = lambda: x\nasync def k():\n  \x0c\n  await k()\n",  # (a form feed is no line break)
]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("text", TEXTS)
def test_a_function_s_text_is_its_source(text, ending):
    """The names an analysed file's function reads are kept by the text `_text_of` cuts out:
    exactly the function's source, whatever the line endings and characters before it."""
    text = text.replace("\n", ending)
    module = astroid.parse(text)
    tracer = interp.Interpreter(module, None, float("inf"), lambda: False)
    functions = [node for node in module.nodes_of_class((nodes.FunctionDef, nodes.Lambda))]
    assert len(functions) >= 2
    for function in functions:
        first = function.decorators.nodes[0] if isinstance(function, nodes.FunctionDef) and function.decorators \
            else function
        place = SimpleNamespace(lineno=first.lineno, col_offset=first.col_offset, end_lineno=function.end_lineno,
                                end_col_offset=function.end_col_offset)
        assert tracer._text_of(function).decode("utf-8") == ast.get_source_segment(text, place)
