"""The MCP client hub in the language server (the workbench's): its servers and their state.

The hub's servers' state is in ``qodeassist/status`` (key ``mcp``); its tools join every tool
session.

The servers of ``mcp.json`` are started in the background once the configuration is loaded (not
lazily on a first chat: a session's tools are fixed when it is created, so they must be listed
by then), reconfigured on every reload and stopped on ``shutdown``. A project's server asks the
user first through ``window/showMessageRequest``; no answer, or a client that cannot ask, means
it does not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.problems import ConfigProblem
    from qodeassist_lsp.mcp.definitions import ServerDefinition
    from qodeassist_lsp.mcp.hub import McpHub

log = logging.getLogger("qodeassist.server")

ALLOW = "Allow"
DENY = "Don't allow"


class EditorApprovalAsker:
    """Asks the user, through the editor, whether a project's MCP server may start."""

    def __init__(self, server: QodeAssistServer) -> None:
        """Ask through ``server``'s client."""
        self._server = server

    async def approve(self, project: Path, server: ServerDefinition) -> bool:
        """Return True when the user picks "Allow"."""
        window = self._server.client_capabilities.window
        if window is None or window.show_message is None:
            log.warning(
                "MCP server %s not started: the editor cannot ask for approval", server.name
            )
            return False
        answer = await self._server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"The project {project.name} ({server.file}) wants to start the MCP "
                f"server {server.name!r}: {server.describe()}. Allow it? (asked once per "
                "definition)",
                actions=[types.MessageActionItem(ALLOW), types.MessageActionItem(DENY)],
            )
        )
        return answer is not None and answer.title == ALLOW


class McpFeature(LanguageFeature):
    """Owns the hub for the server's lifetime."""

    status_key = "mcp"

    def __init__(self, server: QodeAssistServer) -> None:
        self._server = server
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False
        self._lock = asyncio.Lock()

    @property
    def hub(self) -> McpHub | None:
        """The workbench's hub (None before the servers were first configured)."""
        return self._server.workbench().hub

    async def initialized(self) -> None:
        """Start the servers in the background (the workbench offers their tools)."""
        await self._server.backend.runtime()
        self._started = True
        self._spawn(self._configure())

    def reloaded(self, config: Configuration) -> None:
        """Apply new ``mcp.json``/``[mcp]``."""
        if self._started:
            self._spawn(self._configure())

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work, name="qa-mcp-configure")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _configure(self) -> None:
        async with self._lock:  # one reload after the other, in order
            await self._server.workbench().start_mcp(wait=False)
        for document in self._server.documents:  # mcp.json's diagnostics follow its problems
            self._server.publish_config_diagnostics(document.uri)

    def _changed(self) -> None:
        if not self._server.shutdown_received:
            self._server.protocol.notify(methods.STATUS, self._server.status())

    def config_problems(self, path: Path) -> list[ConfigProblem]:
        """Return the problems of the ``mcp.json`` file ``path`` (published as its diagnostics)."""
        if self.hub is None:
            return []
        target = path.resolve()
        return [p for p in self.hub.problems if p.file and Path(p.file).resolve() == target]

    def status(self) -> Any:
        """Every configured MCP server's state (``qodeassist/status`` key ``mcp``)."""
        if self.hub is None:
            return {"enabled": None, "servers": [], "problems": []}
        return self.hub.status()

    async def aclose(self) -> None:
        """Stop every MCP server."""
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._server.close_workbench()


def setup(server: QodeAssistServer) -> None:
    """Add the MCP hub feature and the editor's approval port to ``server``."""
    feature = McpFeature(server)
    server.ports.mcp_asker = EditorApprovalAsker(server)
    server.ports.mcp_changed = feature._changed
    server.add_feature(feature)
