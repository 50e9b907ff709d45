"""`pallas-lint check` as CI runs it: the real command (subprocesses, real files, a real git
repository, real pre-commit), with real ruff as the reference for every flag we share."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from conftest import ROOT
from pallas_lsp import cache, cli
from pallas_lsp.analysis.rules import BY_CODE
from pallas_lsp.analysis.settings import OPTIONS

EXAMPLE = ROOT / "examples" / "collective_matmul.py"
# the example's first kernel: one PLS001 (line 25), with a safe fix
SAFE = "".join(EXAMPLE.read_text().splitlines(keepends=True)[:38])
# ruff's counterpart: one F401, with a safe fix
RUFF_SAFE = "import os\n"


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("PALLAS_LINT_OUTPUT_FORMAT", "FORCE_COLOR", "NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR")}
    env.update(extra)
    return env


def lint(*args: str, cwd: Path, input: str | bytes | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pallas_lsp.cli", *args], cwd=cwd, input=input,
                          capture_output=True, text=not isinstance(input, bytes), timeout=300, env=_env(**env))


@pytest.fixture
def here(capsys, monkeypatch):
    """`pallas-lint` in this process (the same `cli.main` the command runs, without starting
    Python again): for the long matrices against ruff."""
    for name in ("PALLAS_LINT_OUTPUT_FORMAT", "FORCE_COLOR", "NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        try:
            code = cli.main(list(args))
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run


def ruff(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, input=input, capture_output=True,
                          text=True, timeout=120, env=_env())


def _shape(value):
    """The structure of a JSON value: key names and types, not the values."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def _keys(shape, prefix=""):
    """Every key path of a shape (`location.row`), to compare with ruff's."""
    if isinstance(shape, dict):
        found = set()
        for key, item in shape.items():
            found |= {f"{prefix}{key}"} | _keys(item, f"{prefix}{key}.")
        return found
    if isinstance(shape, list) and shape:
        return _keys(shape[0], prefix)
    return set()


@pytest.fixture
def project(tmp_path) -> Path:
    """A kernel with one safe-fixable PLS001, a broken file and an undecodable one."""
    (tmp_path / "kernel.py").write_text(SAFE)
    (tmp_path / "broken.py").write_text(
        "from jax.experimental.pallas import mosaic_gpu as plgpu\nacc = plgpu.TMEM((128, 128), jnp.float32)\ndef (:\n")
    (tmp_path / "latin1.py").write_bytes(b"x = '\xff'  # plgpu.TMEM\n")
    return tmp_path


# -- files that were not analysed ----------------------------------------------------------


FORMAT_MARKS = {
    "concise": "broken.py:1:1: PLS000 syntax error at line 3",
    "full": "broken.py:1:1: PLS000 syntax error at line 3",
    "grouped": "1:1 PLS000 syntax error at line 3",
    "json": '"code": "PLS000"',
    "json-lines": '"code":"PLS000"',
    "junit": 'name="org.pallas-lint.PLS000"',
    "sarif": '"ruleId": "PLS000"',
    "github": "::error title=pallas-lint (PLS000),file=broken.py,line=1,col=1",
    "gitlab": '"check_name": "PLS000"',
    "pylint": "broken.py:1: [PLS000] syntax error at line 3",
    "rdjson": '"value": "PLS000"',
    "azure": "code=PLS000;]syntax error at line 3",
}


@pytest.mark.parametrize("fmt", sorted(FORMAT_MARKS))
def test_a_file_not_analysed_is_a_finding_in_every_format(project, fmt, here):
    run = lint if fmt in ("concise", "json") else here
    result = run("check", "--no-cache", "--output-format", fmt, "broken.py", "latin1.py", cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert FORMAT_MARKS[fmt] in result.stdout, result.stdout
    assert "cannot decode" in result.stdout and result.stderr == ""


def test_a_file_not_analysed_is_counted_and_fails_the_run(project):
    result = lint("check", "--no-cache", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "broken.py:1:1: PLS000 syntax error at line 3: invalid syntax"
    assert re.search(r"^latin1\.py:1:1: PLS000 cannot decode: ", result.stdout, re.M), result.stdout
    assert "Found 3 errors." in result.stdout and "All checks passed" not in result.stdout
    assert lint("check", "--no-cache", "--exit-zero", cwd=project).returncode == 0  # --exit-zero wins
    # over the budget: PLS000 too (the budget stays; a real file never meets it)
    result = lint("check", "--no-cache", "--analysis-budget", "0.000001", "kernel.py", cwd=project)
    assert result.returncode == 1
    assert result.stdout.startswith("kernel.py:1:1: PLS000 analysis budget of 1e-06 s exceeded\n")
    # ignoring it is the user's explicit choice
    result = lint("check", "--no-cache", "--ignore", "PLS000", "broken.py", "latin1.py", cwd=project)
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n")


def test_pls000_is_a_registry_entry_with_its_documentation(tmp_path):
    result = lint("rule", "PLS000", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("# file-not-analysed (PLS000)\n")
    for section in ("## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Fix safety"):
        assert section in result.stdout


def test_a_noqa_comment_does_not_silence_pls000(tmp_path):
    head = "import jax.experimental.pallas.mosaic_gpu as plgpu  # noqa\n"
    (tmp_path / "broken.py").write_text(head + "plgpu.TMEM(\n  def (\n")
    result = lint("check", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1 and "PLS000" in result.stdout
    assert lint("check", "--no-cache", "--add-noqa", cwd=tmp_path).returncode == 0
    assert (tmp_path / "broken.py").read_text().startswith(head)  # nothing added


def test_no_python_files_warns_as_ruff_does(tmp_path):
    (tmp_path / "empty").mkdir()
    ours, theirs = lint("check", "empty", cwd=tmp_path), ruff("check", "--no-cache", "empty", cwd=tmp_path)
    warning = "warning: No Python files found under the given path(s)"
    assert warning in theirs.stderr
    assert ours.stderr == warning + "\n" and ours.stdout == "All checks passed!\n"
    assert ours.returncode == theirs.returncode == 0


# -- codes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("args, unknown", [
    (["--select", "FOO123"], "FOO123"), (["--select", "PLS999"], "PLS999"), (["--ignore", "PLS9"], "PLS9"),
    (["--extend-select", "PLS001,E501"], "E501"), (["--per-file-ignores", "k.py:PLS0X"], "PLS0X"),
    (["--extend-per-file-ignores", "k.py:X"], "X"),
])
def test_an_unknown_selector_is_an_error_naming_it_and_the_nearest_code(tmp_path, args, unknown):
    (tmp_path / "kernel.py").write_text(SAFE)
    result = lint("check", *args, cwd=tmp_path)
    assert result.returncode == 2 == ruff("check", "--no-cache", "--select", "FOO123", cwd=tmp_path).returncode
    assert f"unknown rule selector '{unknown}'" in result.stderr, result.stderr
    assert re.search(r"the nearest rule code is PLS\d{3}", result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("table, message", [
    ('select = ["E501"]', "select: unknown rule selector 'E501'; the nearest rule code is PLS"),
    ('ignore = ["PLS999"]', "ignore: unknown rule selector 'PLS999'"),
    ('per-file-ignores = { "tests/*" = ["PLS01X"] }', "unknown rule selector 'PLS01X'"),
    ('extend-exclude = ["[unclosed"]', "unclosed character class"),
    ('respect-gitignore = "yes"', "respect-gitignore must be true or false"),
])
def test_an_invalid_pyproject_is_an_error(tmp_path, table, message):
    (tmp_path / "kernel.py").write_text(SAFE)
    (tmp_path / "pyproject.toml").write_text(f"[tool.pallas-lint]\n{table}\n")
    result = lint("check", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "pyproject.toml" in result.stderr and result.stdout == ""


def test_all_selects_and_ignores_every_code(tmp_path):
    (tmp_path / "kernel.py").write_text(EXAMPLE.read_text())
    default = lint("check", "--no-cache", cwd=tmp_path)
    everything = lint("check", "--no-cache", "--select", "ALL", cwd=tmp_path)
    assert default.returncode == everything.returncode == 1
    assert default.stdout == everything.stdout and "PLS001" in default.stdout
    nothing = lint("check", "--no-cache", "--ignore", "ALL", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (0, "All checks passed!\n")
    only = lint("check", "--no-cache", "--select", "ALL", "--ignore", "PLS001", cwd=tmp_path)
    assert "PLS001" not in only.stdout and "PLS002" in only.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lint]\nignore = ["ALL"]\n')
    assert lint("check", "--no-cache", cwd=tmp_path).returncode == 0
    # ruff agrees on what ALL means
    (tmp_path / "r.py").write_text(RUFF_SAFE)
    assert ruff("check", "--no-cache", "--isolated", "--ignore", "ALL", "r.py", cwd=tmp_path).returncode == 0


# -- the cache -----------------------------------------------------------------------------


PY312_ONLY = "from jax.experimental.pallas import mosaic_gpu as plgpu\ntype Shape = tuple[int, int]\n" + SAFE


def test_the_cache_key_holds_the_interpreter(tmp_path, monkeypatch, capsys):
    """A 3.11 run records "syntax error" for 3.12 syntax; a 3.12 run must not reuse it (and the
    reverse). The first run is the real command; the second is this process pretending to be
    another interpreter."""
    (tmp_path / "kernel.py").write_text(PY312_ONLY)
    cache_dir = tmp_path / "cache"
    first = lint("check", "--cache-dir", str(cache_dir), "kernel.py", cwd=tmp_path)
    if sys.version_info < (3, 12):
        assert first.stdout.startswith("kernel.py:1:1: PLS000 syntax error at line 2"), first.stdout
    else:
        assert "PLS000" not in first.stdout and "PLS001" in first.stdout
    assert list(cache_dir.rglob("*.json"))
    monkeypatch.chdir(tmp_path)
    analysed = []
    from pallas_lsp import batch

    real = batch.analyze_source

    def counting(text, path, **options):
        analysed.append(path)
        return real(text, path, **options)

    monkeypatch.setattr(batch, "analyze_source", counting)
    # (one process: with workers, whether this process or a worker analyses is a race the
    # counting below cannot see; it failed so on a loaded machine)
    assert cli.main(["check", "--cache-dir", str(cache_dir), "-q", "-j", "1", "kernel.py"]) == 1
    assert analysed == []  # the same interpreter: the entry is used
    monkeypatch.setattr(cache, "INTERPRETER", cache.INTERPRETER + " (another one)")
    cli.main(["check", "--cache-dir", str(cache_dir), "-q", "-j", "1", "kernel.py"])
    assert len(analysed) == 1  # another interpreter: analysed again
    capsys.readouterr()


# -- closed pipes --------------------------------------------------------------------------


def _closed_stdout(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        return subprocess.run([sys.executable, "-m", "pallas_lsp.cli", *args], cwd=cwd, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300, env=_env())
    finally:
        os.close(write)


def test_a_closed_pipe_ends_quietly(tmp_path):
    (tmp_path / "kernel.py").write_text(EXAMPLE.read_text())
    result = _closed_stdout("check", "--no-cache", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, "")  # the verdict stands
    for args in (["rule", "--all", "--output-format", "json"], ["rule", "--all"], ["config"],
                 ["check", "--no-cache", "--output-format", "json"], ["check", "--show-files"]):
        result = _closed_stdout(*args, cwd=tmp_path)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, (args, result.stderr)
        assert result.stderr == ""


def test_head_in_a_shell_pipeline(tmp_path):
    lines = ["from jax.experimental.pallas import mosaic_gpu as plgpu", "import jax.numpy as jnp"]
    lines += [f"t{i} = plgpu.TMEM((128, 128), jnp.float16)" for i in range(800)]  # PLS005 each
    (tmp_path / "many.py").write_text("\n".join(lines) + "\n")
    command = f"set -o pipefail; {sys.executable} -m pallas_lsp.cli check --no-cache many.py | head -2"
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300, env=_env())
    assert len(result.stdout.splitlines()) == 2 and "PLS005" in result.stdout
    assert result.stderr == "" and result.returncode == 1
    command = f"{sys.executable} -m pallas_lsp.cli rule --all --output-format json | head"
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stderr == "" and result.stdout.startswith("[\n")


# -- files: .gitignore, globs --------------------------------------------------------------


def _tree(root: Path) -> None:
    for name in ("gen_x.py", "keep.py", "ign.py", "sub/gen_y.py", "sub/ign2.py", "sub/deep/k.py",
                 "sub/deep/gen_z.py", "gen/a.py", "neg/x.py", "neg/y.py", "data/k.pyi", "sub/deep/tmp.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(RUFF_SAFE)


def _files(result: subprocess.CompletedProcess, root: Path) -> list[str]:
    """The Python files of a --show-files (ruff lists pyproject.toml too, for its RUF200)."""
    assert result.returncode == 0, result.stderr
    return sorted(Path(line).relative_to(root).as_posix() for line in result.stdout.splitlines()
                  if line.endswith((".py", ".pyi")))


def test_gitignore_is_respected_as_ruff_respects_it(tmp_path, here):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _tree(root)
    (root / ".gitignore").write_text("ign.py\n/sub/ign2.py\n*.pyi\n")
    (root / "neg" / ".gitignore").write_text("*.py\n!y.py\n")
    (root / "sub" / "deep" / ".gitignore").write_text("tmp.py\n")
    (root / ".git" / "info" / "exclude").write_text("gen/\n")
    for args in ([], ["--no-respect-gitignore"], ["--extend-exclude", "deep"]):
        for where in (".", "sub", "gen", "neg"):  # gen/ is ignored: given explicitly, it is walked
            run = lint if (args, where) == ([], ".") else here
            ours = _files(run("check", "--isolated", "--show-files", *args, where, cwd=root), root)
            theirs = _files(ruff("check", "--isolated", "--show-files", *args, where, cwd=root), root)
            assert ours == theirs, (args, where)
    assert "ign.py" not in _files(here("check", "--isolated", "--show-files", cwd=root), root)
    # a file named on the command line is checked, ignored or not (ruff: the same)
    named = _files(here("check", "--isolated", "--show-files", "--force-exclude", "ign.py", cwd=root), root)
    assert named == _files(ruff("check", "--isolated", "--show-files", "--force-exclude", "ign.py", cwd=root),
                           root) == ["ign.py"]
    # respect-gitignore = false in the pyproject
    (root / "pyproject.toml").write_text("[tool.pallas-lint]\nrespect-gitignore = false\n")
    assert "ign.py" in _files(here("check", "--show-files", cwd=root), root)
    # outside a git repository a .gitignore means nothing (a .ignore does), as for ruff
    plain = tmp_path / "plain"
    plain.mkdir()
    _tree(plain)
    (plain / ".gitignore").write_text("ign.py\n")
    (plain / ".ignore").write_text("keep.py\n")
    ours = _files(here("check", "--isolated", "--show-files", cwd=plain), plain)
    assert ours == _files(ruff("check", "--isolated", "--show-files", cwd=plain), plain)
    assert "ign.py" in ours and "keep.py" not in ours


GLOBS = ["**/gen_*.py", "gen_*.py", "sub/*", "sub/*.py", "deep", "sub/deep/*.py", "*/deep", "sub/**",
         "**/deep/**", "{gen,neg}", "neg/[xz].py", "neg/[!x].py", "./sub/deep", "sub/deep/", "*.pyi",
         "k.py", "/elsewhere/*.py", "s?b"]


@pytest.mark.parametrize("pattern", GLOBS)
def test_exclude_globs_match_ruffs(tmp_path, pattern, here):
    _tree(tmp_path)
    run = lint if pattern == "**/gen_*.py" else here  # the issue's own example as a real command
    for option in ("--extend-exclude", "--exclude"):
        ours = run("check", "--isolated", "--show-files", option, pattern, cwd=tmp_path)
        theirs = ruff("check", "--isolated", "--show-files", option, pattern, cwd=tmp_path)
        if theirs.returncode == 2:  # `{a,b}` on the command line: split at the comma, a bad glob
            assert ours.returncode == 2 and "unclosed alternatives" in ours.stderr
            continue
        assert _files(ours, tmp_path) == _files(theirs, tmp_path), (option, pattern)
    # from a pyproject: patterns are relative to its directory, wherever the run starts
    (tmp_path / "pyproject.toml").write_text(f"[tool.pallas-lint]\nextend-exclude = [{json.dumps(pattern)}]\n"
                                             f"[tool.ruff]\nextend-exclude = [{json.dumps(pattern)}]\n")
    ours = _files(run("check", "--show-files", "sub", cwd=tmp_path), tmp_path)
    theirs = _files(ruff("check", "--show-files", "sub", cwd=tmp_path), tmp_path)
    assert ours == theirs, pattern


PER_FILE = ["sub/*", "gen_*.py", "**/deep/*.py", "!sub/**", "sub/deep/k.py", "*.py", "neg/{x,y}.py"]


@pytest.mark.parametrize("pattern", PER_FILE)
def test_per_file_ignores_match_as_ruffs(tmp_path, pattern, here):
    """Each file has an F401 for ruff and a PLS005 for us: the files left must be the same."""
    names = ["gen_x.py", "keep.py", "sub/gen_y.py", "sub/deep/k.py", "neg/x.py", "neg/y.py"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import os\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n"
                                     "import jax.numpy as jnp\nt = plgpu.TMEM((128, 128), jnp.float16)\n")
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.pallas-lint]\nper-file-ignores = {{ {json.dumps(pattern)} = [\"PLS005\"] }}\n"
        f"[tool.ruff.lint]\nselect = [\"F401\"]\nper-file-ignores = {{ {json.dumps(pattern)} = [\"F401\"] }}\n")
    ours = (lint if pattern == "sub/*" else here)("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    theirs = ruff("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    left = {Path(item["filename"]).relative_to(tmp_path).as_posix() for item in json.loads(ours.stdout)}
    ruff_left = {Path(item["filename"]).relative_to(tmp_path).as_posix() for item in json.loads(theirs.stdout)}
    assert left == ruff_left, pattern


# -- stdin ---------------------------------------------------------------------------------


def test_stdin_with_and_without_a_file_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lint]\nper-file-ignores = { "tests/**" = ["PLS001"] }\n')
    result = lint("check", "-", cwd=tmp_path, input=SAFE)
    assert result.returncode == 1 and result.stdout.startswith("-:25:13: PLS001 ")
    result = lint("check", "--stdin-filename", "src/kernel.py", cwd=tmp_path, input=SAFE)
    assert result.returncode == 1 and result.stdout.startswith("src/kernel.py:25:13: PLS001 "), result.stdout
    # the settings are those of the named path
    result = lint("check", "--stdin-filename", "tests/kernel.py", cwd=tmp_path, input=SAFE)
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n")
    # a file named as well is ignored, with ruff's warning
    (tmp_path / "other.py").write_text(EXAMPLE.read_text())
    result = lint("check", "--stdin-filename", "k.py", "other.py", cwd=tmp_path, input=SAFE)
    assert "warning: Ignoring file other.py in favor of standard input." in result.stderr
    assert "other.py:" not in result.stdout
    # not analysable input is PLS000
    result = lint("check", "-", cwd=tmp_path,
                  input="import jax.experimental.pallas.mosaic_gpu as plgpu\nplgpu.TMEM(\ndef (:\n")
    assert result.returncode == 1 and result.stdout.startswith("-:1:1: PLS000 syntax error")
    result = lint("check", "-", cwd=tmp_path, input=b"# coding: nope\nplgpu.TMEM\n")
    assert result.returncode == 1 and b"PLS000 cannot decode" in result.stdout


def test_stdin_fix_writes_the_source_to_stdout_as_ruff_does(tmp_path):
    theirs = ruff("check", "--no-cache", "--isolated", "--fix", "--stdin-filename", "r.py", cwd=tmp_path,
                  input=RUFF_SAFE + "x = 1\n")
    assert theirs.stdout == "x = 1\n" and theirs.returncode == 0
    ours = lint("check", "--fix", "--stdin-filename", "k.py", cwd=tmp_path, input=SAFE)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == SAFE.replace("jnp.float32),\n            barrier",
                                       "jnp.float32, collective=True),\n            barrier")
    assert "Found 1 error (1 fixed, 0 remaining)." in ours.stderr
    only = lint("check", "--fix-only", "-", cwd=tmp_path, input=SAFE)
    assert (only.returncode, only.stdout) == (0, ours.stdout)
    diff = lint("check", "--diff", "--stdin-filename", "k.py", cwd=tmp_path, input=SAFE)
    assert diff.returncode == 1 and diff.stdout.startswith("--- k.py\n+++ k.py\n")
    assert "+            acc_tmem=plgpu.TMEM((M, 2 * N), jnp.float32, collective=True)," in diff.stdout
    # an excluded name with --force-exclude: nothing to report, the source comes back unchanged
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lint]\nextend-exclude = ["gen_*.py"]\n')
    excluded = lint("check", "--fix", "--force-exclude", "--stdin-filename", "gen_k.py", cwd=tmp_path, input=SAFE)
    assert (excluded.returncode, excluded.stdout) == (0, SAFE)


# -- fix flags -----------------------------------------------------------------------------


FIX_FLAGS = [[], ["--fix"], ["--fix-only"], ["--fix", "--exit-non-zero-on-fix"],
             ["--fix-only", "--exit-non-zero-on-fix"], ["--diff"], ["--exit-zero"], ["--fix", "--exit-zero"],
             ["--fix-only", "--exit-non-zero-on-fix", "--exit-zero"], ["--diff", "--fix-only"]]


@pytest.mark.parametrize("flags", FIX_FLAGS, ids=lambda flags: " ".join(flags) or "check")
def test_fix_flags_exit_as_ruffs(tmp_path, flags, here):
    (tmp_path / "k.py").write_text(SAFE)
    (tmp_path / "r.py").write_text(RUFF_SAFE)
    ours = (lint if flags == ["--fix-only"] else here)("check", "--no-cache", *flags, "k.py", cwd=tmp_path)
    theirs = ruff("check", "--no-cache", "--isolated", *flags, "r.py", cwd=tmp_path)
    assert ours.returncode == theirs.returncode, (ours.stdout + ours.stderr, theirs.stdout + theirs.stderr)
    if flags in (["--fix-only"], ["--fix-only", "--exit-non-zero-on-fix"]):
        assert ours.stdout == "Fixed 1 error.\n" and theirs.stdout == "Fixed 1 error.\n"


def test_show_fixes_lists_what_was_fixed_like_ruff(tmp_path):
    (tmp_path / "k.py").write_text(SAFE)
    (tmp_path / "r.py").write_text(RUFF_SAFE)
    ours = lint("check", "--no-cache", "--fix", "--show-fixes", "k.py", cwd=tmp_path)
    theirs = ruff("check", "--no-cache", "--isolated", "--fix", "--show-fixes", "r.py", cwd=tmp_path)
    assert theirs.stdout == ("\nFixed 1 error:\n- r.py:\n    1 \u00d7 F401 (unused-import)\n\n"
                             "Found 1 error (1 fixed, 0 remaining).\n")
    assert ours.stdout == ("\nFixed 1 error:\n- k.py:\n    1 \u00d7 PLS001 (non-collective-mma-operand)\n\n"
                           "Found 1 error (1 fixed, 0 remaining).\n")


def _read_until(process: subprocess.Popen, needle: str, deadline: float) -> str:
    seen = ""
    while needle not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"waited for {needle!r}; got {seen!r}"
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if ready:
            chunk = os.read(process.stdout.fileno(), 65536).decode()
            assert chunk, f"the watcher ended; got {seen!r}"
            seen += chunk
    return seen


def test_watch_checks_again_when_a_file_changes(tmp_path):
    (tmp_path / "k.py").write_text(SAFE)
    process = subprocess.Popen([sys.executable, "-m", "pallas_lsp.cli", "check", "--no-cache", "--watch"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        deadline = time.monotonic() + 120
        assert "k.py:25:13: PLS001" in _read_until(process, "Found 1 error.", deadline)
        time.sleep(0.1)
        (tmp_path / "k.py").write_text(SAFE.replace("jnp.float32),\n            barrier",
                                                    "jnp.float32, collective=True),\n            barrier"))
        _read_until(process, "All checks passed!", deadline)
        (tmp_path / "new.py").write_text("import jax.experimental.pallas.mosaic_gpu as plgpu\nplgpu.TMEM(\n def (\n")
        assert "new.py:1:1: PLS000" in _read_until(process, "Found 1 error.", deadline)
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()
        process.stderr.close()
    assert lint("check", "--watch", "--fix", cwd=tmp_path).returncode == 2


# -- output formats ------------------------------------------------------------------------


@pytest.fixture
def both(tmp_path):
    """The same finding situation for us (k.py) and ruff (r.py): findings with a safe fix."""
    (tmp_path / "k.py").write_text(SAFE)
    (tmp_path / "r.py").write_text(RUFF_SAFE)
    return tmp_path


def _pair(fmt: str, root: Path, here) -> tuple[str, str]:
    """Our output and ruff's in one format; ours in this process but for json and junit."""
    run = lint if fmt in ("json", "junit") else here
    ours = run("check", "--no-cache", "--output-format", fmt, "k.py", cwd=root)
    theirs = ruff("check", "--no-cache", "--isolated", "--output-format", fmt, "r.py", cwd=root)
    assert ours.returncode == theirs.returncode == 1, ours.stderr + theirs.stderr
    return ours.stdout, theirs.stdout


@pytest.mark.parametrize("fmt", ["json", "json-lines", "gitlab", "rdjson"])
def test_json_formats_have_ruffs_fields(both, fmt, here):
    ours, theirs = _pair(fmt, both, here)
    if fmt == "json-lines":
        ours_items = [json.loads(line) for line in ours.splitlines()]
        theirs_items = [json.loads(line) for line in theirs.splitlines()]
        assert list(ours_items[0]) == sorted(ours_items[0])  # ruff writes the keys sorted
    else:
        ours_items, theirs_items = json.loads(ours), json.loads(theirs)
    missing = _keys(_shape(theirs_items)) - _keys(_shape(ours_items))
    assert not missing, f"ruff's {fmt} has fields ours lacks: {sorted(missing)}"


def test_junit_has_ruffs_structure(both, tmp_path, here):
    ours, theirs = _pair("junit", both, here)

    def structure(text: str) -> list[tuple[str, tuple[str, ...]]]:
        root = ElementTree.fromstring(text.encode())
        return [(element.tag, tuple(sorted(element.attrib))) for element in root.iter()]

    assert structure(ours) == structure(theirs)
    case = ElementTree.fromstring(ours.encode()).find("testsuite/testcase")
    assert case.get("name") == "org.pallas-lint.PLS001" and case.get("line") == "25" and case.get("column") == "13"
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "ok.py").write_text("x = 1\n")
    clean = lint("check", "--output-format", "junit", "clean", cwd=tmp_path)
    ruff_clean = ruff("check", "--no-cache", "--isolated", "--output-format", "junit", "clean", cwd=tmp_path)
    assert clean.returncode == 0 and structure(clean.stdout) == structure(ruff_clean.stdout)


@pytest.mark.parametrize("fmt, pattern", [
    ("pylint", r"^(?P<path>[^:]+):(?P<line>\d+): \[(?P<code>[A-Z]+\d+)\] (?P<message>.+)$"),
    ("azure", r"^##vso\[task\.logissue type=error;sourcepath=(?P<path>[^;]+);linenumber=(?P<line>\d+);"
              r"columnnumber=\d+;code=(?P<code>[A-Z]+\d+);\](?P<message>.+)$"),
    ("concise", r"^(?P<path>[^:]+):(?P<line>\d+):\d+: (?P<code>[A-Z]+\d+) \[\*\] (?P<message>.+)$"),
])
def test_line_formats_parse_with_ruffs_patterns(both, fmt, pattern, here):
    ours, theirs = _pair(fmt, both, here)
    first, ruff_first = ours.splitlines()[0], theirs.splitlines()[0]
    assert re.match(pattern, ruff_first), ruff_first
    match = re.match(pattern, first)
    assert match and match["code"] == "PLS001" and match["line"] == "25", first


def test_grouped_reads_like_ruffs(both, here):
    ours, theirs = _pair("grouped", both, here)
    assert theirs.startswith("r.py:\n  1:8 F401 [*] ")
    assert ours.startswith("k.py:\n  25:13 PLS001 [*] Accumulator ")
    assert ours.endswith("\n\nFound 1 error.\n[*] 1 fixable with the `--fix` option.\n")


def test_one_finding_makes_a_small_sarif(both):
    ours = json.loads(lint("check", "--no-cache", "--output-format", "sarif", "k.py", cwd=both).stdout)
    text = json.dumps(ours)
    (rule,) = ours["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "PLS001" and rule["helpUri"].endswith("/docs/rules/PLS001.md")
    assert rule["help"]["markdown"] == BY_CODE["PLS001"].documentation()
    assert text.count(json.dumps(BY_CODE["PLS001"].documentation())[1:40]) == 1  # once
    assert len(text) < 12_000, len(text)


# -- colours -------------------------------------------------------------------------------


def _on_a_terminal(*args: str, cwd: Path, **env: str) -> str:
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "pallas_lsp.cli", *args], cwd=cwd, stdout=follower,
                                   stderr=subprocess.DEVNULL, env=_env(TERM="xterm", **env))
        os.close(follower)
        follower = None
        output = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            output += chunk
        process.wait(timeout=120)
        return output.decode()
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)


def test_colours_on_a_terminal_and_the_environment(both):
    coloured = _on_a_terminal("check", "--no-cache", "k.py", cwd=both)
    assert "\x1b[1;31mPLS001\x1b[0m" in coloured and "\x1b[1mk.py\x1b[0m" in coloured
    assert "\x1b[" not in _on_a_terminal("check", "--no-cache", "k.py", cwd=both, NO_COLOR="1")
    assert "\x1b[" not in lint("check", "--no-cache", "k.py", cwd=both).stdout  # a pipe: none
    forced = lint("check", "--no-cache", "k.py", cwd=both, FORCE_COLOR="1").stdout
    assert "\x1b[1;31mPLS001\x1b[0m" in forced
    ruff_forced = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "r.py"],
                                 cwd=both, capture_output=True, text=True, env=_env(FORCE_COLOR="1")).stdout
    assert "\x1b[" in ruff_forced  # ruff does the same
    assert "\x1b[" not in lint("check", "--no-cache", "--output-format", "json", "k.py", cwd=both,
                               FORCE_COLOR="1").stdout


# -- unused noqa ---------------------------------------------------------------------------


def test_unused_noqa_like_ruffs_rule_100(tmp_path):
    lines = SAFE.splitlines()
    lines[24] += "  # noqa: PLS001"  # used
    lines[14] += "  # noqa: PLS005"  # silences nothing
    lines[15] += "  # noqa: E501, PLS999"  # another tool's code is kept; PLS999 is no code of ours
    lines[16] += "  # noqa"  # bare: not ours to judge
    (tmp_path / "k.py").write_text("\n".join(lines) + "\n")
    result = lint("check", "--no-cache", "k.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[:2] == [
        "k.py:15:20: PLS100 [*] Unused `noqa` directive (unused: `PLS005`)",
        "k.py:17:20: PLS100 [*] Unused `noqa` directive (unknown: `PLS999`)",
    ] or result.stdout.splitlines()[:2] == [
        f"k.py:15:{len(SAFE.splitlines()[14]) + 3}: PLS100 [*] Unused `noqa` directive (unused: `PLS005`)",
        f"k.py:16:{len(SAFE.splitlines()[15]) + 3}: PLS100 [*] Unused `noqa` directive (unknown: `PLS999`)",
    ], result.stdout
    (tmp_path / "r.py").write_text("x = 1  # noqa: F841\n")
    theirs = ruff("check", "--no-cache", "--isolated", "--extend-select", "RUF100", "r.py", cwd=tmp_path)
    assert "RUF100 [*] Unused `noqa` directive (unused: `F841`)" in theirs.stdout  # the same words
    assert lint("check", "--no-cache", "--fix", "k.py", cwd=tmp_path).returncode == 0
    fixed = (tmp_path / "k.py").read_text().splitlines()
    assert fixed[14] == SAFE.splitlines()[14] and fixed[15] == SAFE.splitlines()[15] + "  # noqa: E501"
    assert fixed[16].endswith("  # noqa")
    assert lint("check", "--no-cache", "--ignore", "PLS100", cwd=tmp_path).returncode == 0
    # a file without any trigger word is looked at too
    (tmp_path / "plain.py").write_text("x = 1  # noqa: PLS003\n")
    assert "plain.py:1:8: PLS100" in lint("check", "--no-cache", "plain.py", cwd=tmp_path).stdout


# -- config, --show-settings, --show-files -------------------------------------------------


def test_config_lists_and_describes_the_keys(tmp_path, here):
    result = lint("config", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.split() == list(OPTIONS)
    result = lint("config", "per-file-ignores", cwd=tmp_path)
    assert result.returncode == 0 and "Default value: {}" in result.stdout and "Example usage:" in result.stdout
    data = json.loads(lint("config", "--output-format", "json", cwd=tmp_path).stdout)
    assert set(data) == set(OPTIONS) and all({"doc", "type", "default", "example"} <= set(v) for v in data.values())
    bad = lint("config", "selec", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown key 'selec'" in bad.stderr
    # every example is a valid table
    for option in OPTIONS.values():
        (tmp_path / "pyproject.toml").write_text(f"[tool.pallas-lint]\n{option.example}\n")
        assert here("check", "--show-settings", cwd=tmp_path).returncode == 0, option.example


def test_show_settings_and_show_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pallas-lint]\nignore = ["PLS002"]\n')
    (tmp_path / "k.py").write_text(SAFE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.py").write_text("x = 1\n")
    files = lint("check", "--show-files", cwd=tmp_path)
    ruff_files = ruff("check", "--show-files", cwd=tmp_path)
    assert files.returncode == 0  # absolute paths, sorted, as ruff's (which lists pyproject.toml too)
    assert files.stdout.splitlines() == [line for line in ruff_files.stdout.splitlines() if line.endswith(".py")]
    shown = lint("check", "--show-settings", "k.py", cwd=tmp_path)
    assert shown.returncode == 0
    assert shown.stdout.startswith(f"Resolved settings for: {tmp_path / 'k.py'}\n"
                                   f"Settings path: {tmp_path / 'pyproject.toml'}\n")
    assert 'ignore = ["PLS002"]\n' in shown.stdout and 'select = ["PLS"]\n' in shown.stdout
    assert "Resolved settings for" in ruff("check", "--show-settings", "k.py", cwd=tmp_path).stdout


# -- pre-commit, for real ------------------------------------------------------------------


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="pre-commit installs the hook from a git checkout")
def test_the_pre_commit_hooks_run_with_real_pre_commit(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / "kernel.py").write_text(SAFE)
    (work / "broken.py").write_text("import jax.experimental.pallas.mosaic_gpu as plgpu\nplgpu.TMEM(\n def (\n")
    _git("add", ".", cwd=work)
    env = _env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "pallas-lint", "--all-files"]
    result = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "kernel.py:25:13: PLS001" in result.stdout and "broken.py:1:1: PLS000" in result.stdout
    command[-2] = "pallas-lint-fix"
    result = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 1 and "files were modified by this hook" in result.stdout, result.stdout
    assert "collective=True" in (work / "kernel.py").read_text()
