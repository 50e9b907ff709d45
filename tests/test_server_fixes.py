"""Every preferred quick fix the server offers on a fixture, applied as an editor would:
the result re-analyses without that finding, and real JAX traces it without the error."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import TESTS
from oracle import markers
from server.lsp_helpers import apply, change, edits_by_uri, next_publish, open_file

jax = pytest.importorskip("jax")
from oracle.runner import run_fixture  # noqa: E402

FIXTURES = TESTS / "fixtures"
# Fixtures with trace-time PLS001 markers: JAX raises until the fix is applied.
TRACED = sorted(
    path for path in FIXTURES.glob("*.py")
    if any(m.code == "PLS001" and m.kind == "trace" for m in markers.parse_markers(path))
    and markers.version_allowed(path, jax.__version__)
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp"]))
async def vscode(lsp_client: LanguageClient):
    lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)(lambda ls, params: None)
    await lsp_client.initialize_session(t.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


async def _apply_preferred_fixes(client: LanguageClient, path: Path) -> int:
    """Apply preferred PLS001 fixes one at a time until none is left; return how many."""
    uri = open_file(client, path)
    text, version, applied = path.read_text(), 1, 0
    found = await next_publish(client, uri) if uri not in client.diagnostics else list(client.diagnostics[uri])
    for _ in range(10):
        for diagnostic in (d for d in found if d.code == "PLS001"):
            actions = await client.text_document_code_action_async(t.CodeActionParams(
                text_document=t.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
                context=t.CodeActionContext(diagnostics=[diagnostic])))
            preferred = [a for a in actions or () if a.is_preferred]
            if preferred:
                break
        else:
            break
        for target, edits in edits_by_uri(preferred[0].edit).items():
            if target == uri:
                text = apply(text, edits, "utf-16")
            else:  # another file of the project: written as the editor would save it
                other = Path(to_fs_path(target))
                other.write_text(apply(other.read_text(), edits, "utf-16"))
        version += 1
        applied += 1
        change(client, uri, version, text)
        found = await next_publish(client, uri)
    path.write_text(text)
    return applied


@pytest.mark.parametrize("fixture", TRACED, ids=[p.name for p in TRACED])
async def test_preferred_fix_satisfies_jax(vscode: LanguageClient, fixture: Path, tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    path = tmp_path / "fixtures" / fixture.name
    applied = await _apply_preferred_fixes(vscode, path)
    if not applied:
        pytest.skip("no preferred (safe) fix offered here: the flag is an expression")
    verdict = run_fixture(path)
    assert not verdict.get("error"), verdict["error"]
    errors = [case for case in verdict["cases"] if case["trace"] and case["trace"].get("code") == "PLS001"]
    remaining = [d for d in vscode.diagnostics.get(path.as_uri(), []) if d.code == "PLS001"]
    # whatever JAX still reports must be a finding we still report (one with no safe fix)
    assert {c["trace"]["line"] for c in errors} <= {d.range.start.line + 1 for d in remaining}
    assert not any("error" in (case["trace"] or {}) for case in verdict["cases"])
