"""Where real Pallas Mosaic GPU code comes from (standard library only).

- JAX: a git repository (a bare mirror or a checkout; `jax/experimental/pallas/ops/gpu/`,
  `tests/pallas/`, `docs/pallas/gpu/*.md`), else the installed `jax` package (its ops only);
- tokamax: a git repository or checkout, else the installed `tokamax` package.

A bare repository's files are exported (`git archive`) to a directory of their own so that
the linter reads the other modules of the project as it would in a checkout. A Markdown page
becomes a Python file of the same lines: the `python` code blocks that are whole programs
kept where they are, everything else blank, and on line 1 (the page's title) the imports the
tutorials take for granted.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import os
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

JAX_PATHS = ("jax/experimental/pallas/ops/gpu", "tests/pallas", "docs/pallas/gpu")
TOKAMAX_PATHS = ("tokamax",)
# The names the tutorials use without importing them (line 1 of a page made Python).
DOC_IMPORTS = (
    "import dataclasses; import functools; import itertools; import math; import jax; "
    "from jax import lax; import jax.numpy as jnp; import numpy as np; "
    "from jax.experimental import pallas as pl; from jax.experimental.pallas import mosaic_gpu as plgpu; "
    "from jax.extend import backend"
)
BLACKWELL = re.compile(r"tcgen05|\bTMEM\b")


@dataclass(frozen=True)
class Source:
    origin: str  # "jax" or "tokamax"
    rel: str  # path inside its project, e.g. "tests/pallas/mosaic_gpu_test.py"
    path: Path  # where the linter reads it (a Markdown page: the page itself)
    root: Path  # the project's root (what goes on sys.path)
    text: str  # Python source (a page: made Python)
    revision: str  # the git commit, or "<package> <version>"
    installed: bool = False  # an installed package: each interpreter imports its own

    @property
    def label(self) -> str:
        return f"{self.origin}:{self.rel}"

    @property
    def blackwell(self) -> bool:
        return bool(BLACKWELL.search(self.text))

    @property
    def is_doc(self) -> bool:
        return self.rel.endswith(".md")

    @property
    def lint_path(self) -> str:
        """The path the linter is told (a page: a .py beside it, which need not exist)."""
        return str(self.path) + (".py" if self.is_doc else "")

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def _whole_program(block: str) -> bool:
    """Parses, and has no `...` standing for code left out."""
    try:
        tree = ast.parse(block)
    except SyntaxError:
        return False
    return not any(
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis
        for node in ast.walk(tree)
    )


def markdown_to_python(text: str) -> str:
    """The page's whole-program `python` blocks at their own lines, all else blank."""
    lines = text.splitlines()
    out = [""] * len(lines)
    i = 0
    while i < len(lines):
        if lines[i].strip() in ("```python", "```{code-cell} ipython3"):
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            block = "\n".join(lines[i + 1:j])
            if _whole_program(block):
                out[i + 1:j] = lines[i + 1:j]
            i = j + 1
        else:
            i += 1
    if out:
        out[0] = DOC_IMPORTS
    return "\n".join(out) + "\n"


def _git_dir(path: Path) -> Path | None:
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return path  # bare
    if (path / ".git").exists():
        return path / ".git"
    if (path / "repo" / "HEAD").is_file():
        return path / "repo"  # a fetch-tool mirror directory
    return None


def export_git(git_dir: Path, paths: tuple[str, ...], name: str) -> tuple[Path, str]:
    """`paths` of HEAD exported under a directory keyed by the commit (made once)."""
    commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    target = Path(tempfile.gettempdir()) / f"pallas-realcode-{name}-{commit[:12]}"
    done = target / ".exported"
    if not done.exists():
        listed = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", "HEAD", "--", *paths],
                                capture_output=True, text=True, check=True).stdout.split()
        data = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", "HEAD", "--", *listed],
                              capture_output=True, check=True).stdout
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(target, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(target)
        done.write_text(commit)
    return target, commit


def _installed(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _version(package: str) -> str:
    try:
        from importlib.metadata import version
        return f"{package} {version(package)}"
    except Exception:  # noqa: BLE001 - a label only
        return package


def _read(origin, root, rel, revision, installed=False) -> Source | None:
    path = root / rel
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if rel.endswith(".md"):
        text = markdown_to_python(text)
    return Source(origin, rel, path, root, text, revision, installed)


def _walk(origin: str, root: Path, paths: tuple[str, ...], revision: str, installed=False) -> list[Source]:
    out = []
    for top in paths:
        base = root / top
        if not base.exists():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix == ".py" or (path.suffix == ".md" and top.startswith("docs")):
                source = _read(origin, root, path.relative_to(root).as_posix(), revision, installed)
                if source is not None:
                    out.append(source)
    return out


def jax_sources(location: str | None = None) -> list[Source]:
    """JAX's repository at `location` (or $PALLAS_REALCODE_JAX), else the installed package."""
    location = location or os.environ.get("PALLAS_REALCODE_JAX")
    if location:
        path = Path(location)
        git_dir = _git_dir(path)
        if git_dir is not None and (git_dir == path or git_dir.name == "repo"):
            root, commit = export_git(git_dir, JAX_PATHS, "jax")
            return _walk("jax", root, JAX_PATHS, commit[:12])
        return _walk("jax", path, JAX_PATHS, "checkout")
    package = _installed("jax")
    if package is None:
        return []
    return _walk("jax", package.parent, ("jax/experimental/pallas/ops/gpu",), _version("jax"), True)


def tokamax_sources(location: str | None = None) -> list[Source]:
    """tokamax's repository at `location` (or $PALLAS_REALCODE_TOKAMAX), else the installed package."""
    location = location or os.environ.get("PALLAS_REALCODE_TOKAMAX")
    if location:
        path = Path(location)
        git_dir = _git_dir(path)
        if git_dir is not None and (git_dir == path or git_dir.name == "repo"):
            root, commit = export_git(git_dir, TOKAMAX_PATHS, "tokamax")
            return _walk("tokamax", root, TOKAMAX_PATHS, commit[:12])
        return _walk("tokamax", path, TOKAMAX_PATHS, "checkout")
    package = _installed("tokamax")
    if package is None:
        return []
    return _walk("tokamax", package.parent, TOKAMAX_PATHS, _version("tokamax"), True)
