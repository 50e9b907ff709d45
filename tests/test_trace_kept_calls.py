"""Calls into imported modules' functions kept between traces and replayed
(`trace.kept_calls`): the report, the sites, the functions run and the steps are exactly those
of making them, in the next trace of the file (an editor's) and in another file's (a
command-line run's); a call whose objects later code writes to is not kept."""

import textwrap

from pallas_lsp.analysis import analyze_file, analyze_source
from pallas_lsp.analysis.session import Session
from pallas_lsp.analysis.trace import reuse, world
from test_trace_imported import _report, _state

KERNEL = """
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    import ops

    OUT = jax.ShapeDtypeStruct((128, 128), jnp.float16)


    def body(a_gmem, out_gmem, acc_tmem):
      del a_gmem, out_gmem, acc_tmem


    def build(x):
      return plgpu.kernel(body, out_type=OUT, scratch_types=[plgpu.TMEM((128, 128), jnp.float32)])(x)
"""

# The op hands both kernels the same unknown arguments, and runs the analysed file's: its run
# is made in every trace, and the call into `heavy` in it is what is kept.
OPS = """
    import jax

    import heavy
    import kernel


    @jax.named_scope("fwd")
    def fwd(x, use_heavy):
      fn = heavy.build if use_heavy else kernel.build
      fn(x)
"""

HEAVY = """
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    OUT = jax.ShapeDtypeStruct((128, 128), jnp.float16)


    class Box:
      pass


    def make():
      return Box()


    def body(a_gmem, out_gmem, acc_tmem):
      del a_gmem, out_gmem, acc_tmem


    def build(x):
      make()
      acc = plgpu.TMEM((128, 128), jnp.float32, collective=True)
      return plgpu.kernel(body, out_type=OUT, scratch_types=[acc], cluster=(2,))(x)
"""


def _write(directory, files):
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))


def _edits(path, count):
    """An editor's session: the file analysed again after each edit (a statement added at the
    end of `build`, which the op's run calls: that run is made again, not replayed as a unit
    of the session, and the call into `heavy` in it is what may be replayed)."""
    session = Session(keep_trees=True)
    text = path.read_text()
    reports = []
    for index in range(count):
        text = text.rstrip("\n") + f"\n  edit_{index} = {index}\n"
        reports.append(_report(analyze_source(text, str(path), want_facts=True, session=session)))
    return reports


def test_a_call_that_does_not_reach_the_file_is_replayed_as_it_was_run(tmp_path, traces):
    _write(tmp_path, {"kernel.py": KERNEL, "ops.py": OPS, "heavy.py": HEAVY})
    reports = _edits(tmp_path / "kernel.py", 3)
    first, second, third = traces
    assert first.keeper.replayed == 0 and second.keeper.replayed >= 1 and third.keeper.replayed >= 1
    assert reports[0] == reports[1] == reports[2] and reports[0][2] is None
    assert _state(first) == _state(second) == _state(third)


def test_a_call_whose_objects_later_code_writes_to_is_not_kept(tmp_path, traces):
    # `make()` again in the op finds the Box that `build`'s run made in the call memo, and
    # writes to it: a replay of `build` would hold that Box as written from its start
    ops = OPS.replace("fn = heavy.build if use_heavy else kernel.build\n      fn(x)",
                      "heavy.build(x)\n      kernel.build(x)")
    _write(tmp_path, {"kernel.py": KERNEL, "ops.py": ops + "      box = heavy.make()\n      box.size = 1\n",
                      "heavy.py": HEAVY})
    reports = _edits(tmp_path / "kernel.py", 2)
    assert reports[0] == reports[1]
    assert [trace.keeper.replayed for trace in traces] == [0, 0]
    assert _state(traces[0]) == _state(traces[1])
    _write(tmp_path, {"ops.py": ops})  # (without the write, the same call is kept)
    traces.clear()
    _edits(tmp_path / "kernel.py", 2)
    assert traces[1].keeper.replayed >= 1


def test_a_call_kept_in_one_files_trace_is_replayed_in_anothers(tmp_path, traces):
    # both kernels are the op's, and `heavy` imports neither: its module is the same in both
    # traces (`world`), and so is the call into it (whatever else each trace loaded)
    ops = OPS.replace("import kernel", "import kernel\n    import other").replace(
        "fn = heavy.build if use_heavy else kernel.build\n      fn(x)",
        "heavy.build(x)\n      kernel.build(x)\n      other.build(x)")
    _write(tmp_path, {"kernel.py": KERNEL, "other.py": KERNEL, "ops.py": ops, "heavy.py": HEAVY})
    analyze_file(str(tmp_path / "kernel.py"))
    replayed = _report(analyze_file(str(tmp_path / "other.py")))
    assert traces[1].keeper.replayed >= 1 and replayed[2] is None
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
    assert _report(analyze_file(str(tmp_path / "other.py"))) == replayed
    assert traces[2].keeper.replayed == 0 and _state(traces[2]) == _state(traces[1])


def test_the_sites_a_replayed_call_adds_are_not_reported_here(tmp_path, traces):
    # the call ran no code of the file, so no finding here comes from its sites: the kernel
    # rules pass over its kernel run (`Trace.kept_sites`, as for a replayed run)
    _write(tmp_path, {"kernel.py": KERNEL, "ops.py": OPS, "heavy.py": HEAVY})
    _edits(tmp_path / "kernel.py", 2)
    first, second = traces
    assert second.keeper.replayed >= 1
    for trace, kept in ((first, False), (second, True)):
        heavy = [site for site in trace.sites("kernel") if site.node.root().name == "heavy"]
        assert heavy and all((id(site) in trace.kept_sites) is kept for site in heavy)
