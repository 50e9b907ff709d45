"""The rule catalog (what the frontends know of each rule without importing a check) is the
registry's metadata, entry by entry; and what needs only the catalog imports no astroid."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

from pallas_lsp.analysis import catalog
from pallas_lsp.analysis.rules import BY_CODE, REGISTRY, RULES

FIELDS = ("code", "name", "summary", "severity", "triggers", "identifiers")


def test_the_catalog_is_the_registry_metadata():
    expected = [catalog.RuleInfo(*(getattr(rule, field) for field in FIELDS)) for rule in REGISTRY]
    assert list(catalog.CATALOG) == expected, (
        "pallas_lsp/analysis/catalog.py must list every rule of rules.REGISTRY, in its order, with the "
        "same code, name, summary, severity, triggers and identifiers")
    assert [info.code for info in catalog.CHECKS] == [rule.code for rule in RULES]
    assert list(catalog.RULE_INFO) == list(BY_CODE)
    assert all(info.url() == rule.url() for info, rule in zip(catalog.CATALOG, REGISTRY, strict=True))


def test_settings_selection_prefilter_and_output_import_no_astroid(tmp_path):
    """A file without a trigger word goes through settings, the prefilter and the concise
    output with the engine (and astroid) never imported."""
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1  # noqa: PLS999\n", encoding="utf-8")
    script = (
        "import sys\n"
        "from pallas_lsp.cli import main\n"
        f"status = main(['check', '--no-cache', '--select', 'PLS0,PLS100', {str(clean)!r}])\n"
        "print('LOADED', ' '.join(sorted(name for name in sys.modules if name.startswith(('astroid', "
        "'pallas_lsp.analysis.engine', 'pallas_lsp.analysis.rules')))))\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 1, done.stderr  # PLS100: the unknown code in the noqa comment
    assert "PLS100" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "LOADED", done.stdout
