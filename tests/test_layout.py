"""The shape of the house (`DESIGN.md`): frontends import only `pallas_lsp.analysis`'s public
surface, the core imports no frontend, and the language server loads nothing the VS Code bundle
leaves out (flake8 and its checkers, tqdm)."""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / "pallas_lsp"
FRONTENDS = sorted([*PACKAGE.glob("*.py"), *(PACKAGE / "server").glob("*.py"), *(ROOT / "flake8_pallas").glob("*.py")])
CORE = sorted((PACKAGE / "analysis").rglob("*.py"))


def _imports(path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ".".join(path.relative_to(ROOT).parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names
                      if module == "pallas_lsp" and alias.name == "analysis"]
    return found


def test_frontends_import_only_the_public_surface():
    assert FRONTENDS and any(path.parent.name == "server" for path in FRONTENDS)
    deep = [f"{path.relative_to(ROOT)}:{line}: {module}" for path in FRONTENDS for line, module in _imports(path)
            if module.startswith("pallas_lsp.analysis.")]
    assert not deep, deep


def test_core_imports_no_frontend():
    frontends = ("pallas_lsp.server", "pallas_lsp.cli", "pallas_lsp.batch", "pallas_lsp.report",
                 "pallas_lsp.cache", "pallas_lsp.files", "pallas_lsp.docs", "flake8_pallas")
    upward = [f"{path.relative_to(ROOT)}:{line}: {module}" for path in CORE for line, module in _imports(path)
              if module.startswith(frontends)]
    assert CORE and not upward, upward


def test_server_loads_only_what_the_bundle_carries():
    script = (
        "import sys\n"
        "from pallas_lsp.server.server import create_server\n"
        "create_server()\n"
        "from pallas_lsp.analysis import analyze_file\n"
        f"assert analyze_file({str(ROOT / 'examples' / 'collective_matmul.py')!r}).findings\n"
        "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                check=True).stdout.split())
    assert {"pallas_lsp", "pygls", "astroid"} <= loaded
    assert not loaded & {"flake8", "flake8_pallas", "pyflakes", "pycodestyle", "mccabe", "tqdm"}
