"""A bare JSON-RPC client over the server's stdio, for abuse that pytest-lsp would refuse to
send (malformed frames, unknown methods, out-of-order lifecycle)."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any

SERVER = [sys.executable, "-m", "pallas_lsp"]


class RawClient:
    def __init__(self) -> None:
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self.ids = itertools.count(1)
        self.inbox: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self.responses: dict[Any, dict] = {}
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr: list[bytes] = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.inbox.put(json.loads(body))

    # -- sending ---------------------------------------------------------------------------

    def raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None) -> int:
        ident = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return ident

    def call(self, method: str, params: Any = None, timeout: float = 60) -> dict:
        return self.wait_response(self.request(method, params), timeout)

    # -- receiving -------------------------------------------------------------------------

    def _pump(self, timeout: float) -> None:
        message = self.inbox.get(timeout=timeout)
        if "id" in message and "method" in message:  # a request from the server
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": _answer(message)})
        elif "id" in message:
            self.responses[message["id"]] = message
        else:
            self.notifications.append(message)

    def wait_response(self, ident: Any, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while ident not in self.responses:
            self._pump(max(0.01, deadline - time.monotonic()))
        return self.responses[ident]

    def wait_for(self, predicate, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.notifications:
                if predicate(message):
                    return message
            self._pump(max(0.01, deadline - time.monotonic()))

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._pump(max(0.01, deadline - time.monotonic()))
            except queue.Empty:  # noqa: PERF203 - the end of the wait
                return

    def publishes(self, uri: str) -> list[dict]:
        return [m["params"] for m in self.notifications
                if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]

    def initialize(self) -> dict:
        result = self.call("initialize", {"processId": None, "rootUri": None, "capabilities": {
            "textDocument": {"publishDiagnostics": {"relatedInformation": True}}}})
        self.notify("initialized", {})
        return result

    def close(self) -> int:
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait(timeout=30)


def _answer(request: dict) -> Any:
    if request["method"] == "workspace/configuration":
        return [None for _ in request["params"]["items"]]
    return None
