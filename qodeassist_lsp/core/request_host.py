"""``RequestHost``: what a provider that is a local agent process needs of the request it serves.

An HTTP provider only sends bytes. An agent process (an ACP agent, Claude Code) runs its own
tools and asks back: may this call run (decided by the session's permission gate, the same
``[tools.permissions]`` policy and client prompt as our own tools), read or write this file
(confined to the workspace), and it keeps its own conversation per chat (``scope``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.core.events import SessionEvent
from qodeassist_lsp.core.tools import ToolRegistry


@dataclass(frozen=True)
class RequestHost:
    """The chat, permission gate and workspace one request runs in."""

    scope: str
    """The conversation (a chat id, else the request id): one agent process serves it."""
    request_id: str
    tools: ToolRegistry
    """Its ``gate`` decides an agent's permission requests (None: every call runs)."""
    emit: Callable[[SessionEvent], None]
    workspace: Confinement | None = None
    """Where the agent's ``fs`` requests may reach; None refuses them all."""

    @property
    def cwd(self) -> Path | None:
        """The folder the agent works in: the first workspace root."""
        roots = self.workspace.roots if self.workspace is not None else ()
        return roots[0] if roots else None
