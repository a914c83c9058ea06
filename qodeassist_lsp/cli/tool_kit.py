"""The command line's ports on the workbench: one folder, MCP servers, permission on the terminal.

``mcp serve`` offers the kit to MCP clients; ``chat`` gets its chat service from the workbench
of `chat_workbench`, which gives the kit, ``load_skill`` and the servers of ``mcp.json`` to its
agent behind the same ``[tools.permissions]`` gate as the editors (all built by
`workbench.bench.Workbench`). A terminal is the chat's only person to ask: a question
goes to stderr and the answer is one line of stdin; without a terminal on stdin nobody can
answer, so what needs asking is denied and the model is told why. ``mcp list`` starts the
servers with `connected_hub` (closed, with the runtime under it, when done).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from qodeassist_lsp.cli.common import CliError

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.core.runtime import Runtime
    from qodeassist_lsp.mcp.hub import McpHub
    from qodeassist_lsp.workbench.bench import Workbench

_KEYS = "ocd"
"""The key of each permission answer, in `qodeassist_lsp.tools.permissions.ACTIONS` order."""


def workspace_of(args: argparse.Namespace) -> Path:
    """Return ``--workspace`` (default ``--project``, else the current folder), now the project."""
    workspace = Path(args.workspace or args.project or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise CliError(f"--workspace {workspace}: not a folder")
    args.project = str(workspace)
    return workspace


def workbench_for(runtime: Runtime, workspace: Path, ask: bool = False) -> Workbench:
    """Return the workbench over ``workspace``; ``ask``: questions go to the terminal."""
    import sys

    from qodeassist_lsp.workbench.bench import Workbench
    from qodeassist_lsp.workbench.ports import Ports

    asker = TerminalAsker(sys.stdin, sys.stderr) if ask else None
    return Workbench(runtime, Ports(folders=lambda: [workspace], asker=asker))


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


@contextlib.asynccontextmanager
async def connected_hub(config: Configuration) -> AsyncIterator[McpHub]:
    """Yield a hub running the servers of ``mcp.json`` once none is still connecting.

    A project's server the user has not approved (in an editor) stays held: nobody is asked
    here. The hub, then the runtime it was built on, are closed on the way out.
    """
    from qodeassist_lsp.core.runtime import Runtime

    runtime = Runtime(config)
    try:
        hub = await workbench_for(runtime, Path.cwd()).start_mcp()
        assert hub is not None  # not lazy: there is a hub even without servers
        try:
            yield hub
        finally:
            await hub.aclose()
    finally:
        await runtime.aclose()


@contextlib.asynccontextmanager
async def chat_workbench(
    runtime: Runtime, workspace: Path, *, ask: bool, tools: bool
) -> AsyncIterator[Workbench]:
    """Yield the workbench of one chat over ``workspace``, its features started.

    The codebase index builds in the background (``@codebase`` and the tools wait for it a
    while). With ``tools``, the kit, the features' tools, ``load_skill`` and the MCP servers are
    offered to ``runtime``'s sessions behind ``[tools.permissions]``; ``ask``: questions go to
    the terminal (else they are denied). The file-edit tools are not offered: nobody could
    review an edit. Everything started is closed on the way out.
    """
    bench = workbench_for(runtime, workspace, ask)
    if tools:
        bench.wire(runtime.contributors, edits=False)
    bench.features.start()
    try:
        if tools:
            await bench.start_mcp(lazy=True)
        await asyncio.sleep(0)  # the features' start tasks run: the index build is under way
        yield bench
    finally:
        try:
            await bench.features.aclose()
        finally:
            await bench.aclose()
