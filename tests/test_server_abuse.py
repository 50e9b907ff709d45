"""The server under abuse: malformed JSON-RPC, unknown methods, unopened documents, stale and
out-of-range edits, bursts, cancellation, lifecycle order. It stays up, answers the next
request, and its final diagnostics match the final text."""

from __future__ import annotations

import pytest

from conftest import ROOT
from server.raw_client import RawClient

EXAMPLE = (ROOT / "examples" / "collective_matmul.py").read_text()
FIXED_ACC = EXAMPLE.replace("jnp.float32),\n            barrier", "jnp.float32, collective=True),\n            barrier")


@pytest.fixture
def raw():
    client = RawClient()
    client.initialize()
    yield client
    client.close()


def _open(raw: RawClient, uri: str, text: str, version: int = 1) -> None:
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                         "version": version, "text": text}})


def _full_change(raw: RawClient, uri: str, version: int, text: str) -> None:
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                          "contentChanges": [{"text": text}]})


def _alive(raw: RawClient) -> None:
    response = raw.call("textDocument/hover", {"textDocument": {"uri": "file:///nowhere.py"},
                                               "position": {"line": 0, "character": 0}})
    assert "result" in response and response["result"] is None


def _codes(publish: dict) -> list[str]:
    return sorted(d["code"] for d in publish["diagnostics"])


def test_malformed_frames_and_unknown_methods(raw: RawClient):
    raw.raw(b"Content-Length: 12\r\n\r\n{not json!!}")
    raw.raw(b"Content-Length: 2\r\n\r\n[]")
    raw.send({"jsonrpc": "2.0", "id": 99, "method": "textDocument/hover", "params": {"bogus": 1}})
    raw.send({"jsonrpc": "2.0", "method": "no/suchNotification", "params": {}})
    unknown = raw.call("no/suchRequest", {})
    assert unknown["error"]["code"] == -32601  # MethodNotFound
    _alive(raw)
    assert raw.process.poll() is None


def test_unopened_and_closed_documents(raw: RawClient, tmp_path):
    uri = (tmp_path / "k.py").as_uri()
    # edits and requests for a document never opened
    _full_change(raw, uri, 2, EXAMPLE)
    for method, extra in [("textDocument/hover", {"position": {"line": 0, "character": 0}}),
                          ("textDocument/codeAction", {"range": {"start": {"line": 0, "character": 0},
                                                                 "end": {"line": 0, "character": 0}},
                                                       "context": {"diagnostics": []}}),
                          ("textDocument/diagnostic", {})]:
        response = raw.call(method, {"textDocument": {"uri": uri}, **extra})
        assert "result" in response or response["error"]["code"] != -32603, response
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    _open(raw, uri, EXAMPLE)
    raw.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["diagnostics"])
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})  # twice
    _alive(raw)
    assert raw.publishes(uri)[-1]["diagnostics"] == []


def test_stale_versions_and_ranges_outside_the_text(raw: RawClient, tmp_path):
    uri = (tmp_path / "k.py").as_uri()
    _open(raw, uri, EXAMPLE, version=5)
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 6}, "contentChanges": [
        {"range": {"start": {"line": 9999, "character": 0}, "end": {"line": 10000, "character": 5}}, "text": "x"},
    ]})
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 7}, "contentChanges": [
        {"range": {"start": {"line": 3, "character": 500}, "end": {"line": 1, "character": 0}}, "text": ""},
    ]})
    _full_change(raw, uri, 3, EXAMPLE + "\n")  # a version older than the current one
    _alive(raw)
    _full_change(raw, uri, 8, FIXED_ACC)
    final = raw.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["version"] == 8)
    assert _codes(final["params"]) == ["PLS002"]


def test_a_thousand_edits_in_a_burst(raw: RawClient, tmp_path):
    uri = (tmp_path / "k.py").as_uri()
    _open(raw, uri, EXAMPLE)
    for version in range(2, 1002):
        _full_change(raw, uri, version, EXAMPLE + f"# {version}\n")
    _full_change(raw, uri, 1002, FIXED_ACC)
    final = raw.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["version"] == 1002, timeout=120)
    assert _codes(final["params"]) == ["PLS002"]
    raw.drain(0.6)
    versions = [p["version"] for p in raw.publishes(uri)]
    assert versions[-1] == 1002 and len(versions) < 10, versions


def test_cancelled_requests_are_answered_as_cancelled(raw: RawClient, tmp_path):
    uri = (tmp_path / "k.py").as_uri()
    _open(raw, uri, EXAMPLE)
    _full_change(raw, uri, 2, EXAMPLE + "\n")  # hovers below wait for this version's analysis
    hovers = [raw.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 24, "character": 30}}) for _ in range(5)]
    for ident in hovers[:4]:
        raw.notify("$/cancelRequest", {"id": ident})
    answers = [raw.wait_response(ident) for ident in hovers]
    assert all(answer.get("error", {}).get("code") == -32800 for answer in answers[:4]), answers  # RequestCancelled
    assert "accumulator" in answers[4]["result"]["contents"]["value"]


def test_shutdown_then_exit(raw: RawClient):
    assert raw.call("shutdown")["result"] is None
    raw.notify("exit")
    assert raw.process.wait(timeout=30) == 0


def test_exit_without_shutdown():
    client = RawClient()
    client.initialize()
    client.notify("exit")
    assert client.process.wait(timeout=30) == 1  # as the specification says
