"""The MCP client hub in the language server: its servers, their state and their tools.

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
    from qodeassist_lsp.config.pipelines import PipelineSpec
    from qodeassist_lsp.config.problems import ConfigProblem
    from qodeassist_lsp.core.tools import ToolRegistry
    from qodeassist_lsp.mcp.definitions import ServerDefinition
    from qodeassist_lsp.mcp.hub import HubConfig, McpHub

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


def _hub_config(configuration: Configuration) -> HubConfig:
    # Run in a worker thread: it reads mcp.json and is the first import of the MCP SDK (about a
    # second of starlette, httpx2 and jsonschema, measured), which must not stall the server.
    from qodeassist_lsp.mcp.hub import hub_config

    return hub_config(configuration)


class McpFeature(LanguageFeature):
    """Owns the hub for the server's lifetime."""

    status_key = "mcp"

    def __init__(self, server: QodeAssistServer) -> None:
        self._server = server
        self.hub: McpHub | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False
        self._offered = False
        self._lock = asyncio.Lock()

    async def initialized(self) -> None:
        """Add the hub's contributor to the runtime and start the servers in the background."""
        await self._server.backend.runtime()
        self._offer_tools()
        self._started = True
        self._spawn(self._configure(self._server.backend.configuration))

    def _offer_tools(self) -> None:
        """Add the hub's contributor once (the runtime's registry outlives reloads)."""
        if not self._offered:
            self._server.backend.runtime_now.contributors.add(self._contribute)
            self._offered = True

    def reloaded(self, config: Configuration) -> None:
        """Offer the hub's tools from the first load on; apply new ``mcp.json``/``[mcp]``."""
        self._offer_tools()
        if self._started:
            self._spawn(self._configure(config))

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work, name="qa-mcp-configure")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _configure(self, configuration: Configuration) -> None:
        async with self._lock:  # one reload after the other, in order
            config = await asyncio.to_thread(_hub_config, configuration)
            if self.hub is None:
                from qodeassist_lsp.mcp.approvals import ApprovalStore
                from qodeassist_lsp.mcp.hub import McpHub

                store = ApprovalStore(configuration.paths.data_root)
                self.hub = McpHub(store, EditorApprovalAsker(self._server), self._changed)
            await self.hub.configure(config)
        for document in self._server.documents:  # mcp.json's diagnostics follow its problems
            self._server.publish_config_diagnostics(document.uri)

    def _contribute(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        if self.hub is not None:
            self.hub.contribute(registry, pipeline)

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
        if self.hub is not None:
            await self.hub.aclose()


def setup(server: QodeAssistServer) -> None:
    """Add the MCP hub feature to ``server``."""
    server.add_feature(McpFeature(server))
