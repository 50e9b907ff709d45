"""The README as GitHub renders it (CommonMark): no fence left open, every heading a heading,
every documented `pallas-lint` and `flake8` command runs, the pre-commit `rev` exists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conftest import ROOT

README = ROOT / "README.md"
EXAMPLE = ROOT / "examples" / "collective_matmul.py"


def _tokens(text: str):
    return MarkdownIt("commonmark").parse(text)


def open_fences(text: str) -> list[int]:
    """The (1-based) lines of fences left open: CommonMark runs them to the end of the document,
    or to the closing line of the next fence (an opening line with an info string cannot close
    one), swallowing the text and the fence opener between."""
    lines = text.splitlines()
    found = []
    for token in _tokens(text):
        if token.type != "fence":
            continue
        start, end = token.map
        closing = lines[end - 1].strip() if end - 1 > start else ""
        closed = closing.startswith(token.markup) and set(closing) == {token.markup[0]}
        swallowed = re.search(rf"^\s*{re.escape(token.markup)}[^`~\s]", token.content, re.M)
        if not closed or swallowed:
            found.append(start + 1)
    return found


def test_an_open_fence_is_caught():
    assert open_fences("# a\n\n```toml\nx = 1\n\n## b\n") == [3]
    assert open_fences("# a\n\n```toml\nx = 1\n```\n\n## b\n") == []
    # the README's old bug: a toml fence left open runs to the closing line of a later fence
    assert open_fences("```toml\nx = 1\n\n## Editors\n\n```lua\nvim.lsp.enable()\n```\n") == [1]


def test_every_fence_is_closed():
    assert open_fences(README.read_text(encoding="utf-8")) == [], "a code fence is never closed"


def test_every_heading_renders_as_a_heading():
    text = README.read_text(encoding="utf-8")
    tokens = _tokens(text)
    rendered = {token.map[0] for token in tokens if token.type == "heading_open"}
    in_code = {line for token in tokens if token.type in ("fence", "code_block") for line in range(*token.map)}
    written = {number for number, line in enumerate(text.splitlines()) if re.match(r"#{1,6} ", line)}
    assert written - in_code == rendered
    titles = [tokens[i + 1].content for i, token in enumerate(tokens) if token.type == "heading_open"]
    for title in ("Command line", "Configuration", "With pre-commit", "With ruff",
                  "In your editor: the language server", "Editors"):
        assert title in titles


def _commands(text: str) -> list[str]:
    commands = []
    for token in _tokens(text):
        if token.type == "fence" and token.info.strip() == "sh":
            for line in token.content.splitlines():
                if line.startswith(("pallas-lint ", "flake8 ")):
                    commands.append(line)
    return commands


@pytest.fixture
def workspace(tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copy(EXAMPLE, tmp_path / "k.py")
    (tmp_path / "src" / "kernels").mkdir(parents=True)
    shutil.copy(EXAMPLE, tmp_path / "src" / "kernels" / "k.py")
    return tmp_path


def test_every_documented_command_runs(workspace):
    commands = _commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10 and "pallas-lint server                     # the language server, on stdio" in commands
    scripts = os.path.dirname(sys.executable)  # pallas-lint and flake8 of this environment
    env = {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", ""), "PALLAS_LINT_CACHE_DIR":
           str(workspace / ".cache")}
    env.pop("PALLAS_LINT_OUTPUT_FORMAT", None)
    for command in commands:
        result = subprocess.run(["bash", "-c", command], cwd=workspace, capture_output=True, text=True,
                                timeout=300, env=env, stdin=subprocess.DEVNULL)
        # 0 or 1 (findings); 2 is a usage error. The server, given no client, exits at once.
        assert result.returncode in (0, 1), (command, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "error:" not in result.stderr, (command, result.stderr)
    assert (workspace / "pallas.sarif").is_file()  # `-o pallas.sarif`


def _pre_commit_revs(text: str) -> list[str]:
    return re.findall(r"^\s*rev: (\S+)", text, re.M) + re.findall(r"pallas-lsp@(\w+)\"", text)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the git history")
def test_the_pre_commit_rev_exists_and_has_the_hooks():
    text = README.read_text(encoding="utf-8")
    ours = [rev for rev in _pre_commit_revs(text) if rev != "7.5.0"]  # flake8's tag, upstream
    assert ours and len(set(ours)) == 1
    (rev,) = set(ours)
    shown = subprocess.run(["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT, capture_output=True,
                           text=True)
    assert shown.returncode == 0, f"{rev} is not a commit or tag of this repository: {shown.stderr}"
    for hook in re.findall(r"- id: (pallas-lint\S*)", text):
        assert f"- id: {hook}\n" in shown.stdout


def _copy_of_the_sources(target: Path) -> Path:
    """What the wheel is built from, copied: setuptools builds in the source tree (`build/`,
    `*.egg-info`), and CI runs this test on two Pythons at once over one checkout."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    for package in ("pallas_lsp", "flake8_pallas"):
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_wheel_carries_the_licence_and_the_project_urls(tmp_path):
    import zipfile

    sources = _copy_of_the_sources(tmp_path / "src")
    # The test extra installs the build backend, so the build needs no download.
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(tmp_path), str(sources)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = Path(tmp_path).glob("pallas_lsp-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(name for name in names if name.endswith(".dist-info/METADATA"))).decode()
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    for label in ("Homepage", "Repository", "Issues"):
        assert f"Project-URL: {label}, https://github.com/pallas-lsp/pallas-lsp" in metadata
    assert metadata.count("Classifier: ") >= 10
