from conftest import ROOT
from pallas_lsp.analysis.rules import RULES
from pallas_lsp.docs import page


def test_committed_rule_pages_match_the_rules():
    for rule in RULES:
        committed = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert committed == page(rule), f"run `python -m pallas_lsp.docs` to regenerate {rule.code}.md"


def test_readme_links_every_rule():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"docs/rules/{rule.code}.md" in readme
