"""``AcpHost``: the ACP agent's ports on the `workbench.bench.Workbench` every door shares.

One `Runtime` of the loaded configuration and one workbench over it: the tool kit, the file-edit
tools (applied at once, after the checkpoint, since ACP clients review the diff in the
permission prompt), ``load_skill`` and the MCP hub of ``mcp.json`` (joined by the servers
clients pass in ``session/new``). The ports are ACP's: the asker and the buffers (``ports``),
the client's terminal, and the folders of the running turn's session (``session.CURRENT``).
Each session gets a chat service whose workspace is the session's ``cwd``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from qodeassist_lsp.acp_agent.ports import ClientAsker, ClientBuffers
from qodeassist_lsp.acp_agent.session import CURRENT
from qodeassist_lsp.acp_agent.terminal import ClientTerminal
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.core.events import FileEditEvent, SessionEvent
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.features.chat.service import ChatService, EventSink
from qodeassist_lsp.mcp.definitions import ServerDefinition, Transport
from qodeassist_lsp.tools.workspace import EditorFiles, ProgramRunner
from qodeassist_lsp.workbench.bench import Workbench
from qodeassist_lsp.workbench.ports import Ports

log = logging.getLogger("qodeassist.acp")


class _NoApprovals:
    """Project ``mcp.json`` servers need an approval an ACP agent cannot ask for at start."""

    async def approve(self, project: Path, server: ServerDefinition) -> bool:
        log.warning(
            "MCP server %s of %s not started: approve it from the LSP client", server.name, project
        )
        return False


class AcpHost:
    """The runtime and the workbench behind every ACP session of one process."""

    def __init__(self, configuration: Configuration, permission_timeout: float) -> None:
        """Compose the engine of ``configuration``; questions wait ``permission_timeout`` s."""
        self.configuration = configuration
        self.runtime = Runtime(configuration)
        self.buffers = ClientBuffers()
        self._sinks: dict[str, EventSink] = {}
        self.asker = ClientAsker(lambda: self.bench.edits, permission_timeout)
        self.bench = Workbench(
            self.runtime,
            Ports(
                folders=self.folders,
                buffers=self.buffers,
                edit_status=self._edit_status,
                auto_apply=lambda: True,  # the client reviewed the diff in the permission prompt
                asker=self.asker,
                editor_files=self._editor_files,
                runner=self._runner,
                mcp_asker=_NoApprovals(),
            ),
        )
        self.bench.wire(self.runtime.contributors)

    async def start(self) -> None:
        """Scan the skills and start the MCP servers of ``mcp.json``."""
        await self.bench.skills.refresh()
        await self.bench.start_mcp(wait=False)  # `initialize` does not wait for them

    async def add_client_servers(self, servers: list[ServerDefinition]) -> None:
        """Let the MCP servers a client passed join the hub (their tools join new sessions)."""
        fresh = [s for s in servers if self.bench.extra_servers.get(s.name) != s]
        if fresh:
            # A chat session's tools are fixed when it is created: the servers connect first.
            await self.bench.start_mcp(fresh)

    # -- what the tools see ----------------------------------------------------------------
    def folders(self) -> list[Path]:
        """Return the workspace folders of the running turn's session (none outside a turn)."""
        session = CURRENT.get()
        return [session.cwd] if session is not None else []

    def _editor_files(self) -> EditorFiles | None:
        session = CURRENT.get()
        return self.buffers if session is not None and session.abilities.read_text_file else None

    def _runner(self) -> ProgramRunner | None:
        session = CURRENT.get()
        return ClientTerminal() if session is not None and session.abilities.terminal else None

    # -- chats ----------------------------------------------------------------------------
    def chat_service(self, cwd: Path, sink: EventSink) -> ChatService:
        """Return a chat service working in ``cwd`` whose events go to ``sink``."""
        return self.bench.chat_service(sink, folders=lambda: [cwd])

    def route(self, chat_id: str, sink: EventSink) -> None:
        """Send the edit status changes of ``chat_id`` to ``sink``."""
        self._sinks[chat_id] = sink

    def _edit_status(self, chat_id: str, event: SessionEvent) -> None:
        sink = self._sinks.get(chat_id)
        if sink is not None:
            sink(chat_id, event)

    def diff_of(self, event: FileEditEvent) -> tuple[str, str | None, str | None] | None:
        """Return (path, old text, new text) of the edit behind ``event``."""
        edit = self.bench.edits.get(event.edit_id)
        if edit is None:
            return None
        return str(edit.path), edit.old_text, edit.new_text

    async def aclose(self) -> None:
        """Stop the MCP servers and close the providers."""
        await self.bench.aclose()
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
