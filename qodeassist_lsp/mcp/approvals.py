"""Which project MCP servers the user allowed to start, remembered in the data root.

A cloned repository must not start processes by itself: a server from
``<project>/.qodeassist/mcp.json`` starts only once the user said yes to exactly that
definition (its fingerprint: command, arguments, environment, URL, headers). The answers are
kept per project folder in ``<data>/mcp-approvals.json``; a changed definition asks again.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Protocol

from qodeassist_lsp.mcp.definitions import ServerDefinition

log = logging.getLogger("qodeassist.mcp")

APPROVALS_FILE = "mcp-approvals.json"


class ApprovalAsker(Protocol):
    """Asks the user whether a project's MCP server may start (the editor implements it)."""

    async def approve(self, project: Path, server: ServerDefinition) -> bool:
        """Return True when the user allows ``server`` of ``project`` to start."""
        ...


class ApprovalStore:
    """The remembered approvals: project folder → server name → definition fingerprint."""

    def __init__(self, data_root: Path) -> None:
        self.path = data_root / APPROVALS_FILE

    def is_approved(self, project: Path, server: ServerDefinition) -> bool:
        """Whether this exact definition of ``server`` was approved for ``project``."""
        granted = self._read().get(_key(project), {})
        return granted.get(server.name) == server.fingerprint()

    def approve(self, project: Path, server: ServerDefinition) -> None:
        """Remember that ``server`` (as defined now) may start in ``project``."""
        data = self._read()
        data.setdefault(_key(project), {})[server.name] = server.fingerprint()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mcp-approvals-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
        os.replace(tmp, self.path)

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning(
                "%s unreadable (%s): no project MCP server counts as approved", self.path, exc
            )
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            project: {k: v for k, v in servers.items() if isinstance(v, str)}
            for project, servers in data.items()
            if isinstance(servers, dict)
        }


def _key(project: Path) -> str:
    return str(project.resolve())
