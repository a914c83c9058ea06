"""``qodeassist-lsp acp [--permission-timeout S]``: run the ACP agent on stdin/stdout (SPEC §8).

stdout carries the protocol only (one JSON-RPC message per line); logs go to stderr. stdin may be
a pipe, a file, ``/dev/null`` or a terminal (`acp_agent.stdio`); when it ends the agent ends, with
exit code 0 (after answering a file's requests, `stdin_guard.Answers`). Lines of stdin that are
not JSON-RPC messages are answered by `acp_agent.stdin_guard` and never reach the SDK, so the
agent keeps serving after them. The configuration is loaded once at start from the current
folder's project and the user roots. When the process that started the agent exits while stdin
stays open (a socket another process still holds), the agent ends anyway, with exit code 1
(`core.parent_watch`; ACP's ``initialize`` names no editor process to watch).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, cast

from qodeassist_lsp.cli.common import EXIT_OK, load

DEFAULT_PERMISSION_TIMEOUT_S = 300.0
EXIT_EDITOR_GONE = 1
"""The exit code when the process that started the agent exited (the language server's too)."""


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``acp`` command."""
    acp = commands.add_parser(
        "acp", parents=[shared], help="run as an Agent Client Protocol agent on stdio"
    )
    acp.add_argument(
        "--permission-timeout",
        type=float,
        default=DEFAULT_PERMISSION_TIMEOUT_S,
        metavar="S",
        help="seconds a permission question waits for the editor; then it counts as a reject "
        f"(default {DEFAULT_PERMISSION_TIMEOUT_S:g})",
    )
    acp.set_defaults(handler=run_acp)


def run_acp(args: argparse.Namespace) -> int:
    """Serve ACP until the client closes stdin."""
    config = load(args)
    if sys.stdin.isatty():
        print(
            "qodeassist-lsp: speaking ACP on stdin/stdout, one JSON-RPC message per line "
            "(Ctrl-D ends)",
            file=sys.stderr,
        )
    gone = asyncio.run(_serve(config, args.permission_timeout))
    return EXIT_OK if gone is None else EXIT_EDITOR_GONE


async def _serve(config: Any, permission_timeout: float) -> str | None:
    """Serve until stdin ends (None) or the parent process exits (what was watched)."""
    from acp import Agent, AgentSideConnection
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES

    from qodeassist_lsp.acp_agent.agent import QodeAssistAgent
    from qodeassist_lsp.acp_agent.host import AcpHost
    from qodeassist_lsp.acp_agent.stdin_guard import Answers, StdinGuard
    from qodeassist_lsp.acp_agent.stdio import open_stdio
    from qodeassist_lsp.core.parent_watch import ParentWatch
    from qodeassist_lsp.wire.stdin import pipe_like

    host = AcpHost(config, permission_timeout)
    agent = QodeAssistAgent(host)
    try:
        await host.start()
        host.bench.features.start()
        # What `acp.run_agent` does, reading stdin through the guard, and stdin and stdout
        # whatever they are (`open_stdio`). The SDK declares ACP's ``nes/*`` and ``document/*``
        # but routes none: the guard passes them on as extension methods, which reach the
        # agent's public ``ext_method``/``ext_notification`` hooks.
        # A file's requests are answered before the agent ends; an editor's pipe that ends is
        # an editor gone (the SDK copies every message for an observer: only for a file).
        # Asked before `open_stdio`: the SDK's pipe streams leave ``sys.stdin`` closed.
        answers = None if pipe_like(sys.stdin.fileno()) else Answers()
        stdin, writer = await open_stdio(DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
        guard = StdinGuard(stdin, writer, DEFAULT_STDIO_BUFFER_LIMIT_BYTES, answers)
        conn = AgentSideConnection(
            cast("Agent", agent),
            writer,
            guard.reader,
            listening=False,
            observers=[answers] if answers is not None else None,
        )
        screening = asyncio.create_task(guard.run(), name="qa-acp-stdin")
        listening = asyncio.create_task(conn.listen(), name="qa-acp-listen")
        gone: list[str] = []

        async def parent_gone(which: str) -> None:
            gone.append(which)
            listening.cancel()

        watch = ParentWatch(parent_gone)
        watch.start(None)
        try:
            await asyncio.wait([listening])
            if not gone:
                listening.result()  # the SDK's own failure, if any
        finally:
            await watch.stop()
            listening.cancel()
            screening.cancel()
            await asyncio.wait([listening, screening])
            await asyncio.shield(conn.close())
        return gone[0] if gone else None
    finally:
        await agent.aclose()
        await host.bench.features.aclose()
        await host.aclose()
