"""The flake8 plugin's result cache (`pallas_lsp.cache`, shared with `pallas-lint`): a cached
answer is exactly the fresh one, through flake8 itself, and never a wrong one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT, TESTS

from pallas_lsp import cache

KERNEL = (ROOT / "examples" / "collective_matmul.py").read_text()
# flake8 runs in a fresh interpreter, which says at its exit whether astroid was imported
PROBE = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('ASTROID=%s' % ('astroid' in sys.modules)));"
         "from flake8.main import cli; sys.exit(cli.main())")


def flake8(cwd, *args, stdin=None):
    result = subprocess.run([sys.executable, "-c", PROBE, "--select=PLS", *args], cwd=cwd, input=stdin,
                            capture_output=True, text=True, timeout=300)
    assert "failed during execution" not in result.stderr, result.stderr
    assert "ASTROID=" in result.stderr, result.stderr
    return result


def lines(result):
    """flake8's report, in an order that does not depend on its processes (`-j`); whether
    astroid was imported is asked of runs in one process (`-j1`, or one file)."""
    return sorted(result.stdout.splitlines())


def imported_astroid(result):
    return "ASTROID=True" in result.stderr


def _age(directory, seconds=60.0):
    """Files written by the test a minute ago: `cache.store` does not trust a dependency
    modified during the analysis or just before it."""
    then = time.time() - seconds
    for path in directory.rglob("*.py"):
        os.utime(path, (then, then))


@pytest.fixture
def project(tmp_path):
    """The fixtures (kernels with and without findings, helper modules they import) and a
    kernel whose findings flake8 silences with `# noqa`."""
    tree = tmp_path / "project"
    shutil.copytree(TESTS / "fixtures", tree)
    (tree / "noqa_kernel.py").write_text(
        KERNEL.replace('collective_axis="x")  # PLS001', 'collective_axis="x")  # noqa: PLS001'))
    (tree / "pyproject.toml").write_text("[tool.pallas-lint]\n")
    _age(tree)
    return tree


def _entries(directory):
    return sorted(path for path in directory.rglob("*.json") if cache.DEPENDENCIES not in path.parts)


def test_cached_output_is_the_fresh_output_over_the_fixtures(project):
    fresh = flake8(project, "-j1", "--pallas-no-cache", ".")
    assert not (project / cache.DIRECTORY).exists()  # --pallas-no-cache writes nothing
    assert "noqa_kernel.py:51:13: PLS002" in fresh.stdout and "noqa_kernel.py:25" not in fresh.stdout
    assert len(lines(fresh)) > 50
    first = flake8(project, "-j1", ".")  # on by default; beside the pyproject.toml
    entries = _entries(project / cache.DIRECTORY)
    assert entries and all(json.loads(entry.read_text()) for entry in entries)
    again = flake8(project, "-j1", ".")
    assert lines(first) == lines(again) == lines(fresh)
    assert imported_astroid(first) and not imported_astroid(again)  # every file answered from the cache
    assert first.returncode == again.returncode == fresh.returncode == 1


def test_processes_writing_at_once(project):
    """flake8 -j: several processes write entries at once; the results are those of a fresh
    serial run, then from the cache."""
    fresh = flake8(project, "-j1", "--pallas-no-cache", ".")
    first = flake8(project, "-j2", ".")
    again = flake8(project, "-j2", ".")
    assert lines(first) == lines(again) == lines(fresh)
    assert not list((project / cache.DIRECTORY).rglob("*.tmp"))


def test_a_changed_imported_module_is_analysed_again(project):
    before = flake8(project, "helper_module.py")
    assert "helper_module.py:23:3: PLS001" in before.stdout
    helper = project / "helpers" / "mma.py"
    helper.write_text(helper.read_text().replace("collective_axis=CLUSTER_AXIS", "collective_axis=None"))
    _age(project, 30.0)  # an older time, as a copy from elsewhere would have: the size changed
    after = flake8(project, "helper_module.py")
    fresh = flake8(project, "--pallas-no-cache", "helper_module.py")
    assert imported_astroid(after)
    assert lines(after) == lines(fresh) != lines(before)
    assert not imported_astroid(flake8(project, "helper_module.py"))


def test_changed_settings_are_a_miss(project):
    flake8(project, "kernel_error_as_case.py", "collective_axis.py")
    ignoring = flake8(project, "--pallas-ignore=PLS001", "collective_axis.py")
    assert lines(ignoring) == lines(flake8(project, "--pallas-no-cache", "--pallas-ignore=PLS001",
                                           "collective_axis.py"))
    (project / "pyproject.toml").write_text('[tool.pallas-lint]\nignore = ["PLS0"]\n')
    assert flake8(project, "collective_axis.py").stdout == ""


def test_a_torn_or_foreign_entry_is_a_miss(project):
    both = ("-j1", "helper_module.py", "collective_axis.py")
    fresh = flake8(project, "--pallas-no-cache", *both)
    flake8(project, *both)
    entries = _entries(project / cache.DIRECTORY)
    assert len(entries) == 2
    entries[0].write_text(entries[0].read_text()[:40])  # cut short
    record = json.loads(entries[1].read_text())
    record["findings"] = [{"code": "PLS001"}]  # whole JSON, not an entry
    entries[1].write_text(json.dumps(record))
    again = flake8(project, *both)
    assert lines(again) == lines(fresh) and imported_astroid(again)
    again = flake8(project, *both)  # the entries written again
    assert lines(again) == lines(fresh) and not imported_astroid(again)


def test_standard_input_is_never_cached(tmp_path):
    result = flake8(tmp_path, "-", stdin=KERNEL)
    assert "stdin:25:13: PLS001" in result.stdout
    assert not (tmp_path / cache.DIRECTORY).exists()


def test_no_cache_from_flake8_configuration_and_cache_dir(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    (tmp_path / "setup.cfg").write_text("[flake8]\npallas-no-cache = true\n")
    assert "kernel.py:25:13: PLS001" in flake8(tmp_path, "kernel.py").stdout
    assert not (tmp_path / cache.DIRECTORY).exists()
    (tmp_path / "setup.cfg").write_text("[flake8]\npallas-cache-dir = elsewhere\n")
    flake8(tmp_path, "kernel.py")
    assert _entries(tmp_path / "elsewhere") and not (tmp_path / cache.DIRECTORY).exists()
    help_text = subprocess.run([sys.executable, "-m", "flake8", "--help"], capture_output=True, text=True,
                               check=True).stdout
    assert "--pallas-no-cache" in help_text and "--pallas-cache-dir" in help_text


def test_a_budget_hit_is_not_kept(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    for _ in range(2):
        result = flake8(tmp_path, "--pallas-budget=0.000001", "kernel.py")
        assert result.stdout.startswith("kernel.py:1:1: PLS000 analysis budget"), result.stdout
    assert not _entries(tmp_path / cache.DIRECTORY)


def test_shared_with_pallas_lint(project):
    """One directory, entries of each frontend's own kind: neither answers for the other."""
    lint = [sys.executable, "-c", "import sys; from pallas_lsp.cli import main; sys.exit(main())",
            "check", "--exit-zero", "-q", "-j", "1", "noqa_kernel.py"]
    checked = subprocess.run(lint, cwd=project, capture_output=True, text=True, check=True).stdout
    assert "PLS001" not in checked and "PLS002" in checked  # pallas-lint applies noqa itself
    flaked = flake8(project, "noqa_kernel.py")
    assert imported_astroid(flaked) and lines(flaked) == ["noqa_kernel.py:51:13: PLS002 " + lines(flaked)[0]
                                                          .split(" PLS002 ", 1)[1]]
    assert len(_entries(project / cache.DIRECTORY / cache.__version__)) == 3  # two entries and the index
    assert subprocess.run(lint, cwd=project, capture_output=True, text=True, check=True).stdout == checked
    assert lines(flake8(project, "noqa_kernel.py")) == lines(flaked)


def test_a_dependency_changed_during_the_analysis_is_not_kept(tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text("x = 1\n")
    started = time.time() - 10
    assert cache.store(tmp_path / "c", "ab" * 32, [], None, 0, (str(helper),), started) is None
    assert not _entries(tmp_path / "c")
    _age(tmp_path)
    assert cache.store(tmp_path / "c", "ab" * 32, [], None, 0, (str(helper),), time.time()) is not None
    assert cache.load(tmp_path / "c", "ab" * 32) is not None


def test_a_kernel_whose_rules_come_through_its_imports_follows_them(tmp_path, monkeypatch, capsys):
    """A file with a trigger word but none of the identifiers it needs: the rules its project
    imports let through depend on them, for both frontends (the prefilter's walk of its
    imports is among an entry's dependencies)."""
    from pallas_lsp import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "main.py").write_text("# uses TMEM through helpers\nfrom helpers import build\n\n\n"
                                      "def run(a, b):\n    return build(a, b)\n")
    (tmp_path / "helpers.py").write_text("def build(a, b):\n    return a\n")
    _age(tmp_path)
    assert cli.main(["check", "-q", "-j", "1", "main.py"]) == 0
    assert flake8(tmp_path, "main.py").stdout == ""
    (tmp_path / "helpers.py").write_text(KERNEL + "\n\ndef build(a, b):\n    return matmul(a, b)\n")
    _age(tmp_path, 30.0)
    capsys.readouterr()
    cli.main(["check", "--exit-zero", "-q", "-j", "1", "--no-cache", "main.py"])
    fresh = capsys.readouterr().out
    assert "helpers.py:25:13: PLS001" in fresh  # pallas-lint reports where the MMA is
    cli.main(["check", "--exit-zero", "-q", "-j", "1", "main.py"])
    assert capsys.readouterr().out == fresh
    flaked = flake8(tmp_path, "main.py")
    assert "main.py:6:12: PLS001" in flaked.stdout
    assert lines(flaked) == lines(flake8(tmp_path, "--pallas-no-cache", "main.py"))


def test_another_jax_is_a_miss(tmp_path, monkeypatch):
    """The analysis reads JAX's kernel building blocks from the installed source: an entry is
    the verdict of one installed jax (its `version.py` as it is), for both frontends."""
    import importlib.machinery
    import importlib.util

    from pallas_lsp.analysis import Settings

    package = tmp_path / "jax"
    package.mkdir()
    (package / "version.py").write_text('_version = "0.10.2"\n')
    spec = importlib.machinery.ModuleSpec("jax", None, is_package=True)
    spec.submodule_search_locations = [str(package)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: spec if name == "jax" else None)
    cache.installed_jax.cache_clear()
    try:
        before = cache.key("kernel.py", b"x = 1\n", Settings(), cache.FLAKE8)
        (package / "version.py").write_text('_version = "0.10.30"\n')
        cache.installed_jax.cache_clear()
        assert cache.key("kernel.py", b"x = 1\n", Settings(), cache.FLAKE8) != before
    finally:
        monkeypatch.undo()
        cache.installed_jax.cache_clear()
