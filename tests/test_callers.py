"""Who else in the project uses a name (`trace.callers`): the search for one name finds what
an index of every identifier of the file finds, and a file counts only if it can import the
analysed module (it names the module or a package on its dotted path)."""

import os
import random
import textwrap

import pytest

from conftest import ROOT
from oracle.markers import parse_markers
from pallas_lsp.analysis import analyze_file
from pallas_lsp.analysis.trace import callers


def _identifiers(data: bytes) -> set[bytes]:
    return set(callers._WORD.findall(data))


def _found(data: bytes, name: bytes) -> bool:
    """Does the search of a project of one file, `data`, find `name` in it?"""
    return next(callers._Corpus(["a.py"], [None], data, [0]).holders(name), None) is not None


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
    (tmp_path / "a.py").write_text("import b\ndef build_kernel(x):\n    return x\n", encoding="utf-8")
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
        (tmp_path / name).write_text("import a, b, c\nshared_helper = 1\n", encoding="utf-8")
    for name in ("a.py", "b.py", "c.py"):
        assert callers.Callers(str(tmp_path / name), str(tmp_path)).used_elsewhere("shared_helper")


def test_a_changed_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(callers, "RECHECK_AFTER", 0.0)
    (tmp_path / "a.py").write_text("def late_helper():\n    pass\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("x = 1\n", encoding="utf-8")
    assert not callers.Callers(str(tmp_path / "a.py"), str(tmp_path)).used_elsewhere("late_helper")
    (tmp_path / "b.py").write_text("from a import late_helper\n", encoding="utf-8")
    assert callers.Callers(str(tmp_path / "a.py"), str(tmp_path)).used_elsewhere("late_helper")


# -- which files can call the analysed module's function -------------------------------------

def _write(directory, files):
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


# (the project's other files, whether they may call `f` of `pkg/kernel.py` or `kernel.py`)
_REACHING = {
    "an unrelated sibling defining f": ({"other.py": "def f(a, block_m=96):\n    return a\n"}, False),
    "an unrelated sibling calling its own f": ({"other.py": "from tools import f\nf(1)\n"}, False),
    "import kernel": ({"use.py": "import kernel\nkernel.f(1)\n"}, True),
    "from kernel import f": ({"use.py": "from kernel import f\nf(1)\n"}, True),
    "from . import kernel": ({"pkg/use.py": "from . import kernel\nkernel.f(1)\n"}, True),
    "from .kernel import f": ({"pkg/use.py": "from .kernel import f\nf(1)\n"}, True),
    "from.kernel import f": ({"pkg/use.py": "from.kernel import f\nf(1)\n"}, True),
    "re-exported by its package": ({"pkg/__init__.py": "from .kernel import f\n",
                                    "use.py": "from pkg import f\nf(1)\n"}, True),
    "star re-exported by its package": ({"pkg/__init__.py": "from .kernel import *\n",
                                         "use.py": "from pkg import f\nf(1)\n"}, True),
    "import pkg.sub.kernel as m": ({"pkg/sub/__init__.py": "", "pkg/sub/kernel.py": None,
                                    "use.py": "import pkg.sub.kernel as m\nm.f(1)\n"}, True),
    "from . import f in its package": ({"pkg/__init__.py": "from .kernel import *\n",
                                        "pkg/use.py": "from . import f\nf(1)\n"}, True),
    "from .. import f below its package": ({"pkg/__init__.py": "from .kernel import *\n",
                                            "pkg/deep/__init__.py": "", "pkg/deep/use.py": "from .. import f\nf(1)\n"},
                                           True),
    "from . import f in another package": ({"other/__init__.py": "", "other/use.py": "from . import f\nf(1)\n"},
                                           False),
    "star re-exported by another package": ({"api/__init__.py": "from pkg.kernel import *\n",
                                             "use.py": "from api import f\nf(1)\n"}, True),
    "the package mentioned, not f": ({"use.py": "import pkg\n"}, False),
    "dynamic import": ({"use.py": "import importlib\nimportlib.import_module('pkg.kernel').f(1)\n"}, True),
}


def _reaching_project(directory, name, kernel_text):
    """Write `pkg/kernel.py` (or where the case puts it), an empty `pkg/__init__.py` unless
    given, and the case's files; return the kernel's path."""
    files, _ = _REACHING[name]
    kernel = next((path for path, text in files.items() if text is None), "pkg/kernel.py")
    if name in ("import kernel", "from kernel import f") or name.startswith("an unrelated"):
        kernel = "kernel.py"
    _write(directory, {"pkg/__init__.py": "", **{path: text for path, text in files.items() if text is not None},
                       kernel: kernel_text})
    return directory / kernel


@pytest.fixture(params=["reachers first", "name first"])
def search_order(request, monkeypatch):
    """Both ways `_Reach.used` can go: the files that reach the module found first, or (when
    most of the project does) the files that hold the name; the answers are the same."""
    monkeypatch.setattr(callers._Reach, "_reached_by_most", lambda self: request.param == "name first")
    return request.param


@pytest.mark.parametrize("name", _REACHING)
def test_a_file_counts_only_if_it_can_import_the_module(tmp_path, name, search_order):
    kernel = _reaching_project(tmp_path, name, "def f(a, block_m=96):\n    return a\n")
    assert callers.Callers(str(kernel), str(tmp_path)).used_elsewhere("f") is _REACHING[name][1]


def test_names_are_searched_first_once_most_files_reach_the_module(tmp_path):
    # every file names the package: after the first question, a module's own name is not searched
    _write(tmp_path, {"pkg/__init__.py": "", **{f"pkg/m{i}.py": "import pkg\n" for i in range(6)},
                      "pkg/kernel.py": "def f(a):\n    return a\n", "pkg/use.py": "from pkg.kernel import f\n"})
    asked = callers.Callers(str(tmp_path / "pkg" / "kernel.py"), str(tmp_path))
    assert asked.used_elsewhere("f")
    again = callers.Callers(str(tmp_path / "pkg" / "m0.py"), str(tmp_path))
    assert not again.used_elsewhere("g") and again._reach is not None and again._reach._name_first
    assert b"m0" not in callers._corpora[str(tmp_path)].found


def test_a_module_no_import_spells_counts_any_mention(tmp_path):
    _write(tmp_path, {"my-kernel.py": "def f(a):\n    return a\n", "other.py": "def f(a):\n    return a\n"})
    assert callers.Callers(str(tmp_path / "my-kernel.py"), str(tmp_path)).used_elsewhere("f")


def test_a_plain_module_re_exporting_is_not_followed(tmp_path):
    # `api.py` is a caller itself; a file importing `f` from it is not looked for
    _write(tmp_path, {"kernel.py": "def f(a):\n    return a\n", "api.py": "from kernel import f\n",
                      "use.py": "from api import f\nf(1)\n"})
    assert callers.Callers(str(tmp_path / "kernel.py"), str(tmp_path)).used_elsewhere("f")
    (tmp_path / "api.py").write_text("from kernel import *\n", encoding="utf-8")
    callers._corpora.clear()
    assert not callers.Callers(str(tmp_path / "kernel.py"), str(tmp_path)).used_elsewhere("f")


# the repro: an entry's default picks 96 TMEM rows (JAX raises at the marked line)
_KERNEL = """
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

OUT = jax.ShapeDtypeStruct((128, 128), jnp.float32)


def f(a, block_m=96):

  def body(a_gmem, out_gmem, acc_tmem):
    del a_gmem, out_gmem, acc_tmem

  return plgpu.kernel(body, out_type=OUT, scratch_types=[plgpu.TMEM((block_m, 128), jnp.float32)])(a)  # PLS019


def case_default():
  return f, (jax.ShapeDtypeStruct((128, 64), jnp.float16),)
"""


# ... with no case handing `f` back with its arguments (a call made here, whoever imports `f`:
# `Trace._calls_handed_back`), so that only the entry point's policy decides
_ENTRY_ONLY = _KERNEL[:_KERNEL.index("\n\ndef case_default")] + "\n"


@pytest.mark.parametrize("name", _REACHING)
def test_an_entrys_defaults_are_used_unless_a_file_can_import_it(tmp_path, name):
    kernel = _reaching_project(tmp_path, name, _ENTRY_ONLY)
    findings = analyze_file(str(kernel)).findings
    expected = [] if _REACHING[name][1] else [(m.code, m.line) for m in parse_markers(kernel)]
    assert [(f.code, f.span.line) for f in findings] == expected
    assert all("when block_m == 96" in f.message for f in findings)


@pytest.mark.parametrize("name", [name for name in _REACHING if name.startswith("an unrelated")])
def test_jax_raises_the_finding_an_unrelated_sibling_keeps(tmp_path, name):
    pytest.importorskip("jax")
    from oracle.runner import run_fixture

    kernel = _reaching_project(tmp_path, name, _KERNEL)
    result = run_fixture(kernel)
    assert result["error"] is None, result
    assert [((case["trace"] or {}).get("code"), (case["trace"] or {}).get("line")) for case in result["cases"]] == [
        (m.code, m.line) for m in parse_markers(kernel)]


def test_fields_of_a_dataclass_other_modules_make_are_what_they_give_it(tmp_path):
    """A library module's op class, made by the module beside it: its methods run as entry points
    on an instance whose fields that module's calls decide (not the class's defaults, which its
    `__post_init__` replaces), so a sentinel default is no finding."""
    (tmp_path / "ops.py").write_text(textwrap.dedent('''
        import dataclasses
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu


        @dataclasses.dataclass(frozen=True)
        class Op:
            rows: int = 0

            def __post_init__(self):
                if self.rows == 0:
                    object.__setattr__(self, "rows", 128)

            def scratch(self):
                return [plgpu.TMEM((self.rows, 256), jnp.float32)]
        '''), encoding="utf-8")
    (tmp_path / "use.py").write_text("from ops import Op\n\nOp(64).scratch()\n", encoding="utf-8")
    assert analyze_file(str(tmp_path / "ops.py")).findings == []


def test_a_case_handing_back_a_partial_of_another_module_s_function_runs_it(tmp_path):
    # `return functools.partial(ops.matmul, collective=False), (A, B)`: JAX calls it with the
    # operands; the finding is in ops.py, reached from the partial the case made
    (tmp_path / "lz").mkdir()
    (tmp_path / "lz" / "__init__.py").write_text("")
    (tmp_path / "lz" / "ops.py").write_text(textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu


        def body(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem):
          plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, collective_axis="x")


        def matmul(a, b, collective=True):
          return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 256), jnp.float32), cluster=(2,),
                              cluster_names=("x",), scratch_types=[
              plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 128), jnp.float16),
              plgpu.TMEM((128, 256), jnp.float32, collective=collective)])(a, b)
    """))
    case = tmp_path / "case.py"
    case.write_text(textwrap.dedent("""
        import functools

        import jax
        import jax.numpy as jnp

        from lz import ops

        A = jax.ShapeDtypeStruct((128, 64), jnp.float16)
        B = jax.ShapeDtypeStruct((64, 128), jnp.float16)


        def case_partial():
          return functools.partial(ops.matmul, collective=False), (A, B)
    """))
    [finding] = analyze_file(str(case)).findings
    assert (finding.code, finding.span.path.endswith("ops.py"), finding.span.line) == ("PLS001", True, 8)
    assert finding.anchor is not None and finding.anchor.line == 14


# -- a helper another module calls runs once, with that module's arguments -------------------

# `pkg/kernel.py` is analysed; importing it runs `pkg/__init__.py`, whose `op` module hands
# `fwd` to code we do not read (`atexit`, as tokamax's ops hand `_fwd` to their machinery).
# `fwd` calls the kernel's `f` with 96 rows, which JAX's TMEM constructor refuses (the PLS019
# fixtures confirm the message); `f` itself, used in another module, is no entry point of its
# own while that run reaches it.
_OP_PACKAGE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "from pkg import op\n",
    "pkg/common.py": "COLUMNS = 128\n",
    "pkg/op.py": """
        import atexit

        from pkg import kernel


        def fwd(x):
          if {reaches}:
            return kernel.f(x, 96)
          return x


        atexit.register(fwd)
    """,
    "pkg/kernel.py": """
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        from pkg import common


        def f(a, rows):

          def body(a_gmem, out_gmem, acc_tmem):
            del a_gmem, out_gmem, acc_tmem

          out = jax.ShapeDtypeStruct((128, common.COLUMNS), jnp.float32)
          return plgpu.kernel(body, out_type=out, scratch_types=[plgpu.TMEM((rows, common.COLUMNS), jnp.float32)])(a)
    """,
}


@pytest.mark.parametrize("reaches", [True, False])
def test_a_helper_another_module_calls_runs_once_with_its_callers_arguments(tmp_path, monkeypatch, reaches):
    from pallas_lsp.analysis.trace import interp

    _write(tmp_path, {path: text.replace("{reaches}", str(reaches)) for path, text in _OP_PACKAGE.items()})
    runs = []
    execute = interp.Interpreter._execute

    def counted(self, closure, func, *args, **kwargs):
        runs.append(getattr(func, "name", None))
        return execute(self, closure, func, *args, **kwargs)

    monkeypatch.setattr(interp.Interpreter, "_execute", counted)
    findings = analyze_file(str(tmp_path / "pkg" / "kernel.py")).findings
    # reached: once, from `fwd`, with 96 rows; not reached: once, as an entry point (its rows unknown)
    assert runs.count("f") == 1
    assert [(f.code, f.span.line) for f in findings] == ([("PLS019", 14)] if reaches else [])


def test_the_files_left_are_searched_one_by_one_as_the_whole_project_would_be(tmp_path):
    """Once most files name the module's top-level package, the other names on its dotted
    path are looked for in the files left, one by one (`_Reach._reaching`): the files found
    are those a search of the whole project for each name finds."""
    package = tmp_path / "pkg" / "sub"
    package.mkdir(parents=True)
    for directory in (tmp_path / "pkg", package):
        (directory / "__init__.py").write_text("", encoding="utf-8")
    (package / "kernels.py").write_text("def build(x):\n    return x\n", encoding="utf-8")
    for index in range(40):  # name the top-level package, and `build`
        (tmp_path / f"user{index}.py").write_text("import pkg\nbuild = 1\n", encoding="utf-8")
    (tmp_path / "direct.py").write_text("from kernels import build\n", encoding="utf-8")  # the module's own name
    (tmp_path / "sub_user.py").write_text("import sub\n", encoding="utf-8")  # a package on the path
    (tmp_path / "other.py").write_text("build = 2\n", encoding="utf-8")  # names none of them
    here = str(package / "kernels.py")
    reach = callers._Reach(callers._corpus(callers._scope(here, str(tmp_path))), here, str(tmp_path))
    assert reach.words is not None
    expected = {index for word in reach.words for index in reach.corpus.holders(word)}
    fresh = callers._Reach(callers._Corpus(reach.corpus.paths, reach.corpus.stamps, reach.corpus.blob,
                                           reach.corpus.starts), here, str(tmp_path))
    found = fresh._reaching(reach.words)
    assert found == expected
    assert set(fresh.corpus.found) == {b"pkg"}  # (the other names: in the files left, one by one)
    assert {os.path.basename(reach.corpus.paths[index]) for index in found} >= {"direct.py", "sub_user.py", "user0.py"}
    assert not any(reach.corpus.paths[index].endswith("other.py") for index in found)
