"""The prefilter drops only rules that could not fire: what it keeps and what it drops."""

import ast
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from oracle.markers import parse_markers, parse_markers_source
from pallas_lsp.analysis.prefilter import Bindings, api_uses, applicable, mentions_pallas
from pallas_lsp.analysis.rules import RULES

FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").glob("*.py"))


def _kept(source: str, package: str = "") -> set[str]:
    if not mentions_pallas(source):
        return set()
    return {rule.code for rule in applicable(list(RULES), source, lambda: Bindings.of(ast.parse(source), package))}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_expected_finding_passes_the_prefilter(path: Path):
    expected = {marker.code for marker in parse_markers(path)}
    assert expected <= _kept(path.read_text(encoding="utf-8"))


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


def test_the_walk_of_the_imports_is_kept_only_while_what_it_read_is_unchanged(tmp_path):
    """The same file and text walked again: the kept answer stands while each directory the
    walk listed and each file it read are unchanged; a module created, changed or removed,
    or a package made, is found as a fresh walk would find it."""
    import os

    from pallas_lsp.analysis import prefilter

    path = tmp_path / "kernel.py"
    data = b"from pkg import helpers\nimport util\n"
    path.write_bytes(data)
    key = (str(path), 2, data)
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
    assert (str(path), 2, data) not in prefilter._imported
    (tmp_path / "util.py").unlink()
    (tmp_path / "util.py").symlink_to(tmp_path / "b")
    os.utime(tmp_path, ns=(10**18, 10**18))  # the directory's time as it was
    assert prefilter.imported_data(data, str(path)) == b""
