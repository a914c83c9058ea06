"""The command line's tools: the tool kit over one folder, MCP servers, permission on the terminal.

``mcp serve`` offers the kit to MCP clients; ``chat`` gives it and the servers of ``mcp.json``
to its agent, behind the same ``[tools.permissions]`` gate as the editors. A terminal is the
chat's only person to ask: a question goes to stderr and the answer is one line of stdin;
without a terminal on stdin nobody can answer, so what needs asking is denied and the model is
told why. ``mcp list`` and ``chat`` start the servers with `connected_hub`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from qodeassist_lsp.cli.common import CliError

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.core.runtime import Runtime
    from qodeassist_lsp.mcp.hub import HubConfig, McpHub
    from qodeassist_lsp.tools.kit import ToolKit

_KEYS = "ocd"
"""The key of each permission answer, in `qodeassist_lsp.tools.permissions.ACTIONS` order."""


def workspace_of(args: argparse.Namespace) -> Path:
    """Return ``--workspace`` (default ``--project``, else the current folder), now the project."""
    workspace = Path(args.workspace or args.project or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise CliError(f"--workspace {workspace}: not a folder")
    args.project = str(workspace)
    return workspace


def kit_for(workspace: Path, config: Configuration) -> ToolKit:
    """Return the tool kit over ``workspace`` (its ignore files honoured; no editor to ask)."""
    from qodeassist_lsp.context.ignore import FolderIgnores
    from qodeassist_lsp.core.memory import Memory
    from qodeassist_lsp.tools.kit import KitSources, ToolKit
    from qodeassist_lsp.tools.workspace import ToolWorkspace

    ignores = FolderIgnores.of([workspace])
    settings = config.settings
    view = ToolWorkspace.of([workspace], settings.general.allowed_roots, ignore=ignores)
    return ToolKit(
        KitSources(
            settings=lambda: settings.tools,
            workspace=lambda: view,
            memory=lambda: Memory.of(config.paths),
        )
    )


class TerminalAsker:
    """A `PermissionAsker` that asks on ``output`` and reads the answer from ``answers``."""

    def __init__(self, answers: TextIO, output: TextIO) -> None:
        """Ask through ``output`` (stderr) and read one line of ``answers`` (stdin) per question."""
        self._answers = answers
        self._output = output

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        """Return the action whose key the user typed; the last one (Deny) otherwise."""
        keyed = list(zip(_KEYS, actions, strict=False))
        choices = "  ".join(f"[{key}] {action}" for key, action in keyed)
        self._output.write(f"{question}\n  {choices} (default: {actions[-1]}): ")
        self._output.flush()
        line = await asyncio.to_thread(self._answers.readline)
        if not line:
            return None  # end of input: nobody is there to answer
        typed = line.strip().casefold()[:1]
        return next((action for key, action in keyed if typed == key), actions[-1])


async def connected_hub(settings: HubConfig, data_root: Path) -> McpHub:
    """Return a hub running the servers of ``settings`` once none is still connecting.

    A project's server the user has not approved (in an editor) stays held: nobody is asked
    here. The caller closes the hub.
    """
    from qodeassist_lsp.mcp.approvals import ApprovalStore
    from qodeassist_lsp.mcp.hub import McpHub

    changed = asyncio.Event()
    hub = McpHub(ApprovalStore(data_root), on_change=changed.set)
    try:
        await hub.configure(settings)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(settings.limits.connect_timeout_s + 1):
                while any(s["state"] == "connecting" for s in hub.status()["servers"]):
                    changed.clear()
                    await changed.wait()
    except BaseException:
        await hub.aclose()
        raise
    return hub


async def give_tools(
    runtime: Runtime, config: Configuration, workspace: Path, ask: bool
) -> McpHub | None:
    """Offer the kit over ``workspace`` and the MCP servers to ``runtime``'s sessions.

    Every call goes through ``[tools.permissions]``; ``ask``: questions go to the terminal
    (else they are denied). Return the hub of the MCP servers (None when ``mcp.json`` lists
    none), which the caller closes.
    """
    import sys

    from qodeassist_lsp.mcp.hub import hub_config
    from qodeassist_lsp.tools.permissions import PermissionGate

    runtime.contributors.add(kit_for(workspace, config).contribute)
    asker = TerminalAsker(sys.stdin, sys.stderr) if ask else None
    runtime.contributors.gate = PermissionGate(lambda: config.settings.tools.permissions, asker)
    settings = hub_config(config)
    if not settings.enabled or not settings.servers:
        return None  # the MCP SDK costs about a second to import: only for servers to run
    hub = await connected_hub(settings, config.paths.data_root)
    runtime.contributors.add(hub.contribute)
    return hub
