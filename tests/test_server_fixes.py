"""Every preferred quick fix the server offers on a fixture, applied as an editor would:
the result re-analyses without that finding, and real JAX traces it without the error."""

from __future__ import annotations

import asyncio
import concurrent.futures
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
from pallas_lsp.analysis import analyze_file  # noqa: E402

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


def _published_pls001(client: LanguageClient, root: Path) -> list[tuple[str, t.Diagnostic]]:
    """(uri, diagnostic) of every PLS001 published for a file of the project: the opened
    file's own, and a helper module's whose MMA it calls."""
    found = []
    for uri, diagnostics in client.diagnostics.items():
        if Path(to_fs_path(uri)).is_relative_to(root):
            found += [(uri, d) for d in diagnostics if d.code == "PLS001"]
    return found


def _line_in(uri: str, diagnostic: t.Diagnostic, opened: str) -> int:
    """The opened file's line of a diagnostic: its own, or where it reaches a helper's MMA."""
    if uri == opened:
        return diagnostic.range.start.line + 1
    for related in diagnostic.related_information or ():
        if related.location.uri == opened:
            return related.location.range.start.line + 1
    return -1


async def _settled(client: LanguageClient, uri: str) -> None:
    """The opened file's diagnostics, then a moment for the other files' publishes."""
    await next_publish(client, uri)
    await asyncio.sleep(0.5)


async def _apply_preferred_fixes(client: LanguageClient, path: Path) -> int:
    """Apply preferred PLS001 fixes one at a time until none is left; return how many."""
    uri = open_file(client, path)
    root = path.parent
    text, version, applied = path.read_text(), 1, 0
    if uri not in client.diagnostics:
        await _settled(client, uri)
    for _ in range(10):
        for target_uri, diagnostic in _published_pls001(client, root):
            actions = await client.text_document_code_action_async(t.CodeActionParams(
                text_document=t.TextDocumentIdentifier(uri=target_uri), range=diagnostic.range,
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
        await _settled(client, uri)
    path.write_text(text)
    return applied


def _with_preferred_fixes() -> set[str]:
    """The traced fixtures where the analysis offers a preferred fix for some PLS001 finding."""
    return {path.name for path in TRACED if any(
        finding.code == "PLS001" and any(fix.preferred for fix in finding.fixes)
        for finding in analyze_file(str(path)).findings)}


async def test_preferred_fixes_satisfy_jax(vscode: LanguageClient, tmp_path):
    """One server session fixes every fixture (each in its own copy of the fixtures), then JAX
    traces the fixed files, two at a time."""
    fixed: dict[str, tuple[Path, list]] = {}
    for fixture in TRACED:
        root = tmp_path / fixture.stem
        shutil.copytree(FIXTURES, root)
        path = root / fixture.name
        if await _apply_preferred_fixes(vscode, path):
            opened = path.as_uri()
            remaining = {_line_in(u, d, opened) for u, d in _published_pls001(vscode, root)}
            fixed[fixture.name] = (path, remaining)
    # every fixture whose PLS001 findings offer a preferred fix is fixed (the rest have only
    # unsafe fixes, or none: a config's flag, a value from another module)
    assert _with_preferred_fixes() <= set(fixed), sorted(_with_preferred_fixes() - set(fixed))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = dict(zip(fixed, pool.map(lambda item: run_fixture(item[0]), fixed.values())))
    problems = {}
    for name, verdict in verdicts.items():
        if verdict.get("error"):
            problems[name] = verdict["error"]
            continue
        remaining_lines = fixed[name][1]
        for case in verdict["cases"]:
            trace = case["trace"] or {}
            if "error" in trace:
                problems[f"{name}::{case['name']}"] = trace
            # whatever JAX still reports must be a finding we still report (one with no safe fix)
            elif trace.get("code") == "PLS001" and trace["line"] not in remaining_lines:
                problems[f"{name}::{case['name']}"] = trace
    assert not problems, problems
