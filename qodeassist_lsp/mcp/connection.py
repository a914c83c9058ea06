"""One MCP server kept connected: connect, list tools, follow ``list_changed``, reconnect.

A `ServerConnection` runs one task per server. The task opens the SDK client on the server's
transport (stdio subprocess, streamable HTTP or legacy SSE), lists its tools within the connect
timeout, and then pings it every ``ping_interval_s``; a failed connect, ping or transport ends
the attempt and the next one starts after a capped exponential backoff (1 s doubling to 30 s).
A ``notifications/tools/list_changed`` from the server lists the tools again; every list is
fitted to `limits` (long descriptions cut, oversized tools left out, with warnings). Calls have
their own timeout, so a server that crashes or hangs costs the model one tool error, never the
chat.
``aclose`` cancels the task; leaving the SDK's stdio client closes the server's stdin (and kills
its process group if it does not exit), and on POSIX the server runs under `group_guard`, which
stops the server's whole process group when the server exits, so no helper it started survives.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

import httpx2
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from qodeassist_lsp import __version__
from qodeassist_lsp.core.tools import ToolOutput
from qodeassist_lsp.mcp import group_guard
from qodeassist_lsp.mcp.definitions import ConnectionLimits, ServerDefinition
from qodeassist_lsp.mcp.limits import fit_tools
from qodeassist_lsp.mcp.remote_tool import result_text

log = logging.getLogger("qodeassist.mcp")

ServerState = Literal[
    "disabled", "awaiting-approval", "not-approved", "connecting", "connected", "failed"
]

BACKOFF_START_S = 1.0
GUARD = group_guard.__file__
"""The script stdio servers run under on POSIX, so their process group is stopped with them."""
BACKOFF_MAX_S = 30.0


class ServerConnection:
    """A live connection to one MCP server and the tools it offers."""

    def __init__(
        self,
        definition: ServerDefinition,
        limits: ConnectionLimits,
        on_change: Callable[[], None] = lambda: None,
        cwd: str = "",
    ) -> None:
        self.definition = definition
        self.limits = limits
        self._on_change = on_change
        self._cwd = cwd
        self.state: ServerState = "connecting"
        self.error = ""
        self.attempts = 0
        self.tools: tuple[mcp_types.Tool, ...] = ()
        self.warnings: tuple[str, ...] = ()
        """What was cut or left out of the tool definitions to fit `limits`."""
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._broken = asyncio.Event()
        self._relist = asyncio.Event()

    @property
    def server_name(self) -> str:
        """The server's name in ``mcp.json``."""
        return self.definition.name

    def start(self) -> None:
        """Start connecting in the background (reconnecting until ``aclose``)."""
        if self._task is None:
            self._task = asyncio.create_task(
                self._keep_connected(), name=f"qa-mcp-{self.server_name}"
            )

    def hold(self, state: ServerState, error: str = "") -> None:
        """Record why the server is not started (disabled, awaiting or lacking approval)."""
        self.state, self.error = state, error
        self._on_change()

    def snapshot(self) -> dict[str, Any]:
        """Return this server's part of ``qodeassist/status``."""
        return {
            "name": self.server_name,
            "origin": self.definition.origin,
            "transport": self.definition.transport,
            "state": self.state,
            "tools": len(self.tools),
            "attempts": self.attempts,
            "error": self.error,
            "warnings": list(self.warnings),
        }

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call ``tool`` on the server within the call timeout; failures become error outputs."""
        client = self._client
        if client is None or self.state != "connected":
            reason = f": {self.error}" if self.error else ""
            return ToolOutput(
                f"Error: MCP server {self.server_name!r} is {self.state}{reason}", is_error=True
            )
        limit = self.limits.call_timeout_s
        try:
            async with asyncio.timeout(limit):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            self._fail(f"tool {tool!r} gave no answer within {limit:g} s")
            return ToolOutput(
                f"Error: MCP server {self.server_name!r} did not answer {tool!r} within "
                f"{limit:g} s ([mcp] client_call_timeout_s); it is being restarted",
                is_error=True,
            )
        except Exception as exc:
            message = _describe(exc)
            if not _is_protocol_error(exc):
                self._fail(message)
            return ToolOutput(
                f"Error: MCP server {self.server_name!r} failed on {tool!r}: {message}",
                is_error=True,
            )
        text = result_text(result)
        return ToolOutput(text if not result.is_error else f"Error: {text}", result.is_error)

    async def aclose(self) -> None:
        """Disconnect and stop the server process (if it is ours)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._client = None
        self.tools = ()

    # ----------------------------------------------------------------------------- the loop
    async def _keep_connected(self) -> None:
        delay = BACKOFF_START_S
        while True:
            self.attempts += 1
            self._set_state("connecting")
            started = time.monotonic()
            try:
                await self._serve_once()
            except Exception as exc:
                self.error = _describe(exc)
                log.warning("MCP server %s: %s", self.server_name, self.error)
            self._client, self.tools = None, ()
            self._set_state("failed")
            if time.monotonic() - started > BACKOFF_MAX_S:
                delay = BACKOFF_START_S  # it was up for a while: start the backoff afresh
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX_S)

    async def _serve_once(self) -> None:
        self._broken.clear()
        self._relist.clear()
        async with contextlib.AsyncExitStack() as stack:
            async with asyncio.timeout(self.limits.connect_timeout_s):
                client = await stack.enter_async_context(await self._client_for(stack))
                tools = await self._list_tools(client)
            self._client, self.tools, self.error = client, tools, ""
            self._set_state("connected")
            log.info("MCP server %s connected: %d tool(s)", self.server_name, len(tools))
            await self._watch(client)

    async def _watch(self, client: Client) -> None:
        broken = asyncio.ensure_future(self._broken.wait())
        try:
            while not self._broken.is_set():
                relist = asyncio.ensure_future(self._relist.wait())
                await asyncio.wait(
                    {broken, relist},
                    timeout=self.limits.ping_interval_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if self._broken.is_set():
                    relist.cancel()
                    break
                async with asyncio.timeout(self.limits.connect_timeout_s):
                    if self._relist.is_set():
                        self._relist.clear()
                        self.tools = await self._list_tools(client)
                        log.info(
                            "MCP server %s: tools changed (%d)", self.server_name, len(self.tools)
                        )
                        self._on_change()
                    else:
                        relist.cancel()
                        await client.send_ping()
        finally:
            broken.cancel()
        raise ConnectionError(self.error or "the connection broke")

    async def _list_tools(self, client: Client) -> tuple[mcp_types.Tool, ...]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        fitted = fit_tools(tools)
        for warning in fitted.warnings:
            log.warning("MCP server %s: %s", self.server_name, warning)
        self.warnings = fitted.warnings
        return fitted.tools

    async def _client_for(self, stack: contextlib.AsyncExitStack) -> Client:
        definition = self.definition
        if definition.transport == "stdio":
            command, args = self._command(), list(definition.args)
            if os.name == "posix":
                command, args = sys.executable, ["-I", GUARD, command, *args]
            server: Any = StdioServerParameters(
                command=command,
                args=args,
                env=dict(definition.env) or None,
                cwd=definition.cwd or self._cwd or None,
            )
        elif definition.transport == "sse":
            server = sse_client(definition.url, headers=dict(definition.headers) or None)
        else:
            # The SDK leaves a client it was given open: this one is closed with the stack.
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=dict(definition.headers), timeout=30.0)
            )
            server = streamable_http_client(definition.url, http_client=http)
        return Client(
            server,
            mode="legacy",  # the initialize handshake: servers of every protocol era answer it
            cache=None,
            message_handler=self._on_message,
            client_info=mcp_types.Implementation(name="qodeassist-lsp", version=__version__),
        )

    def _command(self) -> str:
        command = self.definition.command
        if os.sep in command:
            return command
        path = self.definition.env.get("PATH") or os.environ.get("PATH", "")
        found = shutil.which(command, path=os.pathsep.join([*self.limits.extra_paths, path]))
        if found is None:
            # Said here: under the guard a missing program would only be a closed connection.
            raise FileNotFoundError(
                f"{command!r} was not found on PATH or in [mcp] client_extra_paths"
            )
        return found

    async def _on_message(self, message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist.set()
        elif isinstance(message, Exception):
            log.debug("MCP server %s transport: %s", self.server_name, message)

    def _fail(self, reason: str) -> None:
        self.error = reason
        self._client = None  # no further call may reach it; the loop reconnects
        self._set_state("failed")
        self._broken.set()

    def _set_state(self, state: ServerState) -> None:
        if state != self.state:
            self.state = state
            self._on_change()


def _is_protocol_error(exc: Exception) -> bool:
    """Whether the server answered with an error (it is alive) rather than failing to answer."""
    return isinstance(exc, MCPError) and exc.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    if isinstance(exc, TimeoutError):
        return "no answer within the connect timeout ([mcp] client_connect_timeout_s)"
    return str(exc) or type(exc).__name__
