"""The LSP door of the feature table: ``qodeassist/<feature>/<op>`` for every operation.

`setup` reads the feature table (``workbench/features.py``: the built-ins and the plugins of
the ``qodeassist_lsp.features`` entry-point group), builds it once with the server's services —
its folders, the workbench's ignore rule and confinement (reached on first use), ``$/progress``
as the progress port — hands it to the workbench through ``server.ports``, and registers one
method per operation. A request waits for the configuration's first load; its params are
validated by the operation's request model (-32602 naming each field) and its errors answered
by `errors.answering` through the one error table; a method of no operation is pygls's -32601.
Each feature's ``start`` runs once the configuration has loaded, its status part joins
``qodeassist/status`` under its name (``QodeAssistServer.status``), and it hears of
``workspace/didChangeWatchedFiles`` and of every open, change and close.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from qodeassist_lsp.core.operations import FileChange
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.progress import WorkDoneProgress

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.core.operations import FileChangeKind, ProgressTask
    from qodeassist_lsp.lsp.server import QodeAssistServer
    from qodeassist_lsp.workbench.features import FeatureTable

log = logging.getLogger("qodeassist.features")

METHOD_PREFIX = "qodeassist/"
"""What every operation's method starts with: ``qodeassist/<feature>/<op>``."""

_WATCHED: dict[int, FileChangeKind] = {
    types.FileChangeType.Created.value: "created",
    types.FileChangeType.Changed.value: "changed",
    types.FileChangeType.Deleted.value: "deleted",
}


class LspProgress:
    """The features' progress port: ``$/progress`` with a token the server creates."""

    def __init__(self, server: QodeAssistServer) -> None:
        """Report through ``server``."""
        self._server = server

    async def begin(self, title: str, message: str = "") -> ProgressTask:
        """Create a token (when the client supports it) and report the start of ``title``."""
        task = WorkDoneProgress(self._server, None, title)
        await task.begin(message=message, cancellable=None)
        return task


class OperationsFeature(LanguageFeature):
    """The feature table's share of the server's lifecycle: start, reload, close."""

    def __init__(self, table: FeatureTable) -> None:
        """Drive ``table``."""
        self.table = table

    async def initialized(self) -> None:
        """Build the features (in a worker thread), then start their background work."""
        await asyncio.to_thread(self.table.build)
        self.table.start()

    def reloaded(self, config: Configuration) -> None:
        """Tell the features the configuration reloaded."""
        self.table.reloaded()

    async def aclose(self) -> None:
        """Close every feature."""
        await self.table.aclose()


class FileWatch(LanguageFeature):
    """Asks the client to report files changed on disk, for the features that follow them.

    Registered dynamically (``client/registerCapability``) for clients that offer it, with one
    ``**/*`` watcher; the changes arrive as ``workspace/didChangeWatchedFiles``.
    """

    def __init__(self, server: QodeAssistServer, table: FeatureTable) -> None:
        """Register with the client of ``server`` when a feature of ``table`` follows files."""
        self.server = server
        self.table = table
        self._task: asyncio.Task[None] | None = None

    async def initialized(self) -> None:
        """Register the watcher in the background (a slow client holds up nothing)."""
        if not any(f.files_changed is not None for f in self.table.features.values()):
            return
        workspace = self.server.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace is not None else None
        if watched is not None and watched.dynamic_registration:
            self._task = asyncio.create_task(self._register(), name="qa-file-watch")

    async def _register(self) -> None:
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
        )
        registration = types.Registration(
            id=f"qodeassist-files-{uuid.uuid4()}",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await self.server.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:  # the client refused: the features follow edits and saves only
            log.info("the client did not register the file watcher: %s", exc)

    async def aclose(self) -> None:
        """Stop a registration still under way."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


def _handler(table: FeatureTable, path: str, summary: str) -> Any:
    async def operation(ls: QodeAssistServer, params: Any) -> dict[str, Any]:
        await ls.backend.runtime()  # as at the other doors: the configuration has loaded
        if not table.built:  # asked before `initialized` built it
            await asyncio.to_thread(table.build)
        return await table.operation(path).call(params)

    operation.__doc__ = f"Answer ``qodeassist/{path}``: {summary}"
    operation.__qualname__ = operation.__name__ = f"operation_{path.replace('/', '_')}"
    return operation


def did_change_watched_files(
    ls: QodeAssistServer, params: types.DidChangeWatchedFilesParams
) -> None:
    """Tell the features of files created, changed or deleted on disk."""
    table = ls.ports.features
    if table is None:
        return
    changes: list[FileChange] = []
    for event in params.changes:
        path = to_fs_path(event.uri)
        kind = _WATCHED.get(int(event.type))
        if path and kind is not None:
            changes.append(FileChange(path=Path(path), kind=kind))
    table.files_changed(changes)


def setup(server: QodeAssistServer) -> None:
    """Read the feature table and register a method per operation on ``server``.

    When every row names its operations, the features are built after ``initialize`` (in a
    worker thread, at ``initialized``) and their methods registered by those names, so no
    operation's models are imported before the answer; otherwise the table is built here.
    """
    from qodeassist_lsp.workbench import features

    specs = features.feature_specs()
    table = features.FeatureTable(
        specs,
        features.services(
            server.backend,
            server.workspace_folders,
            ignored_by=lambda path: server.workbench().ignored_by(path),
            confinement=lambda: server.workbench().confinement(),
            progress=LspProgress(server),
        ),
        lazy=all(spec.operations for spec in specs),
    )
    table.watch(server.documents)
    server.ports.features = table
    server.add_feature(OperationsFeature(table))
    if table.built:
        paths = {path: bound.operation.summary for path, bound in table.operations().items()}
    else:
        paths = {f"{spec.name}/{op}": spec.summary for spec in specs for op in spec.operations}
    for path, summary in paths.items():
        server.feature(METHOD_PREFIX + path)(_handler(table, path, summary))
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
    server.add_feature(FileWatch(server, table))
