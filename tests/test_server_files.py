"""Diagnostics in a file other than the one analysed: a helper module holding the MMA that JAX
names. They are published for the helper (pushed or pulled), merged with the helper's own, and
cleared when their cause in the kernel goes away or the kernel is closed.

The server runs over `server/foreign_core.py`, which places these findings in the helper."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import TESTS
from server.lsp_helpers import change, diagnostics, open_file, record_publishes

SERVER = [sys.executable, str(TESTS / "server" / "foreign_core.py")]

HELPER = """\
from jax.experimental.pallas import mosaic_gpu as plgpu


def issue_mma(acc, a, b, barrier):
    plgpu.tcgen05_mma(acc, a, b, barrier, collective_axis="x")
"""

KERNEL = """\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from mma_helpers import issue_mma

M, K, N = 128, 64, 128


def matmul(a, b):
    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):
        issue_mma(acc_tmem, a_smem, b_smem, barrier)

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
        cluster=(2,),
        cluster_names=("x",),
        scratch_types=dict(
            a_smem=plgpu.SMEM((M, K), jnp.float16),
            b_smem=plgpu.SMEM((K, N), jnp.float16),
            acc_tmem=plgpu.TMEM((M, 2 * N), jnp.float32),
            barrier=plgpu.Barrier(orders_tensor_core=True),
        ),
    )(a, b)
"""
FIXED = KERNEL.replace("jnp.float32),\n            barrier", "jnp.float32, collective=True),\n            barrier")
MMA_LINE = 4  # 0-based line of the MMA in HELPER


def _session(profile: str):
    async def session(lsp_client: LanguageClient):
        lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)(lambda ls, params: None)
        await lsp_client.initialize_session(t.InitializeParams(capabilities=client_capabilities(profile)))
        yield
        await lsp_client.shutdown_session()
    return session


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def vscode(lsp_client: LanguageClient):
    async for _ in _session("visual-studio-code")(lsp_client):
        yield


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def neovim(lsp_client: LanguageClient):
    async for _ in _session("neovim")(lsp_client):
        yield


@pytest.fixture
def project(tmp_path):
    (tmp_path / "mma_helpers.py").write_text(HELPER)
    (tmp_path / "kernel.py").write_text(KERNEL)
    return tmp_path / "kernel.py", tmp_path / "mma_helpers.py"


async def _until(predicate, timeout: float = 30) -> None:
    async def wait():
        while not predicate():
            await asyncio.sleep(0.02)
    await asyncio.wait_for(wait(), timeout)


def _codes(client: LanguageClient, uri: str) -> list[str]:
    return [d.code for d in client.diagnostics.get(uri, [])]


async def test_pushed_to_the_helper_and_cleared_when_fixed(vscode: LanguageClient, project):
    kernel, helper = project
    helper_uri = helper.as_uri()
    seen = record_publishes(vscode)
    uri = open_file(vscode, kernel)
    await _until(lambda: _codes(vscode, helper_uri) == ["PLS001"])
    [found] = vscode.diagnostics[helper_uri]
    assert found.range.start == t.Position(MMA_LINE, HELPER.splitlines()[MMA_LINE].index("plgpu.tcgen05_mma"))
    assert "Accumulator 'acc_tmem' must be collective" in found.message
    assert found.related_information[0].location.uri == uri  # the allocation, in the kernel
    assert await diagnostics(vscode, uri) == []  # nothing left on the kernel's call of the helper
    publish = next(p for p in seen if p.uri == helper_uri)
    assert publish.version is None  # the helper is not open: the file on disk
    # the fix that removes the cause in the kernel clears the helper
    change(vscode, uri, 2, FIXED)
    await _until(lambda: helper_uri in vscode.diagnostics and not vscode.diagnostics[helper_uri])
    change(vscode, uri, 3, KERNEL)
    await _until(lambda: _codes(vscode, helper_uri) == ["PLS001"])


async def test_helper_open_edited_then_kernel_closed(vscode: LanguageClient, project):
    kernel, helper = project
    uri = open_file(vscode, kernel)
    helper_uri = helper.as_uri()
    await _until(lambda: _codes(vscode, helper_uri) == ["PLS001"])
    # opening the helper: its own analysis (nothing of its own) is merged with the kernel's
    open_file(vscode, helper)
    seen = record_publishes(vscode)
    await asyncio.sleep(1.0)
    assert _codes(vscode, helper_uri) == ["PLS001"]
    assert all(_codes_of(p) == ["PLS001"] for p in seen if p.uri == helper_uri), seen
    # an unsaved edit of the helper moves the MMA a line down: the kernel is analysed again
    change(vscode, helper_uri, 2, "# a comment\n" + HELPER)
    await _until(lambda: [d.range.start.line for d in vscode.diagnostics.get(helper_uri, [])] == [MMA_LINE + 1])
    assert [p.version for p in seen if p.uri == helper_uri][-1] == 2
    # closing the kernel takes its diagnostics off the helper
    vscode.text_document_did_close(t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(uri=uri)))
    await _until(lambda: helper_uri in vscode.diagnostics and not vscode.diagnostics[helper_uri])


def _codes_of(publish: t.PublishDiagnosticsParams) -> list[str]:
    return [d.code for d in publish.diagnostics]


async def test_pulled_for_the_helper(neovim: LanguageClient, project):
    kernel, helper = project
    uri = open_file(neovim, kernel)
    assert await diagnostics(neovim, uri) == []
    helper_uri = open_file(neovim, helper)
    # the kernel reports in the helper once it has read the helper's open text
    await _until_pulled(neovim, helper_uri, ["PLS001"])
    change(neovim, uri, 2, FIXED)
    assert [d.code for d in await diagnostics(neovim, helper_uri)] == []  # waits for the kernel's analysis
    await asyncio.sleep(0.5)
    assert helper_uri not in neovim.diagnostics  # a client that pulls is never pushed to


async def _until_pulled(client: LanguageClient, uri: str, codes: list[str], timeout: float = 30) -> None:
    async def wait():
        while [d.code for d in await diagnostics(client, uri)] != codes:
            await asyncio.sleep(0.1)
    await asyncio.wait_for(wait(), timeout)
