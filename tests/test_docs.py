import pytest

from conftest import ROOT
from pallas_lsp.analysis.rules import REGISTRY as RULES  # every documented code
from pallas_lsp.docs import page


def test_committed_rule_pages_match_the_rules():
    for rule in RULES:
        committed = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert committed == page(rule), f"run `python -m pallas_lsp.docs` to regenerate {rule.code}.md"


def test_readme_links_every_rule():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"docs/rules/{rule.code}.md" in readme


SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Fix safety",
            "## JAX message"]


def test_every_rule_documents_the_sections_in_order():
    for rule in RULES:
        lines = rule.documentation().splitlines()
        found = [line.strip() for line in lines if line.startswith("## ") or line.strip() == "Use instead:"]
        assert found == SECTIONS, f"{rule.code}: sections {found}, want {SECTIONS} (ruff's order)"
        text = rule.documentation()
        for heading, following in zip(SECTIONS, SECTIONS[1:]):
            body = text.split(heading, 1)[1].split(following, 1)[0]
            assert body.strip(), f"{rule.code}: {heading!r} is empty"
        example = text.split("## Example", 1)[1].split("## Fix safety", 1)[0]
        assert example.count("```python") == 2, f"{rule.code}: Example and Use instead each need code"


def test_rule_pages_link_from_the_one_docs_url():
    from pallas_lsp.analysis.rules import DOCS_BASE_URL, docs_url

    assert DOCS_BASE_URL.endswith("/docs/rules/")
    for rule in RULES:
        assert rule.url() == docs_url(rule.code) == f"{DOCS_BASE_URL}{rule.code}.md"
        assert (ROOT / "docs" / "rules" / f"{rule.code}.md").is_file()


def test_check_mode_names_stale_pages(tmp_path, capsys):
    from pallas_lsp.docs import main, write

    assert main(["--check", str(ROOT / "docs" / "rules")]) == 0
    pages = write(tmp_path)
    pages[2].write_text(pages[2].read_text(encoding="utf-8") + "\nedited by hand\n", encoding="utf-8")
    pages[0].unlink()
    assert main(["--check", str(tmp_path)]) == 1
    named = capsys.readouterr().err
    assert pages[0].name in named and pages[2].name in named and pages[1].name not in named


def test_an_option_is_never_taken_for_the_output_directory(tmp_path, monkeypatch, capsys):
    from pallas_lsp.docs import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0 and "usage:" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # it wrote its pages into ./--help/ once
