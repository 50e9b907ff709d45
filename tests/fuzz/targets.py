"""Each frontend as a function of one input; an exception escaping is a crash."""

from __future__ import annotations

import ast
import os
import tempfile
from typing import Any

from pallas_lsp.analysis import analyze_bytes

BUDGET = 2.0


def core(data: bytes, directory: str) -> Any:
    return analyze_bytes(data, os.path.join(directory, "mutant.py"), budget=BUDGET)


def flake8_plugin(data: bytes, directory: str) -> Any:
    from flake8_pallas import PallasChecker

    text = data.decode("utf-8", errors="surrogateescape")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None  # flake8 reports E999 and never runs plugins on such a file
    PallasChecker.overrides = {"budget": BUDGET}
    return list(PallasChecker(tree, os.path.join(directory, "mutant.py"), text.splitlines(True)).run())


def cli(data: bytes, directory: str) -> Any:
    try:
        from pallas_lsp.cli import main
    except ImportError:
        return None
    path = os.path.join(directory, "mutant.py")
    with open(path, "wb") as file:
        file.write(data)
    with open(os.devnull, "w") as null:
        import contextlib

        with contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
            code = main(["check", "--exit-zero", path])
    if code not in (0, 1):
        raise RuntimeError(f"pallas-lint exited with {code}")
    return code


class Server:
    """One server process for many inputs; a crash is the process dying or not answering."""

    def __init__(self) -> None:
        from server.raw_client import RawClient

        self.client = RawClient()
        self.client.initialize()
        self.version = 1
        self.uri = "file://" + os.path.join(tempfile.gettempdir(), "pallas-fuzz", "mutant.py")
        self.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": self.uri, "languageId": "python", "version": 1, "text": ""}})

    def __call__(self, data: bytes, directory: str) -> Any:
        self.version += 1
        text = data.decode("utf-8", errors="replace")
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version},
                                                      "contentChanges": [{"text": text}]})
        response = self.client.call("textDocument/hover", {"textDocument": {"uri": self.uri},
                                                           "position": {"line": 3, "character": 4}}, timeout=60)
        if "error" in response:
            raise RuntimeError(f"hover failed: {response['error']}")
        if self.client.process.poll() is not None:
            raise RuntimeError("server died")
        return response

    def close(self) -> None:
        self.client.close()
