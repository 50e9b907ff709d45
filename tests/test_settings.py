"""`[tool.pallas-lint]`: parsing, discovery, caching, patterns."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pallas_lsp.analysis.settings import (
    DEFAULT_EXCLUDE, ConfigError, Settings, codes, find_pyproject, load, settings_for,
)


def pyproject(directory: Path, table: str, extra: str = "") -> Path:
    path = directory / "pyproject.toml"
    path.write_text(f"{extra}[tool.pallas-lint]\n{table}\n", encoding="utf-8")
    return path


def test_defaults():
    s = Settings()
    assert (s.select, s.ignore, s.per_file_ignores, s.budget) == (("PLS",), (), (), 10.0)
    assert s.exclude == DEFAULT_EXCLUDE and ".venv" in s.exclude and "node_modules" in s.exclude


def test_every_key(tmp_path):
    path = pyproject(tmp_path, """
select = ["PLS001"]
ignore = ["PLS002"]
exclude = ["generated"]
extend-exclude = ["third_party"]
per-file-ignores = { "tests/*" = ["PLS001"], "legacy.py" = ["PLS"] }
analysis-budget = 2.5
""")
    s = load(path)
    assert s.select == ("PLS001",) and s.ignore == ("PLS002",)
    assert s.exclude == ("generated",) and s.extend_exclude == ("third_party",)
    assert s.per_file_ignores == (("tests/*", ("PLS001",)), ("legacy.py", ("PLS",)))
    assert s.budget == 2.5
    assert (s.root, s.source) == (str(tmp_path), str(path))


@pytest.mark.parametrize("table, message", [
    ('select = "PLS001"', "select must be a list of strings"),
    ("ignore = [1]", "ignore must be a list of strings"),
    ('per-file-ignores = ["x"]', "per-file-ignores must be a table"),
    ('per-file-ignores = { "x" = "PLS001" }', "per-file-ignores.'x' must be a list of strings"),
    ("analysis-budget = 0", "analysis-budget must be a positive number"),
    ("analysis-budget = true", "analysis-budget must be a positive number"),
    ('selct = ["PLS"]', "unknown key 'selct'"),
    ('select = ["E501"]', "select: unknown rule selector 'E501'; the nearest rule code is PLS"),
    ('ignore = ["PLS999"]', "ignore: unknown rule selector 'PLS999'"),
    ('per-file-ignores = { "x" = ["PLS1X"] }', "unknown rule selector 'PLS1X'"),
    ('per-file-ignores = { "{x" = ["PLS001"] }', "unclosed alternatives"),
    ('exclude = ["[x"]', "unclosed character class"),
    ("respect-gitignore = 1", "respect-gitignore must be true or false"),
])
def test_bad_tables_name_the_file_and_the_key(tmp_path, table, message):
    from pallas_lsp.analysis import config

    path = pyproject(tmp_path, table)
    with pytest.raises(ConfigError) as error:
        config.settings_for(str(tmp_path / "kernel.py"))  # the frontends' loader
    assert str(path) in str(error.value) and message in str(error.value)


def test_unreadable_toml_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.pallas-lint\nselect = [", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read"):
        settings_for(str(tmp_path))


def test_tool_table_must_be_a_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool]\npallas-lint = "yes"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a table"):
        settings_for(str(tmp_path))


def test_nearest_pyproject_with_the_table_wins(tmp_path):
    outer = pyproject(tmp_path, 'ignore = ["PLS002"]')
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert find_pyproject(str(inner / "kernel.py")) == outer
    assert settings_for(str(inner / "kernel.py")).ignore == ("PLS002",)
    nearer = pyproject(tmp_path / "a", 'ignore = ["PLS001"]')
    assert find_pyproject(str(inner)) == nearer
    assert settings_for(str(inner / "kernel.py")).ignore == ("PLS001",)


def test_no_pyproject_gives_the_base(tmp_path):
    base = Settings(select=("PLS002",))
    assert settings_for(str(tmp_path / "kernel.py"), base) is base
    assert settings_for(None) == Settings()


def test_the_table_goes_over_the_base_and_overrides_over_the_table(tmp_path):
    pyproject(tmp_path, 'select = ["PLS001"]')
    s = settings_for(str(tmp_path), Settings(ignore=("PLS002",), budget=3))
    assert (s.select, s.ignore, s.budget) == (("PLS001",), ("PLS002",), 3)
    merged = s.merged(select=("PLS002",), ignore=None, budget=None)
    assert (merged.select, merged.ignore, merged.budget) == (("PLS002",), ("PLS002",), 3)


def test_documents_are_cached_by_modification_time(tmp_path, monkeypatch):
    path = pyproject(tmp_path, 'select = ["PLS001"]')
    assert settings_for(str(tmp_path)).select == ("PLS001",)
    reads = []
    toml = sys.modules["tomllib" if sys.version_info >= (3, 11) else "tomli"]  # imported when first needed
    real_load = toml.load
    monkeypatch.setattr(toml, "load", lambda f: reads.append(1) or real_load(f))
    settings_for(str(tmp_path))
    assert reads == []  # unchanged: not read again
    path.write_text('[tool.pallas-lint]\nselect = ["PLS002"]\n', encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert settings_for(str(tmp_path)).select == ("PLS002",)
    assert reads == [1]


def test_per_file_ignores_match_as_ruffs_globs(tmp_path):
    # ruff's (globset's) semantics: `*` crosses `/`, a pattern without `/` also matches the name
    s = Settings(ignore=("PLS009",), root=str(tmp_path),
                 per_file_ignores=(("tests/*", ("PLS001",)), ("legacy.py", ("PLS002",)),
                                   ("generated/**", ("PLS",))))
    assert s.ignored_for(str(tmp_path / "tests" / "unit" / "k.py")) == ("PLS009", "PLS001")
    assert s.ignored_for(str(tmp_path / "src" / "legacy.py")) == ("PLS009", "PLS002")
    assert s.ignored_for(str(tmp_path / "generated" / "deep" / "k.py")) == ("PLS009", "PLS")
    assert s.ignored_for(str(tmp_path / "src" / "k.py")) == ("PLS009",)
    assert s.ignored_for(None) == ("PLS009",)


def test_excludes_with_and_without_parent_directories(tmp_path):
    s = Settings(root=str(tmp_path), extend_exclude=("gen_*.py", "vendor/*"))
    assert s.is_excluded(str(tmp_path / ".venv"))
    assert s.is_excluded(str(tmp_path / "build" / "lib" / "k.py"))  # a parent directory matches
    assert not s.is_excluded(str(tmp_path / "build" / "lib" / "k.py"), parents=False)
    assert s.is_excluded(str(tmp_path / "src" / "gen_tables.py"), parents=False)
    assert s.is_excluded(str(tmp_path / "vendor" / "x" / "k.py"), parents=False)  # a relative glob
    assert not s.is_excluded(str(tmp_path / "src" / "k.py"))
    # a path outside the root is matched as it is
    assert Settings(root=str(tmp_path / "elsewhere")).is_excluded("/somewhere/node_modules/k.py")


def test_codes():
    assert codes(None) is None
    assert codes("pls001, PLS002,,") == ("PLS001", "PLS002")
    assert codes(["pls", " PLS002 "]) == ("PLS", "PLS002")
    assert codes("") == ()


def test_selectors_are_checked_against_the_registry():
    from pallas_lsp.analysis.config import check_selectors
    from pallas_lsp.analysis.settings import prefixes

    assert check_selectors(["pls", "PLS0", "pls001", "PLS100", "all", " PLS000 "], "x") == (
        "PLS", "PLS0", "PLS001", "PLS100", "ALL", "PLS000")
    for bad in ("FOO123", "PLS999", "PLS2", "E", ""):
        with pytest.raises(ConfigError, match=r"^where: unknown rule selector .*the nearest rule code is PLS\d{3}"):
            check_selectors([bad], "where")
    assert prefixes(("ALL", "PLS001")) == ("", "PLS001")
    assert Settings(select=("ALL",)).enables("PLS100") and not Settings(ignore=("ALL",)).enables("PLS000")
    assert not Settings(per_file_ignores=(("k.py", ("PLS000",)),)).enables("PLS000", "/r/k.py")


def test_one_loader_for_the_frontends(tmp_path):
    from pallas_lsp.analysis.config import resolve
    from pallas_lsp.server.settings import EditorSettings

    pyproject(tmp_path, 'ignore = ["PLS002"]')
    kernel = str(tmp_path / "kernel.py")
    assert resolve(kernel, select=["pls001"]).select == ("PLS001",)
    assert resolve(kernel).ignore == ("PLS002",)
    with pytest.raises(ConfigError, match="flake8 options: select: unknown rule selector 'X1'"):
        resolve(kernel, select=["X1"], where="flake8 options")
    with pytest.raises(ConfigError, match="budget"):
        resolve(kernel, budget=0)
    # the server: an unknown code or a wrong type is an error to show, never the defaults
    for raw in ({"select": ["PLS999"]}, {"ignore": "FOO1"}, {"select": 5}, {"ignore": [1]}):
        editor = EditorSettings.parse(raw)
        settings, error = editor.resolve(kernel)
        assert settings is None and error.startswith("editor setting pallas."), (raw, error)
    assert EditorSettings.parse({"select": ["PLS001"]}).resolve(kernel)[0].select == ("PLS001",)
    pyproject(tmp_path, 'select = ["E501"]')
    settings, error = EditorSettings.parse({}).resolve(kernel)
    assert settings is None and "unknown rule selector 'E501'" in error and str(tmp_path) in error
