"""``McpHub``: the MCP servers of ``mcp.json`` kept connected, their tools offered to sessions.

``configure`` is called with the servers and limits of each configuration snapshot (at start
and on every reload): connections whose definition or limits changed are stopped and started
again, the others keep running. A project server starts only once approved (`approvals`); the
question goes to the injected asker in the background, so a reload never waits for the user.
``contribute`` is the `ToolContributor`: every connected server's tools join a chat session,
and only read-class ones a refactor session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.config.pipelines import PipelineSpec, ToolAccess
from qodeassist_lsp.config.problems import ConfigProblem
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.mcp.approvals import ApprovalAsker, ApprovalStore
from qodeassist_lsp.mcp.definitions import ConnectionLimits, ServerDefinition, load_definitions

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.mcp.connection import ServerConnection

log = logging.getLogger("qodeassist.mcp")


@dataclass(frozen=True)
class HubConfig:
    """What the hub runs, taken from one configuration snapshot."""

    servers: tuple[ServerDefinition, ...] = ()
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)
    enabled: bool = True
    project: Path | None = None
    problems: tuple[ConfigProblem, ...] = field(default=())


def hub_config(configuration: Configuration) -> HubConfig:
    """Read the ``mcp.json`` files and ``[mcp]`` of ``configuration`` (blocking file reads)."""
    settings = configuration.settings.mcp
    paths = configuration.paths
    files = load_definitions(paths.config_root, paths.project)
    limits = ConnectionLimits(
        connect_timeout_s=settings.client_connect_timeout_s,
        call_timeout_s=settings.client_call_timeout_s,
        extra_paths=tuple(str(Path(p).expanduser()) for p in settings.client_extra_paths),
    )
    return HubConfig(files.servers, limits, settings.enable_clients, paths.project, files.problems)


class McpHub:
    """Connections to the configured MCP servers."""

    def __init__(
        self,
        approvals: ApprovalStore,
        asker: ApprovalAsker | None = None,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self._approvals = approvals
        self._asker = asker
        self._on_change = on_change
        self._config = HubConfig()
        self._connections: dict[str, ServerConnection] = {}
        self._refused: set[tuple[str, str]] = set()
        self._questions: dict[str, asyncio.Task[None]] = {}
        self._lock = asyncio.Lock()

    async def configure(self, config: HubConfig) -> None:
        """Run the servers of ``config``: stop the changed and removed ones, start the new."""
        async with self._lock:
            self._config = config
            wanted = {server.name: server for server in config.servers}
            for name, connection in list(self._connections.items()):
                if wanted.get(name) != connection.definition or connection.limits != config.limits:
                    await self._stop(name)
            for problem in config.problems:
                log.warning("%s", problem.format())
            for server in config.servers:
                if server.name not in self._connections:
                    self._add(server, config)
        self._on_change()

    def _add(self, server: ServerDefinition, config: HubConfig) -> None:
        # The SDK is imported with the first server: it costs ~0.9 s and ~30 MB to import,
        # which a user without MCP servers should not pay.
        from qodeassist_lsp.mcp.connection import ServerConnection

        cwd = str(config.project) if server.origin == "project" and config.project else ""
        connection = ServerConnection(server, config.limits, self._on_change, cwd)
        self._connections[server.name] = connection
        if not config.enabled:
            connection.hold("disabled", "[mcp] enable_clients is false")
        elif not server.enabled:
            connection.hold("disabled", f'"enable": false in {server.file}')
        elif server.origin == "project" and config.project is not None:
            self._start_project_server(connection, config.project)
        else:
            connection.start()

    def _start_project_server(self, connection: ServerConnection, project: Path) -> None:
        server = connection.definition
        if self._approvals.is_approved(project, server):
            connection.start()
        elif (server.name, server.fingerprint()) in self._refused or self._asker is None:
            connection.hold(
                "not-approved",
                f"a project server starts only when approved in the editor ({server.file})",
            )
        else:
            connection.hold("awaiting-approval", "waiting for the user's approval")
            self._questions[server.name] = asyncio.create_task(
                self._ask(connection, project), name=f"qa-mcp-approve-{server.name}"
            )

    async def _ask(self, connection: ServerConnection, project: Path) -> None:
        server = connection.definition
        assert self._asker is not None
        try:
            approved = await self._asker.approve(project, server)
        except Exception as exc:
            log.warning("asking to approve MCP server %s failed: %s", server.name, exc)
            approved = False
        if self._connections.get(server.name) is not connection:
            return  # reconfigured meanwhile
        if approved:
            self._approvals.approve(project, server)
            connection.start()
        else:
            self._refused.add((server.name, server.fingerprint()))
            connection.hold("not-approved", "the user did not approve starting it")

    async def _stop(self, name: str) -> None:
        question = self._questions.pop(name, None)
        if question is not None:
            question.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await question
        connection = self._connections.pop(name)
        await connection.aclose()

    def contribute(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        """Register every connected server's tools (read-class only under read-only access)."""
        connected = [c for c in self._connections.values() if c.state == "connected"]
        if not connected:
            return
        from qodeassist_lsp.mcp.remote_tool import RemoteTool  # the SDK's types: see _add

        for connection in connected:
            for tool in connection.tools:
                remote = RemoteTool(connection, tool)
                if pipeline.tool_access is ToolAccess.READ and remote.permission != "read":
                    continue
                registry.register(remote)

    def connection(self, name: str) -> ServerConnection | None:
        """Return the connection of server ``name``, if it is configured."""
        return self._connections.get(name)

    @property
    def problems(self) -> tuple[ConfigProblem, ...]:
        """The problems found in the ``mcp.json`` files of the current configuration."""
        return self._config.problems

    def status(self) -> dict[str, Any]:
        """Return the ``mcp`` part of ``qodeassist/status``: servers' states, file problems."""
        return {
            "enabled": self._config.enabled,
            "servers": [c.snapshot() for c in self._connections.values()],
            "problems": [p.format() for p in self._config.problems],
        }

    async def aclose(self) -> None:
        """Stop every server (no process is left behind)."""
        async with self._lock:
            for name in list(self._connections):
                await self._stop(name)
