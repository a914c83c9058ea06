"""``AcpProvider``: an ACP agent started from the instance's ``command`` answers the chat.

One agent process per chat (the request host's ``scope``) is kept running, with its ACP session,
so a later message continues the agent's own conversation; at most ``max_processes`` stay warm
and the least recently used is closed. A fresh process of a chat that already has history gets
the transcript with the latest message. A turn is one ``session/prompt``: its updates stream as
wire events (see `AcpClient`) and its stop reason ends it. When the request is cancelled the
agent gets ``session/cancel``; one that does not end its turn soon is closed. A process that
exits or breaks the protocol mid-turn ends the turn as a failure and is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from acp import PROTOCOL_VERSION, Client, connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretsPort
from qodeassist_lsp.core.agent import PreparedRequest
from qodeassist_lsp.core.agent_process.acp_client import AcpClient
from qodeassist_lsp.core.agent_process.base import (
    ProcessProvider,
    failure,
    prompt_of,
    start_process,
    stderr_tail,
    stop_process,
)
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo, WireError
from qodeassist_lsp.wire.events import MessageStop, StopReason, WireEvent

_T = TypeVar("_T")
log = logging.getLogger("qodeassist.acp_provider")

START_TIMEOUT_S = 120.0
"""How long an agent may take to answer ``initialize`` and ``session/new`` (npx is slow)."""
CANCEL_GRACE_S = 5.0
EXIT_WAIT_S = 1.0
_STOPS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "max_turn_requests": "max_tokens",
    "refusal": "refusal",
    "cancelled": "end_turn",
}


@dataclass
class _Link:
    """One running agent process with its connection and ACP session."""

    process: asyncio.subprocess.Process
    conn: ClientSideConnection
    client: AcpClient
    session_id: str = ""
    stderr: list[str] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    fresh: bool = True

    def exit_detail(self) -> str:
        """Return the last lines the agent printed on stderr."""
        return "\n".join(self.stderr[-10:])


class AcpProvider(ProcessProvider):
    """Chats through ACP agents, one warm process per chat."""

    def __init__(self, instance: ProviderInstance, secrets: SecretsPort, **kwargs: Any) -> None:
        """Serve ``instance`` (see ``GenericProvider``); no agent runs until a chat needs it."""
        super().__init__(instance, secrets, **kwargs)
        self._links: OrderedDict[str, _Link] = OrderedDict()

    def _pool(self) -> OrderedDict[str, _Link]:
        return self._links

    async def _link(self, host: RequestHost) -> _Link:
        """Return the chat's agent process, starting one (and closing the oldest) if needed."""
        pool = self._pool()
        link = pool.get(host.scope)
        if link is not None and link.process.returncode is None:
            pool.move_to_end(host.scope)
            return link
        if link is not None:
            await self._drop(host.scope)
        while len(pool) >= self.instance.max_processes:
            oldest = next(iter(pool))
            log.info(
                "%s: closing the agent of %s (least recently used)", self.instance.name, oldest
            )
            await self._drop(oldest)
        link = await self._start(host.cwd)
        pool[host.scope] = link
        return link

    async def _start(self, cwd: Path | None) -> _Link:
        process = await start_process(self.instance, cwd)
        assert process.stdin is not None
        assert process.stdout is not None
        client = AcpClient()
        conn = connect_to_agent(cast(Client, client), process.stdin, process.stdout)
        link = _Link(process, conn, client)
        task = asyncio.create_task(stderr_tail(process, link.stderr))
        link.tasks.add(task)
        try:
            fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
            await self._until_exit(
                link,
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(fs=fs, terminal=False),
                    client_info=Implementation(name="qodeassist-lsp", version="1"),
                ),
            )
            session = await self._until_exit(
                link, conn.new_session(cwd=str(cwd or Path.cwd()), mcp_servers=[])
            )
        except BaseException:
            await _close(link)
            raise
        link.session_id = session.session_id
        return link

    async def _until_exit(self, link: _Link, call: Awaitable[_T]) -> _T:
        """Await ``call``; a process that exits or stays silent first is a provider error."""
        waiter = asyncio.ensure_future(call)
        exited = asyncio.ensure_future(link.process.wait())
        try:
            done, _ = await asyncio.wait(
                {waiter, exited}, timeout=START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            exited.cancel()
        if waiter in done:
            try:
                return waiter.result()
            except Exception as exc:
                raise self._error(f"the agent refused to start a session: {exc}", link) from exc
        waiter.cancel()
        if exited in done:
            raise self._error(
                f"the agent exited with code {link.process.returncode} at start", link
            )
        raise self._error(f"the agent did not answer within {START_TIMEOUT_S:.0f} s", link)

    def _error(self, message: str, link: _Link) -> WireError:
        name = self.instance.name
        return WireError(
            ErrorInfo(ErrorCategory.PROVIDER, f"provider {name!r}: {message}", link.exit_detail())
        )

    async def _turn(
        self, request: PreparedRequest, host: RequestHost
    ) -> AsyncGenerator[list[WireEvent], None]:
        """One ``session/prompt`` of the chat's agent, its updates streamed as they come."""
        link = await self._link(host)
        text, earlier = prompt_of(request.body)
        if link.fresh and earlier:
            text = f"The conversation so far:\n\n{earlier}\n\nThe user now says:\n\n{text}"
        link.fresh = False
        link.client.begin(host)
        prompt = asyncio.ensure_future(
            link.conn.prompt(session_id=link.session_id, prompt=[text_block(text)])
        )
        exited = asyncio.ensure_future(link.process.wait())
        try:
            while True:
                getter = asyncio.ensure_future(link.client.queue.get())
                done, _ = await asyncio.wait(
                    {getter, prompt, exited}, return_when=asyncio.FIRST_COMPLETED
                )
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                while not link.client.queue.empty():
                    yield link.client.queue.get_nowait()
                if prompt in done and prompt.exception() is None:
                    yield [MessageStop(_STOPS.get(prompt.result().stop_reason, "other"))]
                    return
                if prompt in done:  # a broken connection is usually a process that died
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.shield(exited), EXIT_WAIT_S)
                code = link.process.returncode
                why = (
                    f"the agent exited with code {code} mid-turn"
                    if code is not None
                    else f"the agent failed the turn: {prompt.exception()}"
                )
                yield [failure(f"provider {self.instance.name!r}: {why}", link.exit_detail())]
                await self._drop(host.scope)
                return
        finally:
            exited.cancel()
            link.client.end()
            if not prompt.done():
                self._cancel_turn(host.scope, link, prompt)

    def _cancel_turn(self, scope: str, link: _Link, prompt: asyncio.Future[Any]) -> None:
        """Send ``session/cancel``; close the agent if it does not end the turn soon."""

        async def settle() -> None:
            with contextlib.suppress(Exception):
                await link.conn.cancel(session_id=link.session_id)
            try:
                await asyncio.wait_for(prompt, CANCEL_GRACE_S)
            except Exception:
                if self._pool().get(scope) is link:
                    await self._drop(scope)

        task = asyncio.create_task(settle())
        link.tasks.add(task)
        task.add_done_callback(link.tasks.discard)

    async def _drop(self, scope: str) -> None:
        link = self._pool().pop(scope, None)
        if link is not None:
            await _close(link)

    async def aclose(self) -> None:
        """Close every agent process, then the (unused) HTTP client."""
        for scope in list(self._pool()):
            await self._drop(scope)
        await super().aclose()


async def _close(link: _Link) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(link.conn.close(), 2)
    await stop_process(link.process)
    for task in link.tasks:
        if task is not asyncio.current_task():
            task.cancel()
