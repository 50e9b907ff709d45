"""Other modules' top levels kept from one trace to the next (`trace.world`): the next trace
takes them as the last one left them, with the same report, sites, functions run, steps and
files read as making them again; a module whose top level wrote to another's state, or a
trace that wrote to what they made, keeps none of that for the next trace."""

import textwrap

from pallas_lsp.analysis import analyze_file
from pallas_lsp.analysis.trace import reuse, world
from test_trace_imported import KERNEL, _report, _state


PACKAGE = {
    "pkg/__init__.py": "from pkg import a\nfrom pkg import b\n",
    "pkg/a.py": """
        import jax

        REGISTRY = {}
        REGISTRY["rows"] = 128  # (a write to what this top level made)


        @jax.named_scope("outer")
        def outer(x):
          return [x]
    """,
    "pkg/b.py": "from pkg.a import REGISTRY\n\nROWS = REGISTRY['rows']\n",
}


def _write(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))


def _analyses(tmp_path, files, count=2):
    _write(tmp_path, files)
    results = [analyze_file(str(tmp_path / "kernel.py")) for _ in range(count)]
    assert all(result.error is None for result in results)
    return results


def _world(trace):
    return [(node, module) for node, module in trace.interp.modules.items() if node is not trace.module]


def _names(runs):
    return sorted(run.node.name for run in runs)


def test_the_modules_a_file_imports_are_taken_as_the_last_trace_left_them(tmp_path, traces):
    kernel = textwrap.dedent(KERNEL).replace("import lib", "import pkg") + "\n\ndef uses():\n  return pkg.b.ROWS\n"
    first, second = _analyses(tmp_path, {**PACKAGE, "kernel.py": kernel})
    assert _names(traces[0].interp.world.made.values()) == ["pkg", "pkg.a", "pkg.b"]
    assert _names(traces[1].interp.world.used) == ["pkg"] and not traces[1].interp.world.made
    assert _report(first) == _report(second) and first.dependencies == second.dependencies
    assert _state(traces[0]) == _state(traces[1])
    assert _world(traces[1]) == _world(traces[0])  # the same objects, in load order
    assert traces[1].replayed == 1  # `outer`'s run, kept on that world


def test_a_top_level_writing_to_a_module_loaded_before_is_made_every_time(tmp_path, traces):
    files = {
        "pkg/__init__.py": "",
        "pkg/registry.py": "ITEMS = []\n",
        "pkg/plugin.py": "from pkg import registry\n\nregistry.ITEMS.append(128)\n",
        "kernel.py": textwrap.dedent(KERNEL).replace("import lib", "from pkg import registry, plugin"),
    }
    first, second = _analyses(tmp_path, files)
    # plugin's run is not kept; registry's holds plugin's write: nothing goes back
    assert "pkg.plugin" not in traces[0].interp.world.made
    assert not traces[1].interp.world.used
    assert _report(first) == _report(second) and _state(traces[0]) == _state(traces[1])


def test_a_trace_that_writes_to_a_kept_module_keeps_nothing(tmp_path, traces):
    kernel = textwrap.dedent(KERNEL).replace("import lib", "import pkg") + (
        "\n\ndef writes():\n  pkg.a.REGISTRY['rows'] = 64\n  return pkg.b.ROWS\n")
    first, second, third = _analyses(tmp_path, {**PACKAGE, "kernel.py": kernel}, count=3)
    assert not traces[1].interp.world.used and not traces[2].interp.world.used
    assert _report(first) == _report(second) == _report(third)
    assert _state(traces[0]) == _state(traces[1]) == _state(traces[2])


def test_a_run_kept_in_one_files_trace_is_replayed_in_anothers(tmp_path, traces):
    # both files import pkg: `outer`'s run, kept by kernel.py's trace, is replayed in
    # other.py's, whose world is not kernel.py's (it imports one more module), because
    # `outer` is the same closure of the same kept module
    kernel = textwrap.dedent(KERNEL).replace("import lib", "import pkg")
    other = kernel.replace("import pkg", "import pkg\nimport helper") + "\n\nROWS = helper.ROWS\n"
    _analyses(tmp_path, {**PACKAGE, "helper.py": "ROWS = 128\n", "kernel.py": kernel, "other.py": other}, count=1)
    other = analyze_file(str(tmp_path / "other.py"))
    assert traces[1].replayed == 1 and _names(traces[1].interp.world.used) == ["pkg"]
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
    assert _report(analyze_file(str(tmp_path / "other.py"))) == _report(other)
    assert traces[2].replayed == 0 and _state(traces[2]) == _state(traces[1])


def test_the_runs_used_or_made_last_are_the_ones_kept(monkeypatch):
    # (at most `MAX_MODULE_RUNS`: a long editor session over several projects keeps the recent)
    from types import SimpleNamespace

    def run(name):
        return SimpleNamespace(node=SimpleNamespace(name=name), deps=())

    a, b, c = run("a"), run("b"), run("c")
    monkeypatch.setattr(world, "MAX_MODULE_RUNS", 2)
    held = world.World(({"a": a, "b": b}, {}, {}))
    held.used.append(a)
    held.made["c"] = c
    runs, _, _ = held.runs()
    assert list(runs) == ["a", "c"]


def test_a_cancelled_trace_gives_back_what_it_did_not_write_to(tmp_path, traces, monkeypatch):
    # (an editor cancels the trace of a keystroke when the next one comes: the one after it
    # takes the modules all the same)
    from pallas_lsp.analysis.project import Cancelled
    from pallas_lsp.analysis.trace import interp

    kernel = textwrap.dedent(KERNEL).replace("import lib", "import pkg") + "\n\ndef uses():\n  return pkg.b.ROWS\n"
    _analyses(tmp_path, {**PACKAGE, "kernel.py": kernel}, count=1)
    taken, tick = world.World.take, interp.Interpreter.tick

    def take_then_cancel(self, interpreter, node):
        found = taken(self, interpreter, node)
        monkeypatch.setattr(interp.Interpreter, "tick", lambda self: (_ for _ in ()).throw(Cancelled()))
        return found

    monkeypatch.setattr(world.World, "take", take_then_cancel)
    assert "cancel" in (analyze_file(str(tmp_path / "kernel.py")).error or "").lower()
    monkeypatch.setattr(world.World, "take", taken)
    monkeypatch.setattr(interp.Interpreter, "tick", tick)
    analyze_file(str(tmp_path / "kernel.py"))
    assert _names(traces[-1].interp.world.used) == ["pkg"] and not traces[-1].interp.world.made


def test_a_module_made_under_other_environment_variables_is_made_again(tmp_path, traces):
    # kernel.py's trace makes pkg.config with the variable unset; case.py sets it before
    # importing the package: its config is another (a probe's parallel run missed it)
    files = {
        "pkg/__init__.py": "",
        "pkg/config.py": 'import os\n\nCOLLECTIVE = os.environ.get("PKG_COLLECTIVE", "1") == "1"\n',
        "pkg/kernel.py": "from pkg import config\n" + _matmul("config.COLLECTIVE"),
        "case.py": """
            import os
            os.environ["PKG_COLLECTIVE"] = "0"

            from pkg import kernel


            def run(a):
              return kernel.matmul(a)
        """,
    }
    _write(tmp_path, files)
    assert analyze_file(str(tmp_path / "pkg" / "kernel.py")).findings == []
    assert "pkg.config" in traces[0].interp.world.made
    found = analyze_file(str(tmp_path / "case.py")).findings
    assert [(finding.code, str(finding.span.path).endswith("kernel.py")) for finding in found] == [("PLS001", True)]
    assert "pkg.config" not in _names(traces[1].interp.world.used)


def _matmul(collective):
    """A module whose kernel makes a 2-CTA MMA on TMEM allocated with `collective=<collective>`."""
    return textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu


        def body(a_gmem, out_gmem, a_smem, b_smem, acc, bar):
          plgpu.tcgen05_mma(acc, a_smem, b_smem, bar, collective_axis="x")


        def matmul(a):
          return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 256), jnp.float32), cluster=(2,),
                              cluster_names=("x",), scratch_types=[
              plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 128), jnp.float16),
              plgpu.TMEM((128, 256), jnp.float32, collective=COLLECTIVE_FLAG),
              plgpu.Barrier(orders_tensor_core=True)])(a)
    """).replace("COLLECTIVE_FLAG", collective)


CYCLE = {
    "pkg/__init__.py": "from pkg import op\n",
    # (an import cycle with the kernel module: its names are read in a function only)
    "pkg/op.py": "from pkg import kernel\n\n\ndef collective():\n  return kernel.COLLECTIVE\n",
    "pkg/kernel.py": "import pkg\n\nCOLLECTIVE = True\n" + _matmul("pkg.op.collective()"),
}


def test_a_module_importing_the_analysed_one_is_kept_and_reads_its_current_state(tmp_path, traces):
    # tokamax's op modules import their kernel modules in a cycle: a top level that binds
    # the analysed module without reading its names is kept, and its functions read the
    # module as this analysis's text makes it
    _write(tmp_path, CYCLE)
    path = tmp_path / "pkg" / "kernel.py"
    assert [analyze_file(str(path)).findings for _ in range(2)] == [[], []]
    assert "pkg" in traces[0].interp.world.made
    assert _names(traces[1].interp.world.used) == ["pkg"] and not traces[1].interp.world.made
    assert _state(traces[0]) == _state(traces[1])
    path.write_text(path.read_text().replace("COLLECTIVE = True", "COLLECTIVE = False"))
    found = analyze_file(str(path))
    assert _names(traces[2].interp.world.used) == ["pkg"]
    assert [finding.code for finding in found.findings] == ["PLS001"]
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
    assert _report(analyze_file(str(path))) == _report(found)  # as made from scratch


def test_a_top_level_reading_a_name_the_analysed_module_binds_later_is_kept_while_it_does(tmp_path, traces):
    # in the cycle, the op module reads the kernel module's name before the kernel module
    # binds it (tokamax's attention op module reads its kernel module's `Config` so): it
    # read the name's absence, and is kept while the kernel module binds it later
    _write(tmp_path, {**CYCLE, "pkg/op.py": CYCLE["pkg/op.py"] + "\n\nCONFIG = kernel.COLLECTIVE\n"})
    path = tmp_path / "pkg" / "kernel.py"
    first, second = (analyze_file(str(path)) for _ in range(2))
    assert _names(traces[1].interp.world.used) == ["pkg"] and _report(first) == _report(second)
    # bound before the import that enters the cycle, it is read: the op module is made again
    path.write_text(path.read_text().replace("COLLECTIVE = True\n", "").replace(
        "import pkg\n", "COLLECTIVE = True\n\nimport pkg\n"))
    found = analyze_file(str(path))
    assert not traces[2].interp.world.used
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
    assert _report(analyze_file(str(path))) == _report(found) and _state(traces[3]) == _state(traces[2])
