"""The prefilter drops only rules that could not fire: what it keeps and what it drops."""

import ast
import functools
import importlib.util
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from oracle.markers import parse_markers, parse_markers_source
from pallas_lsp.analysis import engine, prefilter
from pallas_lsp.analysis.prefilter import (
    Bindings, api_uses, applicable, cannot_reach_api_from_text, mentions_pallas, reaches_api,
)
from pallas_lsp.analysis.rules import RULES

FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").glob("*.py"))


def _kept(source: str, package: str = "", path: str | None = None) -> set[str]:
    """The rules the prefilter keeps; with `path`, as the engine asks it (the file's project
    imports walked: a helper module may hold what a rule judges)."""
    if not mentions_pallas(source, path=path):
        return set()
    bindings = lambda: Bindings.of(ast.parse(source), package)  # noqa: E731 - asked for once, if at all
    return {rule.code for rule in applicable(list(RULES), source, bindings, path)}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_expected_finding_passes_the_prefilter(path: Path):
    expected = {marker.code for marker in parse_markers(path)}
    assert expected <= _kept(path.read_text(encoding="utf-8"), path=str(path))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_invalid_example_passes_the_prefilter(rule):
    for example in rule.INVALID:
        assert {m.code for m in parse_markers_source(example.code)} <= _kept(example.code)


def _uses(source: str, package: str = "") -> set[str]:
    return api_uses(Bindings.of(ast.parse(textwrap.dedent(source)), package))


def test_calls_through_the_modelled_api_count():
    assert {"TMEM", "collective", "tcgen05_mma", "collective_axis"} <= _uses("""
        from jax.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), jnp.float32, collective=True)
        plgpu.tcgen05_mma(acc, a, b, collective_axis="x")
    """)


def test_calls_into_jax_modules_the_brain_serves_empty_do_not_count():
    # jax's own lowering code: `gpu_core.SMEM(...)` infers to nothing in the analysis too
    assert not {"SMEM", "TMEM", "run_scoped", "scratch_types"} & _uses("""
        import jax.experimental.mosaic.gpu as mgpu
        from jax._src.pallas.mosaic_gpu import core as gpu_core
        from jax._src.pallas import mpmd
        gpu_core.SMEM((128,), jnp.float16)
        mgpu.TMEM(shape, dtype)
        mpmd.mpmd_map(body, scratch_types=types)
        functools.partial(mpmd.mpmd_map, scratch_types=types)
    """)


def test_relative_imports_resolve_against_the_package():
    source = """
        from . import tcgen05
        tcgen05.async_copy_smem_to_tmem(src, dst)
    """
    assert "async_copy_smem_to_tmem" not in _uses(source, package="jax.experimental.mosaic.gpu")
    assert "async_copy_smem_to_tmem" in _uses(source, package="mykernels")
    assert "async_copy_smem_to_tmem" in _uses(source, package="")  # above any package: unknown


def test_what_cannot_be_pinned_down_counts():
    uses = _uses("""
        from jax._src.pallas.mosaic_gpu import core as gpu_core
        from mylib import plgpu
        from jax.experimental.pallas.mosaic_gpu import kernel as gpu_kernel
        plgpu.TMEM(shape, dtype)           # a project module may re-export the API
        make().SMEM(shape, dtype)          # a call's result
        def helper(gpu_core):              # a name bound twice
            gpu_core.GMEM(shape, dtype)
        local_builder(scratch_types=x)     # a local function may forward its keywords
    """)
    assert {"TMEM", "SMEM", "GMEM", "scratch_types", "kernel"} <= uses


def test_partial_counts_the_function_it_binds():
    uses = _uses("""
        import functools
        from functools import partial as p
        from jax.experimental.pallas import mosaic_gpu as plgpu
        functools.partial(plgpu.kernel, scratch_shapes=s)
        p(plgpu.run_scoped, collective_axes="x")
    """)
    assert {"kernel", "scratch_shapes", "run_scoped", "collective_axes"} <= uses


def test_an_api_name_in_getattr_counts():
    # `getattr(plgpu, "SMEM")(...)`: the tracer looks the name up; one not written is any name
    wanted = frozenset({"SMEM", "TMEM", "RefUnion"})
    source = """
        from jax.experimental.pallas import mosaic_gpu as plgpu
        getattr(plgpu, "SMEM")((128, 64), jnp.float16, packed=True)
    """
    assert api_uses(Bindings.of(ast.parse(textwrap.dedent(source)), ""), wanted) & wanted == {"SMEM"}
    source += "    getattr(plgpu, space)((128, 64), jnp.float16)\n"
    assert api_uses(Bindings.of(ast.parse(textwrap.dedent(source)), ""), wanted) & wanted == wanted


def test_api_values_count_since_aliases_are_followed():
    # `alloc = plgpu.TMEM; alloc(...)`: the tracer calls the alias, so the file is analysed
    assert {"TMEM", "SMEM"} <= _uses("""
        from jax.experimental.pallas import mosaic_gpu as plgpu
        alloc = plgpu.TMEM
        if space == plgpu.SMEM:
            pass
        isinstance(space, plgpu.SMEM)
    """)


def test_a_trigger_word_here_does_not_hide_what_an_imported_helper_makes(tmp_path):
    # The file mentions PLS013's trigger ("collective", in its docstring) but not its
    # identifier (`TMEM`): the collective TMEM is made by the helper module it imports.
    (tmp_path / "helpers_mod.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def make_acc(collective):
          return plgpu.TMEM((128, 128), jnp.float32, collective=collective)
    """), encoding="utf-8")
    source = textwrap.dedent('''
        """An odd cluster for collective TMEM."""
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu
        from helpers_mod import make_acc

        def build():
          def kernel(x_gmem, out_gmem, acc):
            del x_gmem, out_gmem, acc
          return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
                              cluster=(3,), cluster_names=("x",), scratch_types=[make_acc(True)])
    ''')
    path = tmp_path / "kernel.py"
    path.write_text(source, encoding="utf-8")
    kept = applicable(list(RULES), source, lambda: Bindings.of(ast.parse(source)), str(path))
    assert "PLS013" in {rule.code for rule in kept}


def test_an_allocation_helper_three_modules_down_keeps_its_rules(tmp_path):
    # A project's usual layout: the case imports the package, whose `api` wraps `kernel`,
    # which takes its TMEM from `common`: the only module that says `TMEM` (found by a probe).
    package = tmp_path / "pk"
    package.mkdir()
    (package / "__init__.py").write_text("from pk.api import matmul\n", encoding="utf-8")
    (package / "api.py").write_text("from . import kernel\n\ndef matmul(a, dtype):\n  return kernel.run(a, dtype)\n",
                                    encoding="utf-8")
    (package / "kernel.py").write_text(textwrap.dedent("""
        from jax.experimental.pallas import mosaic_gpu as plgpu
        from . import common

        def run(a, dtype):
          return plgpu.kernel(lambda *refs: None, out_type=a, scratch_types=[common.acc((128, 128), dtype)])(a)
    """), encoding="utf-8")
    (package / "common.py").write_text(textwrap.dedent("""
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def acc(shape, dtype):
          return plgpu.TMEM(shape, dtype)
    """), encoding="utf-8")
    source = "import jax.numpy as jnp\nimport pk\n\ndef run(a):\n  return pk.matmul(a, jnp.float16)\n"
    path = tmp_path / "case.py"
    path.write_text(source, encoding="utf-8")
    kept = applicable(list(RULES), source, lambda: Bindings.of(ast.parse(source)), str(path))
    assert {"PLS005", "PLS019"} <= {rule.code for rule in kept}


def test_the_import_scan_finds_what_the_regular_expression_finds():
    """`_imports` tries only lines with `import` in them; it must match as `finditer` does."""
    from pallas_lsp.analysis import prefilter

    texts = [
        b"", b"import", b"import a", b"  import a.b, c\nfrom . import x\n", b"x = 1  # import y\nimport z",
        b"from .m import (a,\n  b)\nfrom\timport x\n\tfrom ..p.q import r as s\r\nimport t; import u\n",
        b"'''\nimport inside_a_string\n'''\nimportant = 1\nfrom x import\n",
        *(path.read_bytes() for path in sorted((ROOT / "pallas_lsp").rglob("*.py"))),
    ]
    for data in texts:
        assert [m.span() for m in prefilter._imports(data)] == [m.span() for m in prefilter._IMPORT.finditer(data)]


def test_the_walk_notes_what_a_walk_of_every_field_notes():
    """`Bindings.walk` skips the fields that hold no node (`_child_fields`): what it notes must
    be what noting every node `ast.walk` reaches notes (parents first, as the walk goes), over
    the fixtures, the package's own sources and every kind of statement and expression."""
    sample = textwrap.dedent("""
        import a.b as c, d
        from .e import (f as g, h)
        from i import *
        global j
        @k(l=m, *n, **o)
        async def p(q: r = s, /, *t: u, v=w, **x) -> y:
            nonlocal z
            async with aa() as (bb, cc):
                await dd[ee:ff:gg]
            async for hh in ii:
                yield jj if kk else ll
            del mm.nn
            return [oo for pp in qq if rr], {ss: tt for uu, *vv in ww}, {xx async for yy in zz}
        class A(B, metaclass=C):
            D: E = F
            G += H or I and not J
        try:
            K = lambda L, *M, N=O: f"{P!r:>{Q}}" < R <= S
        except (T, U) as V:
            raise W from X
        else:
            assert Y, Z
        finally:
            while AA: break
        match BB:
            case {"k": CC, **DD} if EE: pass
            case FF(GG, HH=[II, *JJ]) | KK.LL as MM: pass
            case None | 1 | -2j: pass
        print(NN := OO, ...)
    """)
    texts = [sample] + [path.read_text() for path in sorted(
        [*(ROOT / "pallas_lsp").rglob("*.py"), *(ROOT / "tests" / "fixtures").rglob("*.py")])]

    def state(found):
        return (sorted(map(id, found.calls)), sorted(map(id, found.attributes)), sorted(map(id, found.decorators)),
                found.imports, sorted(found.aliased_imports, key=repr), found.rebound, found.loaded,
                found.star_import, sorted(found.star_paths, key=repr), sorted(found.modules, key=repr), found.bare)

    for text in texts:
        tree = ast.parse(text)
        every = prefilter.Bindings()
        for node in ast.walk(tree):
            if type(node) is ast.Name:
                every.walk([node], "pkg")  # (a name: the walk notes it itself)
            elif type(node) in prefilter._NOTED:
                every._note(node, "pkg")
        assert state(prefilter.Bindings.of(tree, "pkg")) == state(every)


def test_an_identifier_only_an_imported_helper_uses_keeps_the_rule(tmp_path):
    # The file mentions PLS013's trigger ("collective", in a keyword dict it spreads) and the
    # helper module makes the TMEM without ever writing "collective" (its **opts).
    (tmp_path / "helpers_mod.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def make_acc(**opts):
          return plgpu.TMEM((128, 128), jnp.float32, **opts)
    """), encoding="utf-8")
    source = textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu
        from helpers_mod import make_acc

        OPTS = dict(collective=True)

        def build():
          def kernel(x_gmem, out_gmem, acc):
            del x_gmem, out_gmem, acc
          return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
                              cluster=(3,), cluster_names=("x",), scratch_types=[make_acc(**OPTS)])
    ''')
    path = tmp_path / "kernel.py"
    path.write_text(source, encoding="utf-8")
    kept = applicable(list(RULES), source, lambda: Bindings.of(ast.parse(source)), str(path))
    assert "PLS013" in {rule.code for rule in kept}


_LIBRARY_CALLER = """
    import jax
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu
    {imports}

    def kernel(a_gmem, b_gmem, out_gmem):
      def _scoped(**refs):
        {call}(a_gmem, b_gmem, out_gmem, **refs)
      pl.run_scoped(_scoped, barrier=plgpu.Barrier(num_arrivals=1))
"""


@pytest.mark.parametrize("imports, call", [
    ("from jax.experimental.pallas.ops.gpu import blackwell_ragged_dot_mgpu as brd", "brd.do_matmul"),
    ("from jax.experimental.pallas.ops import gpu", "gpu.blackwell_ragged_dot_mgpu.do_matmul"),
    ("from jax.experimental.pallas.ops import (\n    gpu as blocks,\n)", "blocks.blackwell_ragged_dot_mgpu.do_matmul"),
    ("", "pl.ops.gpu.blackwell_ragged_dot_mgpu.do_matmul"),
])
def test_a_file_calling_the_building_blocks_keeps_every_rule(imports, call, tmp_path):
    # JAX's `do_matmul` issues the tcgen05_mma that judges the file's barrier (PLS010): the
    # trace reads the library's source, so the file's own words do not bound what it reaches.
    source = textwrap.dedent(_LIBRARY_CALLER).format(imports=imports, call=call)
    assert "tcgen05" not in source
    assert prefilter.names_library(source.encode())
    assert _kept(source) == {rule.code for rule in RULES}
    path = tmp_path / "kernel.py"
    path.write_text(source, encoding="utf-8")
    assert _kept(source, path=str(path)) == {rule.code for rule in RULES}


def test_a_project_helper_calling_the_building_blocks_keeps_every_rule(tmp_path):
    (tmp_path / "gemm.py").write_text(textwrap.dedent("""
        from jax.experimental.pallas.ops.gpu import blackwell_ragged_dot_mgpu as brd

        def matmul(*args, **refs):
          brd.do_matmul(*args, **refs)
    """), encoding="utf-8")
    source = textwrap.dedent(_LIBRARY_CALLER).format(imports="from gemm import matmul", call="matmul")
    path = tmp_path / "kernel.py"
    path.write_text(source, encoding="utf-8")
    assert "PLS010" in _kept(source, path=str(path))


@pytest.mark.parametrize("text", [
    b"from jax._src.lax.control_flow.loops import gpu",  # `loops`, not `ops`
    b"from jax.experimental.pallas.ops.tpu import flash_attention",
    b"from mylib.ops import helpers\nuse_gpu = True",
    b"mygpuops.gpux = 1",
])
def test_other_ops_modules_do_not_name_the_building_blocks(text):
    assert not prefilter.names_library(text)


def test_the_walk_of_the_imports_is_kept_only_while_what_it_read_is_unchanged(tmp_path):
    """The same file and text walked again: the kept answer stands while each directory the
    walk listed and each file it read are unchanged; a module created, changed or removed,
    or a package made, is found as a fresh walk would find it."""
    import os

    from pallas_lsp.analysis import prefilter

    path = tmp_path / "kernel.py"
    data = b"from pkg import helpers\nimport util\n"
    path.write_bytes(data)
    key = (str(path), prefilter.IMPORT_DEPTH, (b"from pkg import helpers", b"import util"))  # its import statements
    settled = [1_000_000_000]

    def walked() -> tuple[bytes, set[str]]:
        # what changed so lately that its time may not move again is walked each time: the
        # test moves every time into the past, a second apart, to have the walk kept
        for entry in (tmp_path, *tmp_path.rglob("*")):
            settled[0] += 1
            os.utime(entry, ns=(settled[0] * 10**9, settled[0] * 10**9))
        probed: set[str] = set()
        found = prefilter.imported_data(data, str(path), probed=probed)
        assert key in prefilter._imported
        again: set[str] = set()
        assert prefilter.imported_data(data, str(path), probed=again) == found and again == probed
        kept = prefilter._imported[key]
        typed: set[str] = set()  # an edit elsewhere than the imports: the same walk answers
        assert prefilter.imported_data(data + b"x = 1\n", str(path), probed=typed) == found and typed == probed
        assert prefilter._imported[key] is kept
        fresh: set[str] = set()
        prefilter._imported.clear()
        assert prefilter.imported_data(data, str(path), probed=fresh) == found and fresh == probed
        return found, probed

    assert walked()[0] == b""
    (tmp_path / "util.py").write_bytes(b"TMEM = 1\n")
    assert walked()[0] == b"TMEM = 1\n"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_bytes(b"")
    assert walked()[0] == b"\nTMEM = 1\n"  # the package's empty __init__.py, then util
    (tmp_path / "pkg" / "helpers.py").write_bytes(b"collective = True\n")
    assert b"collective = True" in walked()[0]
    (tmp_path / "util.py").write_bytes(b"TMEM = 22\n")  # another size
    assert b"TMEM = 22" in walked()[0]
    (tmp_path / "pkg" / "helpers.py").unlink()
    found, probed = walked()
    assert b"collective" not in found and str(tmp_path / "pkg" / "helpers.py") in probed
    (tmp_path / "pkg" / "helpers.py").write_bytes(b"TMEM = 3\n")  # no walk since: just changed
    assert b"TMEM = 3" in prefilter.imported_data(data, str(path))
    assert key not in prefilter._imported


def test_a_directory_with_symbolic_links_is_walked_each_time(tmp_path):
    import os

    from pallas_lsp.analysis import prefilter

    (tmp_path / "a.py").write_bytes(b"TMEM = 1\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "util.py").symlink_to(tmp_path / "a.py")
    os.utime(tmp_path, ns=(10**18, 10**18))
    os.utime(tmp_path / "a.py", ns=(10**18, 10**18))
    path = tmp_path / "kernel.py"
    data = b"import util\n"
    assert prefilter.imported_data(data, str(path)) == b"TMEM = 1\n"
    assert not any(k[0] == str(path) for k in prefilter._imported)
    (tmp_path / "util.py").unlink()
    (tmp_path / "util.py").symlink_to(tmp_path / "b")
    os.utime(tmp_path, ns=(10**18, 10**18))  # the directory's time as it was
    assert prefilter.imported_data(data, str(path)) == b""


# -- can the trace meet the API at all (`prefilter.reaches_api`)? -------------------------------
#
# Each case below is checked twice: the prefilter's verdict, and for every file it calls free
# of the API, the analysis itself with the prefilter out of the way: its trace records no site,
# so dropping every rule there loses nothing.

_IMPLEMENTATION = """
    # JAX's own Pallas implementation: it defines the API and imports its pieces from jax._src
    import dataclasses
    import numpy as np
    import jax
    from jax._src import core as jax_core
    from jax._src.pallas.mosaic_gpu import core as gpu_core

    tcgen05_mma_p = jax_core.Primitive("tcgen05_mma")

    class MemorySpace:
        TMEM = "tmem"
        SMEM = "smem"

    def TMEM(shape, dtype, collective=False):
        return gpu_core.GPUMemoryRef(shape, dtype, MemorySpace.TMEM, collective=collective)

    def tcgen05_mma(acc, a, b, collective_axis=None):
        return tcgen05_mma_p.bind(acc, a, b, collective_axis=collective_axis)

    def kernel(body, scratch_types=(), **mesh):
        return _kernel(body, scratch_types=scratch_types, **mesh)

    def _kernel(body, **options):
        return jax.jit(body)

    def lower(ctx, grid_mapping):
        types = grid_mapping.scratch_types
        acc = TMEM((128, 128), jax.numpy.float32, collective=True)
        tcgen05_mma(acc, acc, acc, collective_axis="x")
        return kernel(lambda *refs: None, scratch_types=TMEM((128, 128), np.float32)), types
"""

_NO_API = {
    "jax's implementation": _IMPLEMENTATION,
    "jax modules the brain serves empty, however deep": """
        import jax
        import jax._src.pallas.mosaic_gpu.core
        from jax._src.pallas.mosaic_gpu.core import TMEM, kernel
        kernel(lambda acc: None, scratch_types=[TMEM((128, 128), jax.numpy.float32, collective=True)])
        jax._src.pallas.mosaic_gpu.core.TMEM((128, 128), jax.numpy.float32, collective=True)
    """,
    "a star import of a module served empty": """
        from jax._src.pallas.mosaic_gpu.core import *
        kernel(lambda acc: None, scratch_types=[TMEM((128, 128), float32, collective=True)])
    """,
    "a library outside the project, and the standard library": """
        import functools
        import numpy as np
        from mylib import plgpu
        functools.partial(plgpu.kernel, scratch_types=plgpu.TMEM((128, 128), np.float32))
    """,
}

_API = {
    "an alias of the module": """
        from jax.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), jnp.float32, collective=True)
    """,
    "the full path from `import jax`": """
        import jax
        jax.experimental.pallas.mosaic_gpu.TMEM((128, 128), jnp.float32, collective=True)
    """,
    "`import a.b.c` binds `a`": """
        import jax.experimental.pallas.mosaic_gpu
        jax.experimental.pallas.mosaic_gpu.TMEM((128, 128), jnp.float32, collective=True)
    """,
    "a package above the API, kept as a value": """
        import jax
        pallas = jax.experimental.pallas
        pallas.mosaic_gpu.TMEM((128, 128), jnp.float32, collective=True)
    """,
    "the module passed as a value (getattr)": """
        from jax.experimental.pallas import mosaic_gpu as plgpu
        getattr(plgpu, "TMEM")((128, 128), jnp.float32, collective=True)
    """,
    "an API function imported under another name": """
        from jax.experimental.pallas.mosaic_gpu import TMEM as alloc
        alloc((128, 128), jnp.float32, collective=True)
    """,
    "a star import of the API": """
        from jax.experimental.pallas.mosaic_gpu import *
        TMEM((128, 128), jnp.float32, collective=True)
    """,
    "a name bound by an import and rebound": """
        from jax.experimental.pallas import mosaic_gpu as plgpu
        def helper(plgpu):
            return plgpu
        helper(None)
        plgpu.TMEM((128, 128), jnp.float32, collective=True)
    """,
    "JAX's kernel building blocks, read when called": """
        from jax.experimental.pallas.ops.gpu import blackwell_matmul_mgpu as matmul
        matmul.matmul_kernel(a, b, config)
    """,
}


def _reaches(source: str, path: str | None = None, package: str = "") -> bool:
    return reaches_api(Bindings.of(ast.parse(textwrap.dedent(source)), package), path)


def _sites(source: str, path: Path, monkeypatch) -> list:
    """The sites the analysis of `source` as the file `path` records, every rule kept."""
    found: list = []

    def capture(module, job, root, deadline, names):
        from pallas_lsp.analysis.context import Context
        from pallas_lsp.analysis.source import Lines

        ctx = Context(module, Lines(job.text), job.path, names)
        ctx.project.project_root = root
        found.extend(ctx.trace.interp.sites)
        return []

    with monkeypatch.context() as patch:
        patch.setattr(engine, "applicable", lambda rules, *args, **options: rules)
        patch.setattr(engine, "_run_rules", capture)
        result = engine.analyze_source(source, str(path))
    assert result.error is None
    return found


@pytest.mark.parametrize("case", sorted(_NO_API))
def test_a_file_that_cannot_meet_the_api_records_no_site(case, tmp_path, monkeypatch):
    source = textwrap.dedent(_NO_API[case])
    path = tmp_path / "kernels.py"
    path.write_text(source, encoding="utf-8")
    assert not _reaches(source, str(path))
    assert _sites(source, path, monkeypatch) == []
    assert not applicable(list(RULES), source, lambda: Bindings.of(ast.parse(source)), str(path))


@pytest.mark.parametrize("case", sorted(_API))
def test_every_way_to_the_api_counts(case, tmp_path, monkeypatch):
    source = textwrap.dedent(_API[case])
    path = tmp_path / "kernels.py"
    path.write_text(source, encoding="utf-8")
    assert _reaches(source, str(path))
    if case not in _CONSERVATIVE:
        assert _sites(source, path, monkeypatch)


# Kept although today's trace records nothing there: the tracer does not follow star imports,
# and JAX's building blocks are read only where jax is installed.
_CONSERVATIVE = {"a star import of the API", "JAX's kernel building blocks, read when called"}


def test_project_imports_count_even_unused(tmp_path, monkeypatch):
    # a project module runs when imported: its top level may build a kernel
    (tmp_path / "helpers_mod.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu
        ACC = plgpu.TMEM((128, 128), jnp.float32, collective=True)
    """), encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "tmem.py").write_text("from .. import helpers_mod\n", encoding="utf-8")
    source = "import helpers_mod\n"
    path = tmp_path / "kernels.py"
    path.write_text(source, encoding="utf-8")
    assert _reaches(source, str(path))
    assert _sites(source, path, monkeypatch)
    (tmp_path / "pkg" / "tmem.py").write_text("import helpers_mod\n", encoding="utf-8")
    assert _reaches("from . import tmem\n", str(tmp_path / "pkg" / "k.py"), package="pkg")
    assert _reaches("from .tmem import make\n", str(tmp_path / "pkg" / "k.py"), package="pkg")
    assert _reaches("import pkg.tmem\n", str(path))
    # without a path there is no project: an absolute import is a library
    assert not _reaches("import helpers_mod\nhelpers_mod.make()\n")


def _project(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    prefilter.forget_project_imports()


_WITHOUT_JAX = {  # a project that never imports jax: its modules import each other, in cycles
    "app/__init__.py": "from .core import run\n",
    "app/core.py": """
        import os; from . import util  # (an import after a semicolon: read from the tree)
        from app.util import helper
        def run():
            from .plugins import kernel_registry  # imports in functions count
            return kernel_registry
    """,
    "app/util.py": "import app.core\nimport numpy\n\ndef helper(): return 1\n",
    "app/plugins/__init__.py": "from .registry import *\n",
    "app/plugins/registry.py": "kernel_registry = {}\nfrom app import core\n",
    "app/main.py": """
        from app import run
        from app.plugins import kernel_registry
        def kernel(x, out_shape):  # trigger words: `kernel`, `out_shape`
            return run(x, out_shape)
    """,
}


def test_a_project_that_never_imports_jax_cannot_meet_the_api(tmp_path):
    """Every object of the API comes from jax: a file whose project modules (and theirs, to
    any depth, in cycles) never mention it cannot meet it, nor can any rule fire there; the
    verdict names every path it read (the result cache and the server follow them)."""
    _project(tmp_path, _WITHOUT_JAX)
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    probed: set[str] = set()
    assert not reaches_api(Bindings.of(ast.parse(source), "app"), str(main), probed)
    assert {str(tmp_path / "app" / name) for name in ("core.py", "util.py", "plugins/registry.py")} <= probed
    assert prefilter.settled_from_text(source, str(main))
    result = engine.analyze_source(source, str(main))
    assert not result.findings and result.error is None
    assert str(tmp_path / "app" / "plugins" / "registry.py") in result.dependencies


@pytest.mark.parametrize("where, text", [
    ("app/plugins/registry.py", "kernel_registry = {}\nfrom app import core\nimport jax.experimental.pallas\n"),
    ("app/util.py", "import app.core\n\ndef helper():\n    from jax.experimental.pallas import mosaic_gpu\n"),
    ("app/plugins/registry.py", "kernel_registry = {}\nfrom app import core\nfrom . import jax_pallas_helpers\n"),
    ("app/plugins/__init__.py", "from .registry import *\nfrom .missing import x\n# pallas on jax\n"),
    ("app/util.py", "import app.core\nimport app.deep\n"),  # a module that is a package of its own
    # a module imported by a computed name may be any (the trace imports what it comes to)
    ("app/util.py", "import app.core\nimport importlib\n\ndef load(name):\n    return importlib.import_module(name)\n"),
    ("app/plugins/__init__.py", "import importlib\n\ndef __getattr__(name):\n"
                                "    return importlib.import_module(f'.{name}', __name__)\n"),
    ("app/util.py", "import app.core\nfrom importlib import import_module as load\n"),
    # ... and one imported by a literal name is followed
    ("app/util.py", "import app.core\nimport importlib\nops = importlib.import_module('app.gpu_ops')\n"),
    ("app/plugins/__init__.py", "from importlib import import_module\nops = import_module('..gpu_ops', __name__)\n"),
])
def test_a_project_module_that_may_meet_jax_keeps_the_file(tmp_path, where, text):
    _project(tmp_path, {**_WITHOUT_JAX, where: text, "app/deep/__init__.py": "from jax.experimental import pallas\n",
                        "app/gpu_ops.py": "import jax.experimental.pallas as pl\n"})
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    assert reaches_api(Bindings.of(ast.parse(source), "app"), str(main))
    assert not prefilter.settled_from_text(source, str(main))


def test_a_project_that_uses_jax_but_never_names_pallas_cannot_meet_the_api(tmp_path):
    """Every object of the API comes from a module of jax named `...pallas...`: a project
    whose modules use jax (flax's, scipy's) but never say `pallas` cannot meet it, unless the
    analysed text does (a helper may be handed the name: `getattr(jax.experimental, name)`),
    or a module imports what it names by a computed name."""
    _project(tmp_path, {**_WITHOUT_JAX, "app/util.py": """
        import app.core
        import jax
        from app.deep import helper

        def get(name):
            return getattr(jax.experimental, name)
    """, "app/deep/__init__.py": "import jax.numpy as jnp\ndef helper(): return jnp.zeros(1)\n"})
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    probed: set[str] = set()
    assert not reaches_api(Bindings.of(ast.parse(source), "app"), str(main), probed, source.encode())
    assert {str(tmp_path / "app" / name) for name in ("util.py", "deep/__init__.py", "plugins/registry.py")} <= probed
    assert prefilter.settled_from_text(source, str(main))
    handed = source + "\nfrom app.util import get\npl = get('pallas')\n"
    assert not prefilter.settled_from_text(handed, str(main))
    (tmp_path / "app" / "deep" / "__init__.py").write_text("from jax.experimental import pallas as pl\n")
    prefilter.forget_project_imports()
    assert not prefilter.settled_from_text(source, str(main))


_HANDS_JAX_AROUND = """
    import jax
    import jax.experimental
    from app import core

    def kernel(x):  # trigger words: `kernel`, `collective`
        core.register(jax)  # the module itself, handed on (as flax's `variablelib.py` does)
        return jax.numpy.sum(x, where=x.collective)
"""


def test_a_file_that_hands_jax_around_but_never_names_pallas_cannot_meet_the_api(tmp_path):
    """A name bound to `jax` or `jax.experimental` read as itself (passed, stored, returned)
    may lead anywhere in jax, but every module that holds the API is named `...pallas...`:
    where neither the text nor the project modules it imports say `pallas`, nothing can name
    one, and the file is settled from its text (flax's `nnx/variablelib.py` was analysed in
    full, 0.9 s). The verdict names the project files it read."""
    _project(tmp_path, {**_WITHOUT_JAX, "app/core.py": "import jax\n\ndef register(module):\n    return module\n",
                        "app/main.py": _HANDS_JAX_AROUND})
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    probed: set[str] = set()
    assert not reaches_api(Bindings.of(ast.parse(source), "app"), str(main), probed, source.encode())
    assert str(tmp_path / "app" / "core.py") in probed
    assert prefilter.settled_from_text(source, str(main))
    result = engine.analyze_source(source, str(main))
    assert not result.findings and result.error is None and str(tmp_path / "app" / "core.py") in result.dependencies
    assert reaches_api(Bindings.of(ast.parse(source), "app"), str(main), None, None)  # (the text not known)
    # the text names it: `getattr(module, "pallas")` may be how
    assert not prefilter.settled_from_text(source + "\nNAME = 'pallas'\n", str(main))
    assert reaches_api(Bindings.of(ast.parse(source + "NAME = 'pallas'\n"), "app"), str(main), None, b"pallas")
    # ... or a project module it imports does
    (tmp_path / "app" / "core.py").write_text(
        "import jax\n\ndef register(module):\n    return module.experimental.pallas\n", encoding="utf-8")
    prefilter.forget_project_imports()
    assert not prefilter.settled_from_text(source, str(main))
    assert reaches_api(Bindings.of(ast.parse(source), "app"), str(main), None, source.encode())


def test_a_name_bound_to_a_module_named_pallas_is_read_whatever_the_text_says():
    """`from . import mosaic_gpu` inside `jax.experimental.pallas` binds the API's module
    without the text saying `pallas`: such a name is judged as before."""
    assert prefilter._paths_may_name_pallas({"jax.experimental.pallas.mosaic_gpu"})
    assert prefilter._paths_may_name_pallas({None})
    assert not prefilter._paths_may_name_pallas({"jax", "jax.experimental"})


def test_a_module_imported_by_a_computed_name_may_be_any_of_the_project(tmp_path):
    """`import_module(name)` imports what the name comes to: any module of the project (scipy's
    lazy `__getattr__`), or the API's module when the analysed text names it. The verdict then
    reads every module Python can import from the project root."""
    _project(tmp_path, {**_WITHOUT_JAX, "app/plugins/__init__.py": """
        import importlib

        def __getattr__(name):
            return importlib.import_module(f"app.{name}")
    """, "app/tools/cli.py": "import jax.numpy as jnp\n", "build-scripts/make.py": "import jax.experimental.pallas\n"})
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    probed: set[str] = set()
    assert not reaches_api(Bindings.of(ast.parse(source), "app"), str(main), probed, source.encode())
    assert str(tmp_path / "app" / "tools" / "cli.py") in probed  # read, though nothing imports it by name
    assert prefilter.settled_from_text(source, str(main))
    assert not prefilter.settled_from_text(source + "\nMODULE = 'jax.experimental.pallas'\n", str(main))
    (tmp_path / "app" / "tools" / "gpu.py").write_text("from jax.experimental import pallas\n")
    prefilter.forget_project_imports()
    assert not prefilter.settled_from_text(source, str(main))


_LOAD = "import importlib\ndef load(name):\n    return importlib.import_module({})\n"
_FROM = "from importlib import import_module\nops = import_module({!r})\n"
_PALLAS = "import jax.experimental.pallas\n"


@pytest.mark.parametrize("head, gpu_ops, reaches", [
    ("import importlib\nSPEC = importlib.util.find_spec('yaml')\n", _PALLAS, False),
    ("import importlib\nplgpu = importlib.import_module('jax.experimental.pallas.mosaic_gpu')\n", "", True),
    (_FROM.format("app.gpu_ops"), _PALLAS, True),
    (_FROM.format("app.util"), _PALLAS, False),
    # a computed name: any module of the project, or one the strings of the text and the project name
    (_LOAD.format("name"), _PALLAS, True),
    (_LOAD.format("name"), "import jax.numpy\n", False),
    (_LOAD.format("'jax.' + name"), "NAME = 'experimental.pallas.mosaic_gpu'\n", True),
])
def test_what_the_analysed_file_gets_from_import_module(tmp_path, head, gpu_ops, reaches):
    """The analysed file's `importlib.import_module` is judged as a project module's: a
    literal name is the module it names; a computed one may be any module of the project, or
    one the text and the project's strings name."""
    _project(tmp_path, {**_WITHOUT_JAX, "app/gpu_ops.py": gpu_ops})
    main = tmp_path / "app" / "main.py"
    source = head + main.read_text(encoding="utf-8")
    assert prefilter.settled_from_text(source, str(main)) is not reaches


def test_a_lazy_package_imports_what_its_getattr_names(tmp_path):
    """A package's `__getattr__` (PEP 562) runs the import statements it holds, and the names
    `import_module` gets as literals; `__import__`, which the trace does not model, imports
    nothing there (numpy's packages, none of whose modules mention jax, are all like this)."""
    _project(tmp_path, {**_WITHOUT_JAX, "app/plugins/__init__.py": """
        from .registry import *
        import importlib

        def __getattr__(name):
            if name == "extras":
                from . import extras
                return extras
            if name == "legacy":
                return importlib.import_module("app.legacy")
            return __import__(name)
    """, "app/plugins/extras.py": "import os\n", "app/legacy.py": "import sys\n"})
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    probed: set[str] = set()
    assert not reaches_api(Bindings.of(ast.parse(source), "app"), str(main), probed)
    assert {str(tmp_path / "app" / name) for name in ("plugins/extras.py", "legacy.py")} <= probed
    assert prefilter.settled_from_text(source, str(main))
    (tmp_path / "app" / "legacy.py").write_text("import jax.experimental.pallas\n")
    prefilter.forget_project_imports()
    assert not prefilter.settled_from_text(source, str(main))


def test_a_change_to_a_project_module_is_seen(tmp_path):
    _project(tmp_path, _WITHOUT_JAX)
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    assert prefilter.settled_from_text(source, str(main))
    registry = tmp_path / "app" / "plugins" / "registry.py"
    registry.write_text("import jax.experimental.pallas.mosaic_gpu as plgpu\nkernel_registry = plgpu\n")
    prefilter.forget_project_imports()  # what the server does when a file is saved
    assert not prefilter.settled_from_text(source, str(main))
    registry.write_text("kernel_registry = {}\n")
    prefilter.forget_project_imports()
    assert prefilter.settled_from_text(source, str(main))


def test_a_change_to_a_project_module_is_seen_without_being_told(tmp_path, monkeypatch):
    monkeypatch.setattr(prefilter, "RECHECK_AFTER_S", 0.0)  # (a CLI run, a server: 2 s)
    _project(tmp_path, _WITHOUT_JAX)
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    assert prefilter.settled_from_text(source, str(main))
    (tmp_path / "app" / "util.py").write_text("import app.core\nfrom app import gpu_kernels\n")
    assert prefilter.settled_from_text(source, str(main))  # a module not there: nothing runs
    (tmp_path / "app" / "gpu_kernels.py").write_text("import jax.experimental.pallas\n")
    assert not prefilter.settled_from_text(source, str(main))


def test_unknown_imports_count():
    assert _reaches("from .. import helpers\n", package="")  # above the top-level package
    assert _reaches("from .. import *\n", package="pkg")


def test_relative_imports_inside_jax_are_jax_modules():
    source = "from . import core as gpu_core\ngpu_core.TMEM((128, 128), f32)\n"
    assert not _reaches(source, package="jax._src.pallas.mosaic_gpu")
    source = "from . import mosaic_gpu as plgpu\nplgpu.TMEM((128, 128), f32)\n"
    assert _reaches(source, package="jax.experimental.pallas")


def test_the_words_of_jax_modules_a_relative_import_names_do_not_count(tmp_path):
    """Inside jax's own package a relative import is a jax module, which the brain serves: the
    trace never runs it, so its words do not let the importing file through."""
    for top, kept in (("jax", False), ("mylib", True)):
        package = tmp_path / top / "sub"
        package.mkdir(parents=True)
        (tmp_path / top / "__init__.py").write_text("")
        (package / "__init__.py").write_text("")
        (package / "tmem.py").write_text("from jax.experimental.pallas import mosaic_gpu as plgpu\nx = plgpu.TMEM\n")
        (package / "user.py").write_text("from . import tmem\n")
        assert mentions_pallas(b"from . import tmem\n", path=str(package / "user.py")) is kept, top


def test_the_words_of_project_modules_that_never_name_pallas_do_not_count(tmp_path):
    """A file without trigger words, which says `jax`, passes on the words of the project
    modules it imports (a helper may make the TMEM), unless neither it nor they name `pallas`:
    then nothing its trace runs can reach a module of the API (scipy's and numpy's array-API
    layers say `jax` and `kernel`), and their files are not read for the words."""
    package = tmp_path / "lib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("import jax\n\ndef kernel(x, collective=True):\n    return jax.numpy.sum(x)\n")
    (package / "user.py").write_text("import jax\nfrom lib import helpers\n")
    user = str(package / "user.py")
    probed: set[str] = set()
    assert not mentions_pallas(b"import jax\nfrom lib import helpers\n", path=user, probed=probed)
    assert str(package / "helpers.py") in probed
    (package / "helpers.py").write_text("from jax.experimental import pallas as pl\n\ndef kernel(x, collective=True):\n"
                                        "    return pl.pallas_call(x)\n")
    prefilter.forget_project_imports()
    assert mentions_pallas(b"import jax\nfrom lib import helpers\n", path=user)


def test_what_a_finding_is_about_comes_from_mosaic_gpu_or_the_building_blocks():
    # `reaches_api` counts what is under `jax.experimental.pallas.mosaic_gpu`, and JAX's kernel
    # building blocks, which the tracer reads from source (`stubs.LIBRARY_PACKAGES`); the
    # functions of `jax.experimental.pallas` it models make no object a rule judges
    from pallas_lsp.analysis import api
    from pallas_lsp.analysis.prefilter import _near_api
    from pallas_lsp.analysis.trace import stubs

    assert all(_near_api(package + "gpu.x") for package in stubs.LIBRARY_PACKAGES)
    assert all(_near_api(name) for name in stubs.NATIVE if name.startswith(api.MOSAIC_GPU + "."))
    assert not any(_near_api(name) for name in stubs.NATIVE if name.startswith(api.PALLAS + ".")
                   and not name.startswith((api.MOSAIC_GPU + ".", api.PALLAS + ".ops.")))
    assert "mosaic_gpu" not in api.STUBS[api.PALLAS] and "ops" not in api.STUBS[api.PALLAS]
    assert all(_near_api(name) for name in ("jax", "jax.experimental", api.PALLAS))


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_the_building_blocks_of_other_backends_use_no_mosaic_gpu():
    """`API_SOURCES` counts JAX's GPU building blocks only: the others (TPU kernels, read from
    source like them when a kernel calls one) import nothing of Mosaic GPU."""
    from pallas_lsp.analysis.trace import stubs

    base = Path(list(importlib.util.find_spec("jax").submodule_search_locations)[0])
    for package in stubs.LIBRARY_PACKAGES:
        directory = base.joinpath(*package.rstrip(".").split(".")[1:])
        others = [path for path in directory.rglob("*.py") if path.relative_to(directory).parts[0] != "gpu"]
        assert others
        for path in others:
            assert "mosaic_gpu" not in path.read_text(encoding="utf-8") and "mgpu" not in path.read_text(
                encoding="utf-8"), path


def test_a_kernel_of_another_backend_cannot_meet_the_api(tmp_path):
    """A TPU kernel calls the modelled functions of `jax.experimental.pallas` with TPU memory
    spaces, whose names are also Mosaic GPU's (`SMEM`): nothing a rule judges is made."""
    source = textwrap.dedent("""
        import functools
        import jax
        import jax.numpy as jnp
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import tpu as pltpu

        def kernel(x_ref, o_ref, scratch):
            def body(tmp):
                tmp[...] = x_ref[...]
            pl.run_scoped(body, pltpu.SMEM((8,), jnp.float32))
            o_ref[...] = scratch[...]

        def run(x):
            return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                                  scratch_shapes=[pltpu.SMEM((8, 128), jnp.float32)])(x)

        k = functools.partial(pl.kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32),
                              mesh=pltpu.create_tensorcore_mesh("x"), scratch_shapes=pltpu.VMEM((8,), jnp.float32))
    """)
    assert not _reaches(source)
    assert _from_text(source)
    path = tmp_path / "tpu_kernel.py"
    path.write_text(source)
    assert not applicable(list(RULES), source, lambda: Bindings.of(ast.parse(source)), str(path))
    for spelling in ("pl.mosaic_gpu.SMEM((8,), jnp.float32)", "getattr(pl, 'mosaic_gpu')"):
        reaching = source + f"\nx = {spelling}\n"
        assert _reaches(reaching), spelling


_JAX = importlib.util.find_spec("jax")


@pytest.mark.skipif(_JAX is None or not _JAX.submodule_search_locations, reason="jax is not installed")
@pytest.mark.parametrize("name", ["_src/pallas/mosaic_gpu/core.py", "_src/pallas/mosaic_gpu/primitives.py"])
def test_jax_s_own_definition_of_the_api_records_no_site(name, monkeypatch):
    """Where JAX defines `plgpu.TMEM`, `tcgen05_mma` and `plgpu.kernel`: every rule's words
    are there, the API is not."""
    path = Path(list(_JAX.submodule_search_locations)[0]) / name
    if not path.is_file():
        pytest.skip(f"this jax has no {name}")
    source = path.read_text(encoding="utf-8")
    package = "jax." + name.rpartition("/")[0].replace("/", ".")
    assert mentions_pallas(source)
    assert not reaches_api(Bindings.of(ast.parse(source), package), str(path))
    assert _sites(source, path, monkeypatch) == []


# -- the walk's verdict (`reaches_api`), and the text's never contradicting it ---------------------

_QUICK_NO_API = {
    "comments, docstrings and strings": '''
        """Lowering rules, as jax traces them; see jax.experimental.pallas.mosaic_gpu."""
        import jax
        # jax calls these; jax.experimental.pallas.mosaic_gpu.TMEM is defined elsewhere
        def f(x):
            """jax"""
            # jax
            return g("jax-pallas", x, "jax.experimental.pallas")  # jax/jaxlib
    ''',
    "attributes away from the API": """
        import jax
        import jax.numpy as jnp
        x = jax.numpy.float32, jax . lax . fori_loop, jnp.zeros
        y = config.jax.experimental.pallas  # an attribute of something else
    """,
    "a name rebound, unread": """
        import jax
        del jax
    """,
}

_QUICK_API = {
    "a decorator": """
        import jax
        @jax.experimental.pallas.mosaic_gpu.kernel(out_type=t)
        def body(ref):
            pass
    """,
    "an except clause after else and finally in the bodies": """
        import jax
        try:
            pass
        except jax.experimental.pallas.mosaic_gpu.TMEM:
            pass
        else:
            pass
        finally:
            pass
    """,
    "a case pattern and guard": """
        import jax
        match x:
            case 1 if jax.experimental.pallas:
                pass
    """,
    "an f-string": """
        import jax
        s = f"{jax.experimental.pallas.mosaic_gpu.TMEM}"
    """,
    "two statements on a line": """
        import jax; m = jax.experimental.pallas
    """,
    "a line continuation": """
        import jax
        m = jax.\\
            experimental.pallas
    """,
    "a chain over lines in parentheses": """
        import jax
        m = (jax
             .experimental.pallas)
    """,
    "a # in a string before the use": """
        import jax
        s = "#"; m = jax.experimental.pallas
    """,
    "a module given as a keyword argument": """
        from jax.experimental.pallas import mosaic_gpu as plgpu
        build(api=plgpu)
    """,
    "an identifier Python normalizes (NFKC)": """
        import jax
        m = \uff4a\uff41\uff58.experimental.pallas
    """,
    "in a class body and a default": """
        import jax
        class K:
            def f(self, alloc=jax.experimental.pallas.mosaic_gpu.TMEM):
                pass
    """,
}


@pytest.mark.parametrize("case", sorted(_QUICK_NO_API))
def test_the_walk_tells_a_file_without_the_api(case):
    assert not _reaches(_QUICK_NO_API[case])


@pytest.mark.parametrize("case", sorted(_QUICK_API))
def test_the_walk_finds_every_way_to_the_api(case):
    assert _reaches(_QUICK_API[case])


def _sources() -> list[tuple[str, str, str | None]]:
    found = [(str(path), path.read_text(encoding="utf-8"), "") for path in FIXTURES]
    if _JAX is not None and _JAX.submodule_search_locations:
        base = Path(list(_JAX.submodule_search_locations)[0])
        for path in sorted((base / "_src" / "pallas").rglob("*.py")) + sorted((base / "experimental").rglob("*.py")):
            package = ".".join(("jax",) + path.relative_to(base).parent.parts)
            found.append((str(path), path.read_text(encoding="utf-8"), package))
    return found


def test_the_text_never_contradicts_the_walk():
    """On the fixtures, the examples and jax's own Pallas sources: where
    `cannot_reach_api_from_text` tells, `reaches_api` agrees; where the text's import
    statements reach the API, so does the walk. `applicable` asks either first (the walk
    first in an editor's session, which keeps it), and keeps the same rules."""
    from_text = reaching = 0
    for path, source, package in _sources():
        try:
            walked = _reaches(source, path, package)
        except SyntaxError:
            continue
        text = cannot_reach_api_from_text(source.encode(), package, path)
        verdict = prefilter._text_verdict(source.encode(), package, path)
        assert not (text and walked), path
        # imports in the text that reach: the walk's reach (`applicable` does not walk then)
        assert verdict is not False or walked, path
        bindings = functools.cache(lambda source=source, package=package: Bindings.of(ast.parse(source), package))
        assert applicable(list(RULES), source, bindings, path, package) == applicable(
            list(RULES), source, bindings, path, package, walk_first=True), path
        from_text += text
        reaching += verdict is False
    assert from_text and reaching


def test_a_text_that_cannot_reach_the_api_is_settled_before_its_words_are_searched(monkeypatch, tmp_path):
    """Where the text's import statements tell that the trace cannot meet the API, every rule
    with identifiers is dropped: `applicable` asks that first, and searches no word (most of
    the files a parallel run's parent settles). An editor's session asks the walk first."""
    source = "import numpy as np\n\ndef kernel(x):\n    return np.asarray(x)  # TMEM, collective\n"
    path = str(tmp_path / "tool.py")
    bindings = functools.cache(lambda: Bindings.of(ast.parse(source)))
    assert prefilter._text_verdict(source.encode(), "", path) is True

    def searched(*_):
        raise AssertionError("the words were searched")

    monkeypatch.setattr(prefilter, "_present", searched)
    assert applicable(list(RULES), source, bindings, path) == []
    assert prefilter.settled_from_text(source, path)
    with pytest.raises(AssertionError, match="searched"):
        applicable(list(RULES), source, bindings, path, walk_first=True)


def test_api_uses_stops_once_each_rule_has_a_name_used():
    """`api_uses` with the rules' identifiers as groups ends its search of the calls early;
    the rules that have a name used are the same as after a search of every call."""
    groups = [rule.identifiers for rule in RULES if rule.identifiers]
    wanted = frozenset().union(*groups)
    stopped = 0
    for path, source, package in _sources():
        try:
            bindings = Bindings.of(ast.parse(source), package)
        except SyntaxError:
            continue
        every, early = api_uses(bindings, wanted), api_uses(bindings, wanted, groups)
        assert early <= every, path
        assert [group & every != set() for group in groups] == [group & early != set() for group in groups], path
        stopped += early != every
    assert stopped


# -- the same verdict from the text alone (`cannot_reach_api_from_text`) ------------------------

_TEXT_ONLY_NO_API = {
    "jax modules served empty": _NO_API["jax modules the brain serves empty, however deep"],
    "a library outside the project": _NO_API["a library outside the project, and the standard library"],
    "the word in a comment after an import": """
        import numpy  # pyrefly: ignore[missing-import]; from jax.experimental.pallas import mosaic_gpu
        from jax._src.pallas.mosaic_gpu import core as gpu_core  # see: import jax.experimental.pallas
        # a comment: from jax.experimental.pallas import mosaic_gpu as plgpu
        x = gpu_core.TMEM  # plgpu.TMEM: the TMEM of jax.experimental.pallas
    """,
    "the word in prose": '''
        """We import nothing of the API and the imports are plain."""
        import jax.numpy as jnp
        x = jnp.zeros
    ''',
    "the name in strings and comments of every kind": r"""
        import jax
        '''A docstring over lines that says jax.experimental.pallas.mosaic_gpu
        and 'jax' with "quotes" \''' inside.'''
        a = "jax.experimental.pallas" + 'jax' + r"\\" + "jax" + b"jax.experimental" + u'jax'
        b = rb"jax" Rb'jax' b"x # jax.experimental.pallas" # "jax.experimental.pallas"
        c = f"{a!r} {'}'} {b:>{len('x')}}" f'''{"q"}''' "{jax.experimental.pallas}"
        d = jax.numpy.zeros
    """,
    "names continued with a backslash (numpy's, scipy's)": """
        from jax.numpy import zeros, \\
            ones as one
        from jax._src.pallas.mosaic_gpu \\
            import core as gpu_core
        x = zeros(1) + one(1) + gpu_core.TMEM
    """,
    "a line of a docstring that reads as no import statement": '''
        """Example:
        import .lib.scimath as emath
        import {module}
        """
        import jax.numpy as jnp
        x = jnp.zeros
    ''',
    "the word import in a message after a colon": """
        import jax.numpy as jnp
        try:
            import torch
        except ImportError:
            raise RuntimeError("Can't compile for PyTorch: import torch failed") from None
        x = jnp.zeros  # jax.experimental.pallas: import mosaic_gpu
    """,
    "parenthesized names over lines": """
        from jax._src.pallas.mosaic_gpu.core import (
            TMEM,
            kernel as gpu_kernel,
        )
        import jax
        y = jax.numpy.float32
        kernel = gpu_kernel(lambda acc: None, scratch_types=[TMEM((128, 128), y, collective=True)])
    """,
}

_TEXT_UNKNOWN = {  # each reaches the API, and the text must leave it to the tree
    "an import after a semicolon": """
        x = 1; from jax.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "an import after a compound statement's colon": """
        if True: import jax.experimental.pallas.mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "a from clause continued with a backslash": """
        from jax.experimental.pallas \\
            import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "names continued with a backslash": """
        from jax.experimental.pallas import numpy, \\
            mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "a comment's backslash, which joins no line": """
        x = 1  # a comment that ends in a backslash \\
        from jax.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "an import line in a docstring that ends in a backslash": '''
        """Example: \\
        """; from jax.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    ''',
    "a comment inside the parentheses": """
        from jax.experimental.pallas import (mosaic_gpu  # the API
                                            as plgpu)
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "a string closed after a comment sign": """
        s = '''
        import numpy # '''; from jax.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "a module spelled in characters Python normalizes": """
        from \uff4a\uff41\uff58.experimental.pallas import mosaic_gpu as plgpu
        plgpu.TMEM((128, 128), x, collective=True)
    """,
    "a relative import": """
        from .helpers import make_tmem
        make_tmem()
    """,
    "the use in code after a docstring that names it": '''
        import jax
        """jax.experimental.pallas.mosaic_gpu"""
        jax.experimental.pallas.mosaic_gpu.TMEM((128, 128), x, collective=True)
    ''',
    "the use in an f-string's field": """
        import jax
        s = f"made {jax.experimental.pallas.mosaic_gpu.TMEM((128, 128), x, collective=True)}"
    """,
    "the use in a field after a nested string": """
        import jax
        s = f"{'}'} {jax.experimental.pallas.mosaic_gpu.TMEM((128, 128), x, collective=True)!r:>{'{'}}"
    """,
    "the use after a string that ends in an escaped backslash": r"""
        import jax
        s = 'a\\'; jax.experimental.pallas.mosaic_gpu.TMEM((1,), x)  # '
    """,
}


def _from_text(source: str, package: str = "pkg") -> bool:
    return cannot_reach_api_from_text(source.encode(), package, None)


@pytest.mark.parametrize("case", sorted(_TEXT_ONLY_NO_API))
def test_the_text_tells_a_file_without_the_api(case):
    source = textwrap.dedent(_TEXT_ONLY_NO_API[case])
    assert not reaches_api(Bindings.of(ast.parse(source), "pkg"), None)
    assert _from_text(source)


@pytest.mark.parametrize("case", sorted(_QUICK_API) + sorted(_API) + sorted(_TEXT_UNKNOWN))
def test_the_text_leaves_every_way_to_the_api_to_the_tree(case):
    source = textwrap.dedent({**_API, **_QUICK_API, **_TEXT_UNKNOWN}[case])
    if case in _TEXT_UNKNOWN:
        assert reaches_api(Bindings.of(ast.parse(source), "pkg"), None)
    assert not _from_text(source)


def test_bare_carriage_returns_end_lines():
    source = "x = 1\rfrom jax.experimental.pallas import mosaic_gpu as plgpu\rplgpu.TMEM((1,), x)\r"
    assert reaches_api(Bindings.of(ast.parse(source), "pkg"), None)
    assert not _from_text(source)
    assert _from_text(source.replace("jax.experimental.pallas", "jax._src.pallas"))


_INSERTED = [  # statements that bring in the API, in spellings the text must not misread
    "x_ = 1; from jax.experimental.pallas import mosaic_gpu as plgpu_\nplgpu_.TMEM((1,), x_)\n",
    "if True: import jax.experimental.pallas.mosaic_gpu as plgpu_\nplgpu_.TMEM((1,), 1)\n",
    "from jax.experimental.pallas \\\n  import mosaic_gpu as plgpu_\nplgpu_.TMEM((1,), 1)\n",
    "from jax.experimental.pallas import (  # x\n  mosaic_gpu as plgpu_)\nplgpu_.TMEM((1,), 1)\n",
    "try: from jax.experimental import pallas as pl_\nexcept ImportError: pass\npl_.mosaic_gpu.TMEM((1,), 1)\n",
    "from . import plgpu_  # a project module\n",
    "import jax\nm_ = jax.experimental.pallas\n",
    "s_ = 'a\\\\'\nimport jax as j_\nj_.experimental.pallas.mosaic_gpu.TMEM((1,), 1)  # '\n",
    "s_ = f\"{'}'} {1:>{'{'}}\"\nimport jax as j_\nt_ = f'{j_.experimental.pallas.mosaic_gpu.TMEM((1,), 1)}'\n",
]


def test_inserted_ways_to_the_api_are_left_to_the_tree():
    """Neighbours of real files: each statement above inserted before top-level statements
    of the fixtures and jax's Pallas sources that the text alone tells cannot meet the API.
    The text must not tell it of the mutant."""
    import random

    rng = random.Random(0)
    tried = 0
    for path, source, package in _sources():
        if not cannot_reach_api_from_text(source.encode(), package or "pkg", path):
            continue
        lines = source.splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.startswith(("def ", "class ", "import ", "from "))]
        for inserted in _INSERTED:
            for at in rng.sample(starts, min(2, len(starts))):
                mutant = "".join(lines[:at]) + inserted + "".join(lines[at:])
                try:
                    tree = ast.parse(mutant)
                except SyntaxError:
                    continue
                if not reaches_api(Bindings.of(tree, package or "pkg"), path):
                    continue
                tried += 1
                assert not cannot_reach_api_from_text(mutant.encode(), package or "pkg", path), (path, inserted)
    assert tried > 50


def test_whole_words_are_those_a_word_boundary_pattern_finds():
    import re

    from pallas_lsp.analysis.catalog import CHECKS
    from pallas_lsp.analysis.prefilter import _whole_words

    names = frozenset().union(*(rule.identifiers for rule in CHECKS))
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    texts = ["", "TMEM", "xTMEM TMEM_ TMEM1 1TMEM", "éTMEM TMEMé ٣TMEM TMEM٣ _TMEM", "a.TMEM(", "kernelkernel kernel",
             "tcgen05_mma_p tcgen05_mma", *(source for _, source, _ in _sources())]
    for text in texts:
        assert _whole_words(text, names) == set(pattern.findall(text)), text[:80]


def test_the_text_tells_a_file_without_imports_and_reads_every_line_ending():
    assert _from_text("x = TMEM  # no import at all\n")
    source = "from jax._src import (a,\r\n  b)\r\nimport jax\rfrom jax._src import c\ny = jax.numpy\n"
    assert not reaches_api(Bindings.of(ast.parse(source), "pkg"), None)
    assert _from_text(source)


# -- comments and string literals, read as the tokenizer reads them (`prefilter._Literals`) -----

_LITERAL_TEXTS = [
    "x = 'a' \"b\" '''c\n'd'\n''' \"\"\"e\"\" \\\"\"\"\"\" # f 'g'\n",
    "x = r'\\' + '\\\\' + b'\\n' + rb\"x\" + Br'y' + u'\\u0041'  # 'z'\n",
    "x = f'{a}' f\"{b!r:>{c}}\" f'''{d['k']}''' F'{{e}}' rf'{f}\\d' 'g'\n",
    "x = f\"{'}'} {'{'}\" + f'{ {\"a\": 1}[\"a\"] }' + f'{x:{\"w\"}}' + 'tail'\n",
    "x = 'line one \\\ncontinued' + \"#not a comment\"  # a comment\n",
    "x = 1 if'a'else'b'\n",
    "x = 'unterminated\n",
    "x = f'{a'\n",
]
_PY312_LITERAL_TEXTS = [  # a field may hold quotes of its own string's kind, and comments
    "x = f\"{d[\"k\"]} {jax}\" + 'after'\n",
    "x = f'{'}'} {f'{\"a\"}'}' # c\n",
    "x = f\"\"\"{\n  a  # a comment in a field\n}\"\"\" 'after'\n",
]


def _literals(data: bytes) -> list[tuple[int, int]] | None:
    """The comments and plain string literals the scan finds, read to the end of the text;
    None: the scan cannot be trusted somewhere."""
    scan = prefilter._Literals(data)
    return None if scan.inside(len(data)) is None else scan.spans


def _tokenized_literals(data: bytes) -> list[tuple[int, int]]:
    """The comments and plain (not f-) string literals the tokenizer finds, as byte spans from
    the opening quote (ASCII text)."""
    import io
    import tokenize

    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    offset = lambda position: starts[position[0] - 1] + position[1]  # noqa: E731
    spans, fields = [], 0
    for token in tokenize.tokenize(io.BytesIO(data).readline):
        kind = tokenize.tok_name[token.type]
        fields += (kind == "FSTRING_START") - (kind == "FSTRING_END")
        if fields or kind not in ("COMMENT", "STRING"):
            continue
        start, end = offset(token.start), offset(token.end)
        quote = start + len(token.string) - len(token.string.lstrip("rRbBuUfFtT"))
        if kind == "COMMENT" or data[start:quote].lower() in prefilter._PLAIN_PREFIXES:
            spans.append((quote, end))
    return spans


@pytest.mark.parametrize("text", _LITERAL_TEXTS + _PY312_LITERAL_TEXTS)
def test_comments_and_strings_are_read_as_the_tokenizer_reads_them(text):
    """Where the scan reads the text, it finds the tokenizer's comments and plain strings
    (an f-string is read to its end, its fields being code); text it cannot read (what does
    not compile, a comment inside a field) it does not claim to."""
    import sys

    data = text.encode()
    try:
        compile(text, "<text>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError:
        assert text in _PY312_LITERAL_TEXTS and sys.version_info < (3, 12) or _literals(data) is None
        return
    found = _literals(data)
    assert found is None or found == _tokenized_literals(data), text
    if "# a comment in a field" not in text and "if'a'" not in text:
        assert found is not None, text


def test_comments_and_strings_of_real_sources_are_read_as_the_tokenizer_reads_them():
    read = 0
    for path, source, _ in _sources():
        data = source.encode()
        if not data.isascii():
            continue
        found = _literals(data)
        if found is not None:
            assert found == _tokenized_literals(data), path
            read += 1
    assert read > len(FIXTURES) // 2


@pytest.mark.parametrize("text", _LITERAL_TEXTS + _PY312_LITERAL_TEXTS + [
    "import jax  # 'a'\nx = 'b'\ny = 'unterminated\nz = jax.experimental.pallas\n",
    "x = 'a' + rb'b' + xyz'c'  # d\n",
])
def test_the_scan_read_as_far_as_asked_answers_as_the_whole_scan(text):
    """`_Literals` reads the text only as far as the offset asked about: at every offset,
    asked in order or out of it, it answers as the scan of the whole text, until the place
    the scan cannot be trusted from, where and after which it does not claim to know."""
    data = text.encode()
    whole = prefilter._Literals(data)
    whole.inside(len(data))
    stop = len(data) + 1 if whole.stop is None else whole.stop - len(prefilter._prefix(data, whole.stop))
    expected = [None if at >= stop else prefilter._inside(whole.spans, at) for at in range(len(data) + 1)]
    in_order = prefilter._Literals(data)
    assert [in_order.inside(at) for at in range(len(data) + 1)] == expected, text
    backwards = prefilter._Literals(data)
    assert [backwards.inside(at) for at in reversed(range(len(data) + 1))] == expected[::-1], text


def test_an_unsaved_buffer_of_a_project_module_keeps_the_file(tmp_path, monkeypatch):
    """The server analyses other files' unsaved buffers instead of the disk, whose text the
    prefilter reads: with one, a project module may meet jax whatever its file says."""
    _project(tmp_path, _WITHOUT_JAX)
    main = tmp_path / "app" / "main.py"
    source = main.read_text(encoding="utf-8")
    unsaved = {str(tmp_path / "app" / "plugins" / "registry.py"): "import jax\nkernel_registry = {}\n"}
    traced: list[object] = []
    run_rules = engine._run_rules
    monkeypatch.setattr(engine, "_run_rules", lambda *args: traced.append(args) or run_rules(*args))
    engine.analyze_source(source, str(main))
    assert not traced
    engine.analyze_source(source, str(main), overlays=unsaved)
    assert traced
    with prefilter.buffers_differ(True):
        assert not prefilter.settled_from_text(source, str(main))


def test_a_file_without_jax_or_trigger_words_follows_its_project_imports(tmp_path):
    """No trigger word and no `jax` in the file: its project modules are not searched for
    trigger words when none of them (to any depth) mentions jax; the verdict names them."""
    _project(tmp_path, {**_WITHOUT_JAX, "app/tool.py": "from app.util import helper\nhelper()\n",
                        "app/util.py": "import app.core\n# TMEM, collective: words of the rules\n"})
    tool = tmp_path / "app" / "tool.py"
    probed: set[str] = set()
    assert not mentions_pallas(tool.read_text(), path=str(tool), probed=probed)
    assert str(tmp_path / "app" / "core.py") in probed
    assert str(tmp_path / "app" / "core.py") in engine.analyze_source(tool.read_text(), str(tool)).dependencies
    (tmp_path / "app" / "core.py").write_text("import jax.experimental.pallas\n")
    prefilter.forget_project_imports()
    assert mentions_pallas(tool.read_text(), path=str(tool))


def test_a_namespace_package_s_relative_imports_start_from_its_directory(tmp_path):
    """A directory without `__init__.py` is a namespace package: a module reached through it
    (`app.examples.cffi.extending`) imports `.parse` from beside it, as Python does."""
    _project(tmp_path, {**_WITHOUT_JAX,
                        "app/examples/cffi/extending.py": "from .parse import parse\n",
                        "app/examples/cffi/parse.py": "def parse(): return 1\n",
                        "app/user.py": "from app.examples.cffi.extending import parse\ndef kernel(): parse()\n"})
    user = tmp_path / "app" / "user.py"
    assert prefilter.settled_from_text(user.read_text(), str(user))
    (tmp_path / "app" / "examples" / "cffi" / "parse.py").write_text("import jax.experimental.pallas\n")
    prefilter.forget_project_imports()
    assert not prefilter.settled_from_text(user.read_text(), str(user))


def test_a_package_s_stub_is_the_package():
    assert prefilter.package_of("/p/pkg/__init__.pyi", "pkg") == "pkg"
    assert prefilter.package_of("/p/pkg/__init__.py", "pkg") == "pkg"
    assert prefilter.package_of("/p/pkg/mod.pyi", "pkg.mod") == "pkg"
