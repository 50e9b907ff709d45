"""One process, several projects: astroid caches modules by dotted name, so `helpers.mma` of
one copy of a tree must not stand in for `helpers.mma` of another (a server with two workspace
folders; `pallas-lint` run in-process by tests), and a rewritten helper is read again. Nor may
a copy of the analysed file that an earlier analysis read stand in for its own tree."""

import os
import shutil
import textwrap

import pytest
from astroid.manager import AstroidManager

from conftest import ROOT
from oracle.markers import parse_markers
from pallas_lsp import cli
from pallas_lsp.analysis import analyze_file, analyze_source, engine
from pallas_lsp.analysis.session import Session


def _copy(tmp_path, name):
    dest = tmp_path / name
    shutil.copytree(ROOT / "tests" / "fixtures", dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _lines_and_paths(path):
    findings = analyze_file(str(path)).findings
    # the line of this file that leads to each finding (a helper module's MMA is reported there,
    # anchored at the call here)
    lines = sorted((f.anchor or f.span).line for f in findings)
    return lines, {e.span.path for f in findings for fix in f.fixes for e in fix.edits}


def test_each_copy_gets_its_own_helper_module(tmp_path):
    a, b = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    helper_b = b / "helpers" / "mma.py"
    old = "accumulate=accumulate,\n                    collective_axis=CLUSTER_AXIS)"
    helper_b.write_text(helper_b.read_text().replace(old, "accumulate=accumulate)"))
    for _ in range(2):  # back and forth
        lines, paths = _lines_and_paths(a / "helper_module.py")
        assert lines == [23, 44, 65]
        assert str(a / "helpers" / "mma.py") in paths and not any(str(b) in p for p in paths if p)
        lines, paths = _lines_and_paths(b / "helper_module.py")
        # this copy's helper issues a single-block MMA: one accumulator left to make
        # collective, and the two others now have the shape of a collective MMA's
        findings = analyze_file(str(b / "helper_module.py")).findings
        assert sorted(((f.anchor or f.span).line, f.code) for f in findings) == [
            (23, "PLS018"), (44, "PLS001"), (65, "PLS018")]
        assert lines == [23, 44, 65]
        assert not any(str(a) in p for p in paths if p)


def test_a_rewritten_helper_is_read_again(tmp_path):
    a = _copy(tmp_path, "a")
    assert _lines_and_paths(a / "helper_module.py")[0] == [23, 44, 65]
    helper = a / "helpers" / "mma.py"
    helper.write_text(helper.read_text().replace("collective=collective)", "collective=True)"))
    # no cache to clear by hand: a helper whose file changed is read again
    assert _lines_and_paths(a / "helper_module.py")[0] == [23]


def test_an_unchanged_helper_is_kept_between_analyses(tmp_path):
    a = _copy(tmp_path, "a")
    first = analyze_file(str(a / "helper_module.py"))
    kept = AstroidManager().astroid_cache["helpers.mma"]
    second = analyze_file(str(a / "helper_module.py"))
    assert AstroidManager().astroid_cache["helpers.mma"] is kept  # not built again
    assert first.findings == second.findings
    assert first.dependencies == second.dependencies == (str(a / "helpers" / "__init__.py"),
                                                          str(a / "helpers" / "mma.py"))


def test_a_root_on_sys_path_keeps_its_modules_across_a_move_to_another_root(tmp_path, monkeypatch):
    """The modules of a root the interpreter finds on `sys.path` (an installed package, as
    tokamax is in site-packages) are the same from every root: a look at another project's
    file and back keeps them, where they were read again at each move (tokamax's 92 modules,
    1.3 s). A root holding a package of the same name shadows them while it is analysed."""
    lib, other = _copy(tmp_path, "lib"), _copy(tmp_path, "other")
    monkeypatch.syspath_prepend(str(lib))
    first = analyze_file(str(lib / "helper_module.py"))
    kept = AstroidManager().astroid_cache["helpers.mma"]
    assert kept.file == str(lib / "helpers" / "mma.py")
    shadowed = analyze_file(str(other / "helper_module.py"))  # (another root, with its own `helpers`)
    assert AstroidManager().astroid_cache["helpers.mma"].file == str(other / "helpers" / "mma.py")
    assert shadowed.dependencies == (str(other / "helpers" / "__init__.py"), str(other / "helpers" / "mma.py"))
    second = analyze_file(str(lib / "helper_module.py"))
    assert first.findings == second.findings and first.dependencies == second.dependencies
    kept = AstroidManager().astroid_cache["helpers.mma"]
    elsewhere = tmp_path / "elsewhere"  # (another root, without a `helpers` of its own)
    elsewhere.mkdir()
    shutil.copy(lib / "made_arrays.py", elsewhere / "kernel.py")
    analyze_file(str(elsewhere / "kernel.py"))
    analyze_file(str(lib / "helper_module.py"))
    assert AstroidManager().astroid_cache["helpers.mma"] is kept  # not built again


def test_a_helper_rewritten_with_the_same_size_is_read_again(tmp_path):
    a = _copy(tmp_path, "a")
    assert _lines_and_paths(a / "helper_module.py")[0] == [23, 44, 65]
    helper = a / "helpers" / "mma.py"
    before = helper.stat()
    text = helper.read_text()
    helper.write_text(text.replace("collective=collective)", "collective=True      )"))
    assert helper.stat().st_size == before.st_size
    os.utime(helper, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert _lines_and_paths(a / "helper_module.py")[0] == [23]


def test_a_files_lines_are_read_again_only_when_it_changes(tmp_path):
    """Hover facts and findings about another module's code ask for its lines (byte columns to
    code points) in every analysis: the same file, unchanged, is not read and split again."""
    from pallas_lsp.analysis.source import Lines

    helper = tmp_path / "helper.py"
    helper.write_text("name = 'été'\n", encoding="utf-8")
    first = Lines.of_file(str(helper))
    assert first is not None and Lines.of_file(str(helper)) is first
    before = helper.stat()
    helper.write_text("name = 'ÉtÉ'\n", encoding="utf-8")  # (the same size)
    os.utime(helper, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    second = Lines.of_file(str(helper))
    assert second is not None and second is not first and second.lines == ["name = 'ÉtÉ'\n"]
    helper.unlink()
    assert Lines.of_file(str(helper)) is None


def test_a_helper_modules_finding_names_places_as_its_file_sees_them(tmp_path):
    """A finding shown in a helper module says 'line N' of that module and names the analysed
    file by its path from there (it once said 'line 35' of the analysed file, in the helper)."""
    a = _copy(tmp_path, "a")
    findings = analyze_file(str(a / "helper_module.py")).findings
    helper = str(a / "helpers" / "mma.py")
    messages = sorted(f.message for f in findings if f.span.path == helper)
    assert len(messages) == 2
    assert "allocated at ../helper_module.py:35 without collective=True" in messages[0]
    assert "allocated at line 17 with collective=collective" in messages[1]


def test_a_helper_modules_finding_is_reported_once_when_both_files_are_checked(tmp_path, capsys):
    """Its own analysis and its importer's find the same mixed RefUnion, and say it alike."""
    (tmp_path / "unions.py").write_text(textwrap.dedent("""\
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu


        def mixed_union():
          return plgpu.RefUnion(
              plgpu.TMEM((128, 128), jnp.float32, collective=True),
              plgpu.TMEM((128, 128), jnp.float32),
          )
        """))
    (tmp_path / "kernel.py").write_text(textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        import unions

        X = jax.ShapeDtypeStruct((128, 128), jnp.float32)


        def build(x):
          def body(x_gmem, out_gmem, u):
            del u
          return plgpu.kernel(body, out_type=X, cluster=(2,), cluster_names=("x",),
                              scratch_types=[unions.mixed_union()])(x)
        """))
    cli.main(["check", "--no-cache", "--isolated", "--exit-zero", str(tmp_path / "kernel.py"),
              str(tmp_path / "unions.py")])
    lines = [line for line in capsys.readouterr().out.splitlines() if "PLS002" in line]
    assert len(lines) == 1 and "collective: line 7; not collective: line 8" in lines[0]


def test_an_edited_but_unsaved_helper_is_read_from_the_editor(tmp_path):
    from pallas_lsp.analysis import analyze_source

    a = _copy(tmp_path, "a")
    kernel, helper = a / "helper_module.py", a / "helpers" / "mma.py"
    edited = {str(helper): helper.read_text().replace("collective=collective)", "collective=True)")}
    def lines(**options):
        findings = analyze_source(kernel.read_text(), str(kernel), **options).findings
        return sorted((f.anchor or f.span).line for f in findings)

    assert lines() == [23, 44, 65]
    assert lines(overlays=edited) == [23]
    assert lines() == [23, 44, 65]  # edit undone


# -- the analysed file, read by an earlier analysis --------------------------------------------
# A project module that imports the analysed file (even inside a function) makes an analysis
# of another file read it from the disk, and astroid keeps that copy under its name. The
# analysed file's own analysis traces the tree built from its text all the same: what a
# module imports under its name while it is analysed is that tree. JAX raises each project's
# finding where its marker is (in 0.10.2 and 0.12: `test_jax_raises_...` below).

def _placed(path):
    """(code, line, in which file: None for the analysed one, anchor line) of each finding."""
    findings = analyze_file(str(path)).findings
    return sorted((f.code, f.span.line, f.span.path and os.path.relpath(f.span.path, path.parent),
                   f.anchor and f.anchor.line) for f in findings)


def _marked(path):
    return sorted((m.code, m.line, None, None) for m in parse_markers(path))


# B (the kernel file) and the project modules beside it; A imports B's helper module (and
# nothing else, unless given)
# a 2-CTA kernel of `body` (the call, indented for a function's body)
_BUILD = """plgpu.kernel(
          {body},
          out_type=jax.ShapeDtypeStruct((128, 128), jnp.float16),
          cluster=(2,),
          cluster_names=("x",),
          scratch_types=[
              plgpu.SMEM((128, 64), jnp.float16),
              plgpu.SMEM((64, 128), jnp.float16),
              plgpu.TMEM((128, 256), jnp.float32),
              plgpu.Barrier(orders_tensor_core=True),
          ],
      )"""
_RUN = """
    @jax.named_scope("run")
    def run(a):
      {imports}
      kernel = """ + _BUILD + """
      return kernel(a)
"""
_HEAD = """
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu
"""
_BODY = """
    def body(a_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):
      del a_gmem, out_gmem
      plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x")  # PLS001
"""


def _lib(imports, body, top=""):
    return _HEAD + top + _RUN.format(imports=imports, body=body)


def _kernel(case, imports="import lib"):
    return _HEAD + f"\n    {imports}\n\n    A = jax.ShapeDtypeStruct((128, 64), jnp.float16)\n\n" + _BODY + case


PROJECTS = {
    # the helper's function imports B and builds the kernel from B's body; B's case returns it
    "imported in a function": {
        "lib.py": _lib("import kernel_b", "kernel_b.body"),
        "kernel_b.py": _kernel("\n\n    def case_b():\n      return lib.run, (A,)\n"),
    },
    # the same, B imported at the helper's top level (each imports the other)
    "imported at module level": {
        "lib.py": _lib("", "kernel_b.body", top="\n    import kernel_b\n"),
        "kernel_b.py": _kernel("\n\n    def case_b():\n      return lib.run, (A,)\n"),
    },
    # B is a package's `__init__`
    "a package": {
        "lib.py": _lib("import pkg", "pkg.body"),
        "pkg/__init__.py": _kernel("\n\n    def case_b():\n      return lib.run, (A,)\n"),
    },
    # B's case calls the helper, which calls back into B to build the kernel
    "called back": {
        "lib.py": _HEAD + """
    def outer():
      import kernel_b
      return kernel_b.make_kernel()
    """,
        "kernel_b.py": _kernel("""

    def make_kernel():
      return """ + _BUILD.format(body="body") + """


    def case_b():
      return lib.outer(), (A,)
    """),
        "kernel_a.py": """
    import lib


    def uses_the_helper():
      return lib.outer()
    """,
    },
}


def _project(directory, files):
    """Write the project; return B and A."""
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    if "kernel_a.py" not in files:
        (directory / "kernel_a.py").write_text("import lib\n")
    return next(directory / name for name in files if name not in ("lib.py", "kernel_a.py")), directory / "kernel_a.py"


@pytest.mark.parametrize("files", PROJECTS.values(), ids=PROJECTS)
def test_the_analysed_file_is_traced_from_its_own_tree(tmp_path, files):
    kernel, a = _project(tmp_path / "one", files)
    fresh = analyze_file(str(kernel))  # a new project: nothing of it read yet
    assert len(_marked(kernel)) == 1
    assert _placed(kernel) == _marked(kernel)
    for _ in range(2):  # A (which reads B from the disk), then B: B as in its first analysis
        assert analyze_file(str(a)).error is None
        assert analyze_file(str(kernel)).findings == fresh.findings
    # A first, in a new project; A's own findings are the same before and after B's analysis
    kernel, a = _project(tmp_path / "two", files)
    a_first = analyze_file(str(a))
    assert _placed(kernel) == _marked(kernel)
    assert analyze_file(str(a)).findings == a_first.findings


@pytest.mark.parametrize("files", PROJECTS.values(), ids=PROJECTS)
def test_a_directory_run_finds_what_each_file_alone_finds(tmp_path, monkeypatch, capsys, files):
    """`pallas-lint check -j 1 DIR` analyses A (or the helper module) before B in one process,
    and reports once what several of its files' analyses find alike (each file alone reports
    its own copy)."""
    monkeypatch.delenv("PALLAS_LINT_OUTPUT_FORMAT", raising=False)

    def reported(directory, path):
        monkeypatch.chdir(directory)
        assert cli.main(["check", "--no-cache", "-j", "1", path]) in (0, 1)
        return [line for line in capsys.readouterr().out.splitlines() if ": PLS" in line]

    kernel, _ = _project(tmp_path / "all", files)
    names = sorted(path.relative_to(tmp_path / "all").as_posix() for path in (tmp_path / "all").rglob("*.py"))
    together = reported(tmp_path / "all", ".")
    alone = [line for number, name in enumerate(names)  # each in a new project: the first analysis
             for line in reported(_project(tmp_path / str(number), files)[1].parent, name)]
    assert sorted(together) == sorted(set(alone))
    assert any(line.startswith(f"{kernel.relative_to(tmp_path / 'all').as_posix()}:12:") for line in together)


@pytest.mark.parametrize("name", [name for name, files in PROJECTS.items() if "kernel_b.py" in files])
def test_jax_raises_each_projects_finding_where_it_is_marked(tmp_path, name):
    pytest.importorskip("jax")
    from oracle.runner import run_fixture

    kernel, _ = _project(tmp_path, PROJECTS[name])
    result = run_fixture(kernel)
    assert result["error"] is None, result
    assert [((case["trace"] or {}).get("code"), (case["trace"] or {}).get("line")) for case in result["cases"]] == [
        (code, line) for code, line, _, _ in _marked(kernel)]


def test_the_package_is_the_module_jax_runs():
    # the oracle runs a file with its own directory first on `sys.path`, where a package's
    # `__init__` cannot import the modules beside its package: its text is that of the
    # module JAX confirms above (and JAX, run by hand with the project root on `sys.path`,
    # raises at the same line in both versions)
    assert PROJECTS["a package"]["pkg/__init__.py"] == PROJECTS["imported in a function"]["kernel_b.py"]


def test_an_editors_session_traces_the_analysed_file_from_its_own_tree(tmp_path):
    # the server's session rebuilds only the changed definitions of a file it keeps
    session = Session(keep_trees=True)
    kernel, a = _project(tmp_path, PROJECTS["imported in a function"])
    analysed = []
    for text in (kernel.read_text(), kernel.read_text() + "\n", kernel.read_text() + "\n"):
        analyze_source(a.read_text(), str(a), session=session)
        analysed.append(analyze_source(text, str(kernel), session=session).findings)
    assert [[(f.code, f.span.line, f.span.path) for f in findings] for findings in analysed] == [
        [("PLS001", 12, None)]] * 3
    assert session.trees is not None and session.trees.reused  # the last build reused definitions


def test_what_other_modules_import_under_the_analysed_name_is_the_analysed_tree(tmp_path, monkeypatch):
    kernel, a = _project(tmp_path, PROJECTS["imported in a function"])
    analyze_file(str(a))
    from_disk = AstroidManager().astroid_cache["kernel_b"]  # read from the disk, and kept
    seen = []
    run_rules = engine._run_rules

    def recording(module, *args):
        seen.append(AstroidManager().ast_from_module_name("kernel_b") is module)
        return run_rules(module, *args)

    monkeypatch.setattr(engine, "_run_rules", recording)
    assert analyze_file(str(kernel)).findings
    assert seen == [True]
    # the analysed tree is not kept: the copy from the disk is back, for the other files' analyses
    assert AstroidManager().astroid_cache["kernel_b"] is from_disk
