"""The command line's result cache: unchanged files are not analysed again; a change to the
file, its settings or a project module it imports is seen."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import TESTS

from pallas_lsp import batch, cache, cli


@pytest.fixture
def tree(tmp_path, monkeypatch):
    shutil.copytree(TESTS / "fixtures", tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def _run(*args: str) -> int:
    return cli.main(["check", "--exit-zero", "-q", *args])


def _count_analyses(monkeypatch) -> list[str]:
    seen = []
    real = batch.analyze_source

    def counting(text, path, **options):
        seen.append(path)
        return real(text, path, **options)

    monkeypatch.setattr(batch, "analyze_source", counting)
    return seen


def test_unchanged_files_are_not_analysed_again(tree, monkeypatch, capsys):
    _run("helper_module.py", "dict_scratch.py")
    first = capsys.readouterr().out
    seen = _count_analyses(monkeypatch)
    _run("helper_module.py", "dict_scratch.py")
    assert seen == [] and capsys.readouterr().out == first
    assert (tree / ".pallas_lint_cache" / ".gitignore").read_text().endswith("*\n")
    entries = list((tree / ".pallas_lint_cache").rglob("*.json"))
    assert entries and all(json.loads(entry.read_text()) for entry in entries)  # JSON, never pickle


def test_a_changed_file_setting_or_dependency_is_analysed_again(tree, monkeypatch, capsys):
    _run("helper_module.py", "dict_scratch.py")
    seen = _count_analyses(monkeypatch)
    (tree / "dict_scratch.py").write_text((tree / "dict_scratch.py").read_text() + "\n# edited\n")
    _run("helper_module.py", "dict_scratch.py")
    assert [p.rsplit("/", 1)[-1] for p in seen] == ["dict_scratch.py"]
    seen.clear()
    helper = tree / "helpers" / "mma.py"
    helper.write_text(helper.read_text() + "\n# edited\n")  # imported by helper_module.py
    _run("helper_module.py", "dict_scratch.py")
    assert [p.rsplit("/", 1)[-1] for p in seen] == ["helper_module.py"]
    seen.clear()
    _run("--ignore", "PLS002", "helper_module.py")
    assert len(seen) == 1


def test_no_cache(tree, monkeypatch):
    _run("dict_scratch.py")
    seen = _count_analyses(monkeypatch)
    _run("--no-cache", "dict_scratch.py")
    assert len(seen) == 1


def _count_reads(monkeypatch) -> list[str]:
    seen = []
    real = batch.SourceFile.read

    def counting(path, *args, **kwargs):
        seen.append(str(path).rsplit("/", 1)[-1])
        return real(path, *args, **kwargs)

    monkeypatch.setattr(batch.SourceFile, "read", staticmethod(counting))
    return seen


def _count_entry_loads(monkeypatch) -> list[str]:
    seen = []
    real = cache.load

    def counting(directory, entry):
        seen.append(entry)
        return real(directory, entry)

    monkeypatch.setattr(cache, "load", counting)
    return seen


def test_an_unchanged_file_is_not_even_read(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache, "RECENT", 0.0)  # the files were written a moment ago
    (tmp_path / "kernel.py").write_text((TESTS.parent / "examples" / "collective_matmul.py").read_text())
    (tmp_path / "plain.py").write_text("x = 1  # noqa: PLS001\n")
    _run("--output-format", "json", ".")
    first = capsys.readouterr().out
    assert '"PLS100"' in first  # the file without a trigger word has its report cached too
    reads = _count_reads(monkeypatch)
    entries = _count_entry_loads(monkeypatch)
    _run("--output-format", "json", ".")
    assert reads == [] and capsys.readouterr().out == first
    assert entries == []  # nor its entry: the index holds it (one file read, as ruff's cache)
    (tmp_path / "plain.py").write_text("x = 2  # noqa: PLS001\n")
    _run("--output-format", "json", ".")
    assert reads == ["plain.py"]


def test_a_file_the_prefilter_settled_follows_its_imports(tmp_path, monkeypatch, capsys):
    """No trigger word in the file: its verdict depends on the project modules it imports, and
    on those it would import that do not exist yet."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache, "RECENT", 0.0)
    kernel = (TESTS.parent / "examples" / "collective_matmul.py").read_text()
    (tmp_path / "main.py").write_text("from helpers import make\nfrom other import build\n\nmake()\nbuild()\n")
    (tmp_path / "helpers.py").write_text("def make():\n    return 1\n")
    _run("main.py")
    seen = _count_analyses(monkeypatch)
    _run("main.py")
    assert seen == []
    (tmp_path / "helpers.py").write_text("from jax.experimental import pallas  # TMEM\ndef make():\n    return 1\n")
    _run("main.py")
    assert [p.rsplit("/", 1)[-1] for p in seen] == ["main.py"]
    (tmp_path / "helpers.py").write_text("def make():\n    return 1\n")
    _run("main.py")
    seen.clear()
    (tmp_path / "other.py").write_text(kernel)  # a module it imports appears
    _run("main.py")
    assert [p.rsplit("/", 1)[-1] for p in seen] == ["main.py"]


def test_files_of_one_project_share_their_dependencies_stamps(tmp_path, monkeypatch, capsys):
    """Files that import the same project modules name the same chunks of stamps (one per
    directory), each written once; a chunk that is gone is a miss, never a verdict."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache, "RECENT", 0.0)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("from . import core, util\n")
    (tmp_path / "app" / "core.py").write_text("from . import util\n")
    (tmp_path / "app" / "util.py").write_text("def helper():\n    return 1\n")
    for name in ("one", "two", "three"):  # trigger words, no jax: settled on their imports
        (tmp_path / f"{name}.py").write_text("from app import core\n\ndef kernel(out_shape):\n    return core\n")
    _run(".")
    records = [json.loads(path.read_text()) for path in (tmp_path / cache.DIRECTORY).rglob("*.json")
               if cache.DEPENDENCIES not in path.parts and path.name != "index.json"]
    named = [chunk for record in records for chunk in record["dependencies"]]
    chunks = list((tmp_path / cache.DIRECTORY).rglob(f"{cache.DEPENDENCIES}/*/*.json"))
    assert len(records) >= 3 and len(chunks) == len(set(named)) < len(named)
    for chunk in chunks:
        chunk.unlink()
    monkeypatch.setattr(cache, "_written", set())  # (a new process)
    _run("one.py")  # a miss: settled again, its chunks written again
    assert list((tmp_path / cache.DIRECTORY).rglob(f"{cache.DEPENDENCIES}/*/*.json"))


def test_changed_code_of_ours_is_a_miss(tmp_path, monkeypatch):
    """An editable install's code changes without its version: an entry is the verdict of our
    code as it is (its modules' sizes and modification times), not of the version alone."""
    import importlib.machinery
    import importlib.util
    import os

    from pallas_lsp.analysis import Settings

    package = tmp_path / "pallas_lsp"
    (package / "analysis").mkdir(parents=True)
    module = package / "analysis" / "engine.py"
    module.write_text("x = 1\n")
    spec = importlib.machinery.ModuleSpec("pallas_lsp", None, is_package=True)
    spec.submodule_search_locations = [str(package)]
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: spec if name == "pallas_lsp" else real_find_spec(name, *args))
    cache.installed_code.cache_clear()
    try:
        before = cache.key("kernel.py", b"x = 1\n", Settings())
        cache.installed_code.cache_clear()
        assert cache.key("kernel.py", b"x = 1\n", Settings()) == before  # nothing changed
        os.utime(module, ns=(1, 1))
        cache.installed_code.cache_clear()
        assert cache.key("kernel.py", b"x = 1\n", Settings()) != before
    finally:
        monkeypatch.undo()
        cache.installed_code.cache_clear()


def test_a_parallel_run_settles_in_its_parent_a_file_only_its_imports_bring_words_to(tmp_path, monkeypatch):
    """No trigger word in `main.py`, one in the helper it imports, by a continued line the text
    alone does not follow: the parent reads its tree (the helper never meets jax) and settles
    it, where a worker would have been started for it (numpy's distutils)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpers.py").write_text("def make():  # a TMEM, in a comment\n    return 1\n")
    (tmp_path / "main.py").write_text("from helpers import make, \\\n    make as again\n\nmake()\n")
    added: list[int] = []
    monkeypatch.setattr(batch._Workers, "add", lambda self, index: added.append(index))
    assert _run("-j", "2", "--no-cache", "main.py") == 0
    assert added == []
