"""``AcpHost``: the chat engine the ACP agent serves, composed like the language server's.

One `Runtime` of the loaded configuration; on its contributor registry the same pieces the LSP
server adds: the tool kit, the file-edit tools (an `EditManager` whose edits are applied at once,
after the checkpoint, since ACP clients review the diff in the permission prompt), ``load_skill``
and the MCP hub of ``mcp.json`` (joined by the servers clients pass in ``session/new``). The
gate and the buffers are the ACP ports (``ports``). Each session gets a `ChatService` whose
workspace is the session's ``cwd``; chats are stored in the same history folder as the LSP
chat's. The tools' workspace is the session of the running turn (``session.CURRENT``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from qodeassist_lsp.acp_agent.ports import ClientBuffers, ClientPermissionGate
from qodeassist_lsp.acp_agent.session import CURRENT
from qodeassist_lsp.acp_agent.terminal import ClientTerminal
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.ignore import FolderIgnores, IgnoreFilter
from qodeassist_lsp.core.events import FileEditEvent, SessionEvent
from qodeassist_lsp.core.memory import Memory
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.features.chat.service import ChatService, EventSink
from qodeassist_lsp.mcp.approvals import ApprovalStore
from qodeassist_lsp.mcp.definitions import ServerDefinition, Transport
from qodeassist_lsp.mcp.hub import McpHub, hub_config
from qodeassist_lsp.skills.library import SkillLibrary
from qodeassist_lsp.skills.load_skill_tool import contributor as load_skill_contributor
from qodeassist_lsp.skills.service import SkillService, SkillSources, skill_tool_enabled
from qodeassist_lsp.tools.edits.checkpoints import CheckpointStore
from qodeassist_lsp.tools.edits.file_tools import edit_tools
from qodeassist_lsp.tools.edits.pending import EditManager, EditScope
from qodeassist_lsp.tools.kit import KitSources, ToolKit
from qodeassist_lsp.tools.workspace import ToolWorkspace

log = logging.getLogger("qodeassist.acp")


class _NoApprovals:
    """Project ``mcp.json`` servers need an approval an ACP agent cannot ask for at start."""

    async def approve(self, project: Path, server: ServerDefinition) -> bool:
        log.warning(
            "MCP server %s of %s not started: approve it from the LSP client", server.name, project
        )
        return False


class AcpHost:
    """The runtime, tools, skills and MCP hub behind every ACP session of one process."""

    def __init__(self, configuration: Configuration, permission_timeout: float) -> None:
        """Compose the engine of ``configuration``; questions wait ``permission_timeout`` s."""
        self.configuration = configuration
        self.runtime = Runtime(configuration)
        self.documents = DocumentStore()
        self._ignores: dict[tuple[Path, str], IgnoreFilter] = {}
        self.buffers = ClientBuffers()
        paths = configuration.paths
        self.edits = EditManager(
            CheckpointStore(paths.data_root / "checkpoints"),
            self.buffers,
            EditScope(
                confinement=self._confinement,
                base=lambda: next(iter(self.folders()), None),
                ignored=lambda path: self.workspace().ignore.ignored_by(path) is not None,
                auto_apply=lambda: True,
            ),
            self._edit_status,
        )
        self.skills = SkillService(lambda: SkillSources.of(self.configuration))
        self._hub_changed = asyncio.Event()
        self.hub = McpHub(ApprovalStore(paths.data_root), _NoApprovals(), self._hub_changed.set)
        self._client_servers: dict[str, ServerDefinition] = {}
        self._sinks: dict[str, EventSink] = {}
        contributors = self.runtime.contributors
        kit = ToolKit(
            KitSources(
                settings=lambda: self._settings().tools,
                workspace=self.workspace,
                memory=lambda: Memory.of(self.configuration.paths),
            )
        )
        contributors.add(kit.contribute)
        contributors.add(edit_tools(self.edits, lambda: self._settings().tools.enabled))
        contributors.add(
            load_skill_contributor(self.skill_library, lambda: skill_tool_enabled(self._settings()))
        )
        contributors.add(self.hub.contribute)
        self.gate = ClientPermissionGate(
            lambda: self._settings().tools.permissions, lambda: self.edits, permission_timeout
        )
        contributors.gate = self.gate

    def _settings(self) -> Settings:
        return self.configuration.settings

    async def start(self) -> None:
        """Scan the skills and start the MCP servers of ``mcp.json``."""
        await self.skills.refresh()
        await self._configure_hub()

    async def _configure_hub(self) -> None:
        config = await asyncio.to_thread(hub_config, self.configuration)
        own = {server.name for server in config.servers}
        extra = tuple(d for n, d in self._client_servers.items() if n not in own)
        await self.hub.configure(replace(config, servers=config.servers + extra))

    async def add_client_servers(self, servers: list[ServerDefinition]) -> None:
        """Let the MCP servers a client passed join the hub (their tools join new sessions)."""
        fresh = [s for s in servers if self._client_servers.get(s.name) != s]
        if not fresh:
            return
        for server in fresh:
            self._client_servers[server.name] = server
        await self._configure_hub()
        # A chat session's tools are fixed when it is created: let the servers connect first.
        limit = self.configuration.settings.mcp.client_connect_timeout_s
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit + 1.0):
                while True:
                    self._hub_changed.clear()  # before looking: no change is missed
                    if not any(self._connecting(s.name) for s in fresh):
                        break
                    await self._hub_changed.wait()

    def _connecting(self, name: str) -> bool:
        connection = self.hub.connection(name)
        return connection is not None and connection.state == "connecting"

    # -- what the tools see ----------------------------------------------------------------
    def folders(self) -> list[Path]:
        """Return the workspace folders of the running turn's session (none outside a turn)."""
        session = CURRENT.get()
        return [session.cwd] if session is not None else []

    def _confinement(self) -> Confinement:
        return Confinement.of(self.folders(), self.configuration.settings.general.allowed_roots)

    def workspace(self) -> ToolWorkspace:
        """Return the tools' view of the running turn's workspace."""
        folders = self.folders()
        session = CURRENT.get()
        abilities = session.abilities if session is not None else None
        return ToolWorkspace.of(
            folders,
            self.configuration.settings.general.allowed_roots,
            FolderIgnores.of(folders, self._ignores),
            editor=self.buffers if abilities and abilities.read_text_file else None,
            runner=ClientTerminal() if abilities and abilities.terminal else None,
        )

    def skill_library(self) -> SkillLibrary | None:
        """Return the skills of the last scan (None while skills are disabled)."""
        return self.skills.current

    async def current_skills(self) -> SkillLibrary | None:
        """Rescan when the skill folders changed; return the library (the chat's source)."""
        await self.skills.refresh_or_keep()
        return self.skill_library()

    # -- chats ----------------------------------------------------------------------------
    def chat_service(self, cwd: Path, sink: EventSink) -> ChatService:
        """Return a chat service working in ``cwd`` whose events go to ``sink``."""
        return ChatService(
            self.runtime,
            self.documents,
            sink,
            workspace=cwd,
            folders=lambda: [cwd],
            skills=self.current_skills,
        )

    def route(self, chat_id: str, sink: EventSink) -> None:
        """Send the edit status changes of ``chat_id`` to ``sink``."""
        self._sinks[chat_id] = sink

    def _edit_status(self, chat_id: str, event: SessionEvent) -> None:
        sink = self._sinks.get(chat_id)
        if sink is not None:
            sink(chat_id, event)

    def diff_of(self, event: FileEditEvent) -> tuple[str, str | None, str | None] | None:
        """Return (path, old text, new text) of the edit behind ``event``."""
        edit = self.edits.get(event.edit_id)
        if edit is None:
            return None
        return str(edit.path), edit.old_text, edit.new_text

    async def aclose(self) -> None:
        """Stop the MCP servers and close the providers."""
        with contextlib.suppress(Exception):
            await self.hub.aclose()
        await self.runtime.aclose()


def client_servers(raw: list[Any] | None) -> list[ServerDefinition]:
    """Return the hub definitions of the MCP servers of ``session/new`` (stdio, http, sse)."""
    found = []
    for server in raw or []:
        name = str(getattr(server, "name", "") or "")
        if not name:
            continue
        headers = {h.name: h.value for h in getattr(server, "headers", None) or []}
        if getattr(server, "command", None):
            env = {e.name: e.value for e in getattr(server, "env", None) or []}
            found.append(
                ServerDefinition(
                    name,
                    "stdio",
                    "user",
                    command=server.command,
                    args=tuple(server.args or ()),
                    env=env,
                    file="ACP session/new",
                )
            )
        elif getattr(server, "url", None):
            transport: Transport = "sse" if getattr(server, "type", "") == "sse" else "http"
            found.append(
                ServerDefinition(
                    name, transport, "user", url=server.url, headers=headers, file="ACP session/new"
                )
            )
    return found
