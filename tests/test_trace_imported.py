"""The runs of an imported module's functions that a decorator hands to code we do not read
(`trace.reuse.EscapedRun`): kept across analyses and replayed while their world is pristine,
with the report, the sites, the steps and the functions run exactly those of making them.

Where the finding comes only from such a run, through state the analysed file wrote into the
module (`fixtures/registry_module.py`, confirmed by JAX in tests/test_oracle.py), the run is
made in every analysis."""

import importlib.util
import textwrap
from pathlib import Path

from astroid import nodes

from conftest import ROOT
from pallas_lsp.analysis import analyze_file, analyze_source
from pallas_lsp.analysis.trace import reuse, world

FIXTURES = ROOT / "tests" / "fixtures"


def _where(node):
    return (node.root().name, node.lineno, node.col_offset) if isinstance(node, nodes.NodeNG) else None


def _guard(guard):
    return sorted((var.label, repr(var.key[0]), value) for var, value in guard)


def _sites(trace):
    """The trace's sites, comparable across analyses (the analysed file's nodes are new each time)."""
    return [(site.kind, _where(site.node), _guard(site.guard), tuple(_where(node) for node in site.chain),
             _where(site.kernel), tuple(sorted(site.arguments))) for site in trace.interp.sites]


def _state(trace):
    interp = trace.interp
    return (_sites(trace), sorted(map(_where, interp.executed)), sorted(map(_where, interp.known_calls)),
            interp._steps, trace.exhausted)


def _report(result):
    """Findings (with their fixes and related places), hover facts, error."""
    return result.findings, [(fact.span, fact.markdown) for fact in result.facts], result.error


def _write(directory, files):
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))


KERNEL = """
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    import lib

    OUT = jax.ShapeDtypeStruct((128, 128), jnp.float16)


    def body(a_gmem, out_gmem, acc_tmem):
      del a_gmem, out_gmem, acc_tmem


    def case_kernel():
      kernel = plgpu.kernel(body, out_type=OUT, scratch_types=[plgpu.TMEM((128, 128), jnp.float32)])
      return kernel, (OUT,)
"""


def test_the_registered_body_is_found_in_every_analysis(traces):
    path = str(FIXTURES / "registry_module.py")
    for _ in range(2):
        assert [(f.code, f.span.line) for f in analyze_file(path).findings] == [("PLS001", 24)]
        assert traces[-1].replayed == 0  # the file wrote to the registry: the world is its too
    assert not analyze_file(str(FIXTURES / "registry_module_clean.py")).findings


def test_a_large_project_module_is_replayed_as_it_was_run(tmp_path, traces):
    spec = importlib.util.find_spec("jax")
    jax_dir = Path(list(spec.submodule_search_locations)[0])
    parts = ["".join(line for line in path.read_text().splitlines(True) if not line.startswith("from __future__"))
             for path in sorted((jax_dir / "experimental" / "pallas" / "ops" / "gpu").glob("*.py"))]
    (tmp_path / "kernels_lib.py").write_text("from __future__ import annotations\n" + "\n".join(parts))
    text = (jax_dir / "experimental" / "pallas" / "ops" / "gpu" / "blackwell_matmul_mgpu.py").read_text()
    text += "\n\nimport kernels_lib\n\n\ndef uses_the_library():\n  return kernels_lib.main(None)\n"
    kernel = str(tmp_path / "kernel.py")
    made = [analyze_source(text, kernel, want_facts=True) for _ in range(2)]
    first, second = traces
    assert first.replayed == 0 and second.replayed > 10  # jit, custom_vjp, named_scope, ... and their closures
    assert _report(made[0]) == _report(made[1])
    assert _state(first) == _state(second)


def test_a_function_that_writes_its_module_state_is_made_every_time(tmp_path, traces):
    _write(tmp_path, {"lib.py": """
        import jax

        CALLS = []


        @jax.named_scope("pure")
        def pure(x):
          return [x]


        @jax.named_scope("record")
        def record(x):
          CALLS.append(x)
    """, "kernel.py": KERNEL})
    reports = [_report(analyze_file(str(tmp_path / "kernel.py"))) for _ in range(2)]
    assert reports[0] == reports[1] and reports[0][2] is None
    first, second = traces
    # `record` wrote to CALLS, which its module made: no run is kept after it, and none made
    # before it either (`pure`'s, whose sites could show what was written later)
    assert (first.replayed, second.replayed) == (0, 0)
    assert _state(first) == _state(second)
    assert not second.interp.world_clean


def test_a_run_whose_escaped_closure_was_never_run_is_replayed_and_the_closure_run(tmp_path, traces):
    library = """
        import jax


        def make_inner():
          def inner(y):
            return y
          return inner


        @jax.named_scope("outer")
        def outer(x):
          return jax.pure_callback(make_inner(), x, x)
    """
    calls_inner = textwrap.dedent(KERNEL) + "\n\ndef uses():\n  return lib.make_inner()(1)\n"
    _write(tmp_path, {"lib.py": library, "calls.py": calls_inner, "plain.py": KERNEL})
    plain = str(tmp_path / "plain.py")
    fresh = _report(analyze_file(plain))
    assert fresh[2] is None
    fresh_state = _state(traces[-1])
    reuse.KEPT_RUNS.clear()
    # calls.py runs `inner` itself, so the closure `outer` lets escape is not run after it:
    # `outer`'s run is kept without it. plain.py, which never runs `inner`, replays `outer`'s
    # run and runs the closure at its turn, as making the run would (the closure's run is
    # not kept: each such replay runs it)
    assert not analyze_file(str(tmp_path / "calls.py")).error
    restarts = reuse.KEPT_RUNS.restarts
    for _ in range(2):
        assert _report(analyze_file(plain)) == fresh
        assert reuse.KEPT_RUNS.restarts == restarts and traces[-1].replayed == 1
        assert _state(traces[-1]) == fresh_state


def test_a_run_that_reads_the_analysed_file_is_made_every_time(tmp_path, traces):
    # lib imports the file being analysed: `outer` reads its names (they are its text's), so
    # its run is made in every analysis; `pure`, which does not, is replayed
    library = """
        import jax

        import kernel


        @jax.named_scope("outer")
        def outer(x):
          return kernel.body(x, x, x)


        @jax.named_scope("pure")
        def pure(x):
          return [x]
    """
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "kernel.py": KERNEL}) == 1
    assert traces[0].replayed == 0 and traces[-1].interp.world_clean


def test_a_module_whose_top_level_reads_the_analysed_file_is_made_from_its_text(tmp_path, traces):
    # lib's state holds what the analysed file's text made: the runs of its functions are made
    # in every analysis; those of a module that does not read it (other) are replayed. (lib
    # runs while the file's top level is at `import lib`: it reads a name bound before that;
    # one bound later is not there yet, and lib then reads its absence: test_trace_world)
    library = """
        import jax

        import kernel

        import other

        NUMPY = kernel.jnp


        @jax.named_scope("pure")
        def pure(x):
          return [x]
    """
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "other.py": DECORATED, "kernel.py": KERNEL}) == 1
    assert sorted(module.name for module in traces[-1].interp.from_text) == ["kernel", "lib"]


def test_a_run_that_imports_a_project_module_is_made_every_time(tmp_path, traces):
    # on replay that module could be the analysed file, whose code the run would run, or have
    # changed since: such a run is not kept (a stub or library module it loads is loaded again)
    _write(tmp_path, {"lib.py": """
        import jax


        @jax.named_scope("outer")
        def outer(x):
          import other
          return other.VALUE
    """, "other.py": "VALUE = 1\n", "kernel.py": KERNEL})
    reports = [_report(analyze_file(str(tmp_path / "kernel.py"))) for _ in range(2)]
    assert reports[0] == reports[1] and reports[0][2] is None
    assert [trace.replayed for trace in traces] == [0, 0]
    assert _state(traces[0]) == _state(traces[1])


def test_a_closure_writing_to_what_its_run_made_keeps_no_run(tmp_path, traces):
    # `inner`, let escape by `outer`'s run and run after it, appends to `box`, which that run
    # made and its sites could show: neither run is kept
    _write(tmp_path, {"lib.py": """
        import jax


        def make():
          box = []

          def inner(y):
            box.append(y)
          return inner, box


        @jax.named_scope("outer")
        def outer(x):
          inner, box = make()
          jax.pure_callback(inner, x)
          return box
    """, "kernel.py": KERNEL})
    reports = [_report(analyze_file(str(tmp_path / "kernel.py"))) for _ in range(2)]
    assert reports[0] == reports[1] and reports[0][2] is None
    assert [trace.replayed for trace in traces] == [0, 0]
    assert traces[0]._tainted and traces[1].interp.world_clean
    assert _state(traces[0]) == _state(traces[1])


def test_a_write_to_the_world_after_a_replay_starts_over(tmp_path, traces):
    # plain.py keeps `outer`'s run; writes.py replays it, then its own decorated function
    # writes to the module's list, which the replayed sites could show: it starts over
    library = """
        import jax

        CONFIG = [1]


        @jax.named_scope("outer")
        def outer(x):
          return CONFIG
    """
    writes = textwrap.dedent(KERNEL) + (  # `late` runs after the entry points, as `outer` does
        "\n\ndef setup():\n  @jax.named_scope('late')\n  def late(x):\n    lib.CONFIG.append(x)\n")
    _write(tmp_path, {"lib.py": library, "plain.py": KERNEL, "writes.py": writes})
    fresh = _report(analyze_file(str(tmp_path / "writes.py")))
    assert fresh[2] is None
    fresh_state = _state(traces[-1])
    reuse.KEPT_RUNS.clear()
    assert not analyze_file(str(tmp_path / "plain.py")).error
    restarts = reuse.KEPT_RUNS.restarts
    assert _report(analyze_file(str(tmp_path / "writes.py"))) == fresh
    assert reuse.KEPT_RUNS.restarts == restarts + 1
    assert _state(traces[-1]) == fresh_state


# `make` makes `inner`; `outer`'s run lets one escape, and `late` (which it lets escape too)
# calls another. calls.py calls `make(1)(2)` itself: when its trace comes to the escaped
# `inner`, the function has run, so its run is not kept with `outer`'s. kernel.py replays
# `outer`'s run but never ran `inner`: a trace making the run would run it there
HANDS_ON = """
    import jax


    def make(x):
      box = []

      def inner(y):
        {inner}
        return box
      return inner


    @jax.named_scope("outer")
    def outer(x):
      def late(y):
        return make(y)(y)
      jax.pure_callback(make(x), x, x)
      jax.pure_callback(late, x, x)
      return x
"""


def _after_calls(tmp_path, traces, inner):
    """kernel.py analysed fresh, then again after calls.py kept `outer`'s run: the report
    and state of both, and how often the second trace started over."""
    calls = textwrap.dedent(KERNEL) + "\n\ndef use():\n  return lib.make(1)(2)\n"
    _write(tmp_path, {"lib.py": HANDS_ON.format(inner=inner), "kernel.py": KERNEL, "calls.py": calls})
    fresh = _report(analyze_file(str(tmp_path / "kernel.py")))
    fresh_state = _state(traces[-1])
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
    assert not analyze_file(str(tmp_path / "calls.py")).error
    restarts = reuse.KEPT_RUNS.restarts
    report = _report(analyze_file(str(tmp_path / "kernel.py")))
    assert report == fresh and fresh[2] is None
    assert _state(traces[-1]) == fresh_state
    return reuse.KEPT_RUNS.restarts - restarts, traces[-1].replayed


def test_a_closure_whose_run_was_not_kept_runs_at_its_turn(tmp_path, traces):
    assert _after_calls(tmp_path, traces, "del y") == (0, 2)


def test_a_closure_run_at_its_turn_that_writes_to_what_the_kept_run_made_starts_over(tmp_path, traces):
    # `box` is the kept run's (calls.py's trace made it): every replay of the run shows it
    assert _after_calls(tmp_path, traces, "box.append(y)") == (1, 0)


def _replays_twice(tmp_path, traces, files, analysed="kernel.py"):
    """Two analyses of `analysed`: the same report and state; the second's replays."""
    _write(tmp_path, files)
    reports = [_report(analyze_file(str(tmp_path / analysed))) for _ in range(2)]
    assert reports[0] == reports[1] and reports[0][2] is None
    assert _state(traces[-2]) == _state(traces[-1])
    return traces[-1].replayed


DECORATED = """
    import jax


    @jax.named_scope("outer")
    def outer(x):
      return [x]
"""


def test_a_module_imported_inside_a_try_is_replayed(tmp_path, traces):
    # Python runs a module's top level once, on its own, wherever the first import of it is:
    # an optional import in a `try` leaves the same state as a plain one
    kernel = textwrap.dedent(KERNEL).replace("import lib\n", "try:\n  import lib\nexcept ImportError:\n  lib = None\n")
    assert _replays_twice(tmp_path, traces, {"lib.py": DECORATED, "kernel.py": kernel}) == 1


def test_a_namespace_package_is_the_same_module_in_every_analysis(tmp_path, traces):
    # astroid builds a package without `__init__.py` anew at each import; the kept runs are
    # keyed by the modules they saw
    (tmp_path / "pkg").mkdir()
    kernel = textwrap.dedent(KERNEL).replace("import lib\n", "from pkg import lib\n")
    assert _replays_twice(tmp_path, traces, {"pkg/lib.py": DECORATED, "kernel.py": kernel}) == 1
    # an `__init__.py` made later makes it a regular package: the next analysis reads it
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg.lib import outer as OUTER\n")
    assert not analyze_file(str(tmp_path / "kernel.py")).error
    assert [Path(module.file).name for module in traces[-1].interp.modules if module.name == "pkg"] == ["__init__.py"]


def test_a_nonlocal_of_a_call_frame_keeps_the_run(tmp_path, traces):
    # `nonlocal` rebinds a name of the frame of `outer`'s call, which the run made: the world
    # its top level made is unchanged (a `global` rebinds the module's own names: see below)
    library = """
        import jax


        @jax.named_scope("outer")
        def outer(x):
          count = 0

          def bump():
            nonlocal count
            count += 1
          bump()
          return count
    """
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "kernel.py": KERNEL}) == 1


def test_a_global_of_a_module_function_stops_replays(tmp_path, traces):
    library = """
        import jax

        COUNT = 0


        @jax.named_scope("outer")
        def outer(x):
          global COUNT
          COUNT += 1
          return COUNT
    """
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "kernel.py": KERNEL}) == 0
    assert not traces[-1]._pristine()


def test_a_closure_an_earlier_kept_run_made_is_kept_with_the_run_that_hands_it_on(tmp_path, traces):
    # `outer`'s run makes `to_host` and lets `bwd` escape; `bwd`'s run hands `to_host` on (as
    # tokamax's `Op.__call__` makes `is_array` for its `bwd`): all three runs replay
    library = """
        import jax


        @jax.named_scope("outer")
        def outer(x):
          to_host = lambda y: y

          def bwd(r):
            return jax.pure_callback(to_host, r, r)
          return jax.pure_callback(bwd, x, x)
    """
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "kernel.py": KERNEL}) == 3


def test_a_closure_its_own_run_ran_is_not_needed_again(tmp_path, traces):
    # the run calls `helper` and lets it escape: the trace passes over a function it ran
    library = """
        import jax


        @jax.named_scope("outer")
        def outer(x):
          def helper(y):
            return y
          helper(x)
          return jax.pure_callback(helper, x, x)
    """
    restarts = reuse.KEPT_RUNS.restarts
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "kernel.py": KERNEL}) == 1
    assert reuse.KEPT_RUNS.restarts == restarts


def test_a_function_the_file_also_lets_escape_is_run_as_the_kept_run_made_it(tmp_path, traces):
    # `make_inner` lets a new `inner` escape at each call: the file's own entry point makes one
    # before `outer`'s run makes its own (as tokamax's tests and `_fwd` both make `encode`).
    # A function is run once, whichever closure made it: `outer`'s, so that its run is kept
    # with the run of `inner` (the first one made, the file's, would leave `outer`'s unrun)
    library = """
        import jax


        def make_inner(x):
          def inner(y):
            return y
          return jax.pure_callback(inner, x, x)


        @jax.named_scope("outer")
        def outer(x):
          return make_inner(x)
    """
    kernel = textwrap.dedent(KERNEL) + "\n\ndef uses(x):\n  return lib.make_inner(x)\n"
    assert _replays_twice(tmp_path, traces, {"lib.py": library, "kernel.py": kernel}) == 2


def test_what_a_module_made_from_the_text_writes_into_another_is_no_longer_the_world(tmp_path, traces):
    # lib reads the analysed file and puts what it read into other's registry: other's state
    # is the text's too, and the run of `outer`, which returns it, is made in every analysis
    # (`jnp`: bound before the file's `import lib`)
    _write(tmp_path, {"other.py": """
        import jax

        REGISTRY = []


        @jax.named_scope("outer")
        def outer(x):
          return REGISTRY
    """, "lib.py": """
        import kernel
        import other

        other.REGISTRY.append(kernel.jnp)
    """, "kernel.py": KERNEL})
    reports = [_report(analyze_file(str(tmp_path / "kernel.py"))) for _ in range(2)]
    assert reports[0] == reports[1] and reports[0][2] is None
    assert [trace.replayed for trace in traces] == [0, 0]
    assert not traces[-1]._pristine()


def test_another_file_analysed_between_keeps_the_world(tmp_path, traces):
    # lib imports other_kernel; analysing other_kernel builds its tree from its text, and the
    # copy read from the disk goes back afterwards: the next analysis of kernel.py sees the
    # same modules, and replays
    library = textwrap.dedent(DECORATED) + "\nimport other_kernel\n"
    _write(tmp_path, {"lib.py": library, "kernel.py": KERNEL, "other_kernel.py": KERNEL})
    reports = [_report(analyze_file(str(tmp_path / name))) for name in ("kernel.py", "other_kernel.py", "kernel.py")]
    assert reports[0] == reports[2] and reports[0][2] is None
    assert traces[-1].replayed == 1 and traces[-1].kept_sites == {id(site) for site in traces[-1].interp.sites
                                                                   if site.node.root().name == "lib"}
    assert _state(traces[0]) == _state(traces[-1])
