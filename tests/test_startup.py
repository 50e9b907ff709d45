"""What a fresh process does before it analyses (`README.md`, Speed, pre-commit) changes no
result: astroid's builtins are the tree astroid builds itself, the API's signature stubs are
the trees astroid's transforms would leave, a `pallas-lint check` of one file loads only
what it uses, and the modules astroid reads, built without its transforms, give the findings
they give with them."""

from __future__ import annotations

import json
import subprocess
import sys

import astroid
from astroid.manager import AstroidManager
from conftest import ROOT

from pallas_lsp.analysis import api
from pallas_lsp.analysis.trace import stubs

# A digest of astroid's `builtins` module: every node reached through locals, children and
# instance attributes, with its type, name, value and line (raw-built nodes have no other text).
_DIGEST = r"""
import hashlib, sys
import astroid
from astroid.manager import AstroidManager
if sys.argv[1] == "ours":
    from pallas_lsp.analysis import brain
    brain.install()
manager = AstroidManager()
manager.bootstrap()
out, seen = [], set()
def walk(node, depth):
    if id(node) in seen:
        out.append(f"@{type(node).__name__} {getattr(node, 'name', '')}")
        return
    seen.add(id(node))
    value = node.value if isinstance(node, astroid.nodes.Const) else ""
    out.append(f"{depth} {type(node).__name__} {getattr(node, 'name', '')} {value!r} {node.lineno}")
    for name in sorted(getattr(node, "locals", {})):
        out.append(f"L {name}")
        for child in node.locals[name]:
            walk(child, depth + 1)
    for name in sorted(getattr(node, "instance_attrs", {})):
        out.append(f"I {name} " + ",".join(f"{type(x).__name__} {getattr(x, 'name', '')}"
                                            for x in node.instance_attrs[name]))
    for child in node.get_children():
        walk(child, depth + 1)
walk(manager.astroid_cache["builtins"], 0)
print(len(out), hashlib.sha256("\n".join(out).encode()).hexdigest())
"""


def _digest(which: str) -> str:
    return subprocess.run([sys.executable, "-c", _DIGEST, which], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout


def test_our_bootstrap_builds_astroids_builtins():
    ours = _digest("ours")
    assert int(ours.split()[0]) > 10_000
    assert ours == _digest("astroid")


def _shape(node) -> list:
    found = [(type(node).__name__, getattr(node, "name", None), node.lineno, node.col_offset,
              sorted(key for key in vars(node) if not key.startswith("__")),
              getattr(node, "_explicit_inference", None) is not None)]
    for child in node.get_children():
        found += _shape(child)
    return found


def test_no_transform_applies_to_the_signature_stubs():
    for name, text in api.STUBS.items():
        module = stubs._signature_module(name).name
        # both built afresh (the stubs' own trees gain cached properties as analyses use them)
        ours = astroid.parse(text, module_name=f"{module} (ours)", apply_transforms=False)
        transformed = astroid.parse(text, module_name=f"{module} (transformed)")
        for built in (ours, transformed):
            AstroidManager().astroid_cache.pop(built.name, None)
        assert _shape(ours)[1:] == _shape(transformed)[1:], name  # the modules' names differ
        assert ours.as_string() == transformed.as_string()


def test_a_check_of_one_file_loads_only_what_it_uses(tmp_path):
    kernel = (ROOT / "examples" / "collective_matmul.py").read_text(encoding="utf-8")
    (tmp_path / "kernel.py").write_text(kernel, encoding="utf-8")
    def loaded(run: str) -> set[str]:
        probe = ("import atexit, sys\n"
                 "atexit.register(lambda: print('MODULES', *sorted(sys.modules)))\n" + run)
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True)
        return set(done.stdout.rpartition("MODULES ")[2].split())

    ours = loaded("from pallas_lsp.cli import main\n"
                  "sys.argv[1:] = ['check', '--exit-zero', '-q', '--no-cache', 'kernel.py']\n"
                  "sys.exit(main())\n")
    assert {"astroid", "pallas_lsp.analysis.engine"} <= ours  # it analysed the file
    # what astroid itself loads is not ours to choose (4.4's numpy brain reads package metadata,
    # which loads tempfile); what we add to it must not hold these (logging imports traceback)
    assert not (ours - loaded("import astroid\n")) & {"tempfile", "tomllib", "difflib"}


def test_a_walk_loads_pathspec_only_when_an_ignore_file_is_there(tmp_path):
    """An installed package, an unpacked archive: no ignore file, and no gitignore matcher
    loaded for the walk (10-20 ms of a run). One `.ignore` file, and it is read as git reads
    a `.gitignore`."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "tool.py").write_text("import os\n", encoding="utf-8")
    (tree / "pkg" / "gen.py").write_text("import os\n", encoding="utf-8")
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('PATHSPEC', 'pathspec' in sys.modules))\n"
             "from pallas_lsp.cli import main\n"
             "sys.argv[1:] = ['check', '--no-cache', '--show-files', 'tree']\n"
             "sys.exit(main())\n")

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                              check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = run()
    assert "gen.py" in listed and listed.strip().endswith("PATHSPEC False"), listed
    (tree / ".ignore").write_text("gen.py\n", encoding="utf-8")
    listed = run()
    assert "gen.py" not in listed and "tool.py" in listed and listed.strip().endswith("PATHSPEC True"), listed


# A file with a trigger word whose import statements its text does not tell (a continued line)
# and whose tree imports nothing of jax: the stdlib tree settles it, the engine is not loaded.
_SETTLED_BY_TREE = "from os.path import join, \\\n    exists\n\n\ndef f():  # a TMEM, in a comment\n    return join\n"


def test_a_file_the_stdlib_tree_settles_loads_no_astroid(tmp_path):
    (tmp_path / "tool.py").write_text(_SETTLED_BY_TREE, encoding="utf-8")
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('ASTROID', 'astroid' in sys.modules))\n"
             "from {module} import main\n"
             "sys.argv[1:] = {args}\n"
             "sys.exit(main({call}))\n")
    runs = {"pallas-lint": ("pallas_lsp.cli", ["check", "--no-cache", "tool.py"], ""),
            "flake8": ("flake8.main.cli", [], "['--select=PLS', '--pallas-no-cache', 'tool.py']")}
    for name, (module, args, call) in runs.items():
        done = subprocess.run([sys.executable, "-c", probe.format(module=module, args=args, call=call)],
                              capture_output=True, text=True, cwd=tmp_path, check=False)
        assert done.returncode == 0 and "PLS" not in done.stdout, (name, done.stdout, done.stderr)
        assert done.stdout.strip().endswith("ASTROID False"), (name, done.stdout)


# Analyses of every fixture and of a project whose helper module holds a dataclass and an enum,
# printed as findings, with astroid's transforms skipped (as we build) or applied to the modules
# astroid reads (as astroid would), and the stdlib modules astroid built meanwhile.
_FINDINGS = r"""
import glob, json, os, sys
import astroid
from astroid.manager import AstroidManager
from pallas_lsp.analysis import analyze_source, brain
from pallas_lsp.analysis.trace import resolver
if sys.argv[1] == "transformed":
    brain._without_transforms = lambda builder: None
    parse = astroid.parse
    resolver.astroid.parse = lambda *args, apply_transforms=True, **kwargs: parse(*args, **kwargs)
found = {}
for path in sorted(glob.glob(os.path.join(sys.argv[2], "**", "*.py"), recursive=True)):
    with open(path, encoding="utf-8") as file:
        result = analyze_source(file.read(), path)
    found[path] = [[f.code, f.span.line, f.span.col, f.message] for f in result.findings] + [result.error]
stdlib = sorted(name for name in AstroidManager().astroid_cache if name in ("enum", "dataclasses", "typing"))
print(json.dumps([found, stdlib]))
"""

_HELPER = """\
import dataclasses
import enum


class Mode(enum.Enum):
    SINGLE = 1
    PAIR = 2


@dataclasses.dataclass(frozen=True)
class Config:
    mode: Mode = Mode.SINGLE
    collective: bool = False
"""

_KERNEL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from helpers import Config

CONFIG = Config()


def matmul(a, b):
    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x")

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        cluster=(2,),
        cluster_names=("x",),
        scratch_types=[
            plgpu.SMEM((128, 64), jnp.float16),
            plgpu.SMEM((64, 128), jnp.float16),
            plgpu.TMEM((128, 256), jnp.float32, collective=CONFIG.collective),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )(a, b)
"""


def test_modules_astroid_reads_are_built_without_its_transforms(tmp_path):
    """The trace runs a module's code itself, classes and dataclasses by its own rules: the
    findings are the same whether astroid's transforms ran on the modules it read or not, and
    without them astroid builds no stdlib module for their predicates."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "helpers.py").write_text(_HELPER, encoding="utf-8")
    (project / "kernel.py").write_text(_KERNEL, encoding="utf-8")

    def run(mode: str, directory) -> list:
        done = subprocess.run([sys.executable, "-c", _FINDINGS, mode, str(directory)], capture_output=True,
                              text=True, cwd=ROOT, check=True)
        return json.loads(done.stdout)

    ours, built = run("ours", project)
    transformed, built_transformed = run("transformed", project)
    assert ours == transformed
    # JAX 0.10.2 and 0.12 raise "Accumulator Ref must be collective if collective_axis is set."
    assert [code for code, *_ in ours[str(project / "kernel.py")][:-1]] == ["PLS001"]
    assert built == [] and "dataclasses" in built_transformed
    assert run("ours", ROOT / "tests" / "fixtures")[0] == run("transformed", ROOT / "tests" / "fixtures")[0]


def _astroid_tree(path) -> list:
    """A file's tree as astroid's own rebuilder makes it and as ours does (`brain.Rebuilder`:
    the definitions' keyword positions left out, the commonest nodes made directly)."""
    import ast as stdlib_ast

    from astroid.rebuilder import TreeRebuilder

    from pallas_lsp.analysis import brain

    text = path.read_text(encoding="utf-8")
    shapes = []
    for rebuilder in (TreeRebuilder, brain.Rebuilder):
        module = rebuilder(AstroidManager(), text).visit_module(stdlib_ast.parse(text), "m", str(path), False)
        for node in module.nodes_of_class((astroid.nodes.FunctionDef, astroid.nodes.ClassDef)):
            node.position = None
        shapes.append(brain._shape(module))
    return shapes


def test_our_rebuilder_makes_astroids_trees():
    from pallas_lsp.analysis import brain

    files = sorted((ROOT / "tests" / "fixtures").rglob("*.py")) + sorted((ROOT / "pallas_lsp").rglob("*.py"))
    assert brain._fast_nodes_agree()
    for path in files:
        theirs, ours = _astroid_tree(path)
        assert theirs == ours, path


_WALRUSES_IN_CHILDREN = '''
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def build(x):
  acc = plgpu.TMEM((96, 128), jnp.float32, collective=(two := x is None))  # PLS019
  return acc, two, (shape := x).shape, shape
'''


def test_a_walrus_in_a_keyword_or_an_attributes_object_is_built_and_analysed(tmp_path):
    """A walrus looks up its scope through its parents while it is built: the keyword or
    attribute holding it must already be placed (before: the file was not analysed, an
    internal error)."""
    from pallas_lsp.analysis.engine import analyze_file

    path = tmp_path / "walruses.py"
    path.write_text(_WALRUSES_IN_CHILDREN)
    theirs, ours = _astroid_tree(path)
    assert theirs == ours
    result = analyze_file(str(path))
    assert result.error is None and [(f.code, f.span.line) for f in result.findings] == [("PLS019", 7)]
