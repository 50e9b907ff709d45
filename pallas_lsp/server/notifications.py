"""The notifications the server handles, one small function each (as ruff's
`server/api/notifications/*.rs`): they update the session and tell the scheduler what to
analyse again. None of them answers the client."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING

from lsprotocol import types as t

from pallas_lsp import analysis as core

from .features import feature
from .units import path_of

if TYPE_CHECKING:
    from .server import PallasServer

log = logging.getLogger("pallas_lsp.server")

WATCHED = ("**/pyproject.toml", "**/*.py")


def _is_pyproject(path: str | None) -> bool:
    return bool(path) and os.path.basename(path or "") == "pyproject.toml"


# -- lifecycle and workspace -----------------------------------------------------------------

@feature(t.INITIALIZED)
async def initialized(ls: PallasServer, params: t.InitializedParams) -> None:
    ls.log_handler.attach(asyncio.get_running_loop())
    await ls.session.load_configuration()
    await _watch_files(ls)
    ls.scheduler.relint_all()


@feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: PallasServer, params: t.DidChangeConfigurationParams) -> None:
    if ls.session.configuration:
        await ls.session.load_configuration()
    else:
        ls.session.take_pushed_settings(params.settings)
    ls.scheduler.relint_all()


@feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def did_change_workspace_folders(ls: PallasServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
    await ls.session.load_configuration()  # per-folder settings for the new set of folders
    ls.scheduler.relint_all()


@feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: PallasServer, params: t.DidChangeWatchedFilesParams) -> None:
    paths = [path_of(change.uri) for change in params.changes]
    core.forget_project_imports()  # which project modules may meet jax: read again
    if any(_is_pyproject(path) for path in paths):
        ls.scheduler.relint_all()
        return
    for path in paths:
        if path and path.endswith(".py"):
            ls.scheduler.relint_dependents(path)


# -- text documents --------------------------------------------------------------------------

@feature(t.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: PallasServer, params: t.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.scheduler.schedule(uri)
    ls.scheduler.relint_reporters(uri)


@feature(t.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: PallasServer, params: t.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.scheduler.on_edit(uri, path_of(uri))


@feature(t.TEXT_DOCUMENT_DID_SAVE, t.SaveOptions(include_text=False))
def did_save(ls: PallasServer, params: t.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = path_of(uri)
    core.forget_project_imports()  # which project modules may meet jax: read again
    if _is_pyproject(path):
        ls.scheduler.relint_all()
        return
    if ls.session.editor_settings(path).run == "onSave":
        ls.scheduler.schedule(uri)
    if path:
        ls.scheduler.relint_dependents(path)


@feature(t.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PallasServer, params: t.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.scheduler.close(uri)
    path = path_of(uri)
    if path:  # who read its unsaved text reads the file on disk now
        ls.scheduler.relint_dependents(path)


# -- notebooks -------------------------------------------------------------------------------

@feature(t.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: PallasServer, params: t.DidOpenNotebookDocumentParams) -> None:
    ls.scheduler.schedule(params.notebook_document.uri)


@feature(t.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: PallasServer, params: t.DidChangeNotebookDocumentParams) -> None:
    ls.scheduler.on_edit(params.notebook_document.uri, None)


@feature(t.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: PallasServer, params: t.DidSaveNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    if ls.session.editor_settings(path_of(uri)).run == "onSave":
        ls.scheduler.schedule(uri)


@feature(t.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: PallasServer, params: t.DidCloseNotebookDocumentParams) -> None:
    ls.scheduler.close(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])


async def _watch_files(ls: PallasServer) -> None:
    """Ask the client to tell us about changed Python files and pyprojects."""
    if not ls.session.watch_registration:
        return
    options = t.DidChangeWatchedFilesRegistrationOptions(
        watchers=[t.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED])
    registration = t.Registration(id="pallas-watch", method=t.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                  register_options=options)
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(t.RegistrationParams(registrations=[registration])), 10)
    except Exception as error:  # noqa: BLE001 - the editor simply won't tell us about files
        log.info("could not watch files: %s", error)
