"""Chat over LSP: the ``qodeassist/chat/*`` requests, ``qodeassist/chat/event`` and agents.

``chat/send {mode: "plan"}`` starts a planning turn (``plan_handlers`` serves the rest of plan
mode).

``chat/send`` answers ``{chatId, requestId}`` at once; the answer streams as notifications
(held back until that answer is written: the `EventGate` every door holds with) and, with a
work-done token, as ``$/progress``. Params are validated with pydantic (``params``, imported on
first use so that ``initialize`` does not wait for it); a problem the user can fix comes back
as ``InvalidParams`` with a message that says what to change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.features.chat.event_gate import EventGate, Payload
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.progress import WorkDoneProgress
from qodeassist_lsp.lsp.server import QodeAssistServer
from qodeassist_lsp.wire.errors import QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.core.request import Request
    from qodeassist_lsp.features.chat.service import ChatService
    from qodeassist_lsp.lsp.params import (
        AgentsParams,
        ChatIdParams,
        CompressParams,
        SendParams,
        TokensParams,
    )

log = logging.getLogger("qodeassist.server")

PROGRESS_EVERY_CHARS = 200


class ChatFeature(LanguageFeature):
    """The chat service of one server and the gate its events pass."""

    def __init__(self, server: QodeAssistServer) -> None:
        """Serve chats for ``server``; the service is created on first use."""
        self.server = server
        self._service: ChatService | None = None
        self.events = EventGate(self._send_event)
        """Holds a chat's events until the ``chat/send`` answer naming it is written."""

    async def service(self) -> ChatService:
        """Return the chat service once the configuration is loaded."""
        await self.server.backend.runtime()
        if self._service is None:
            self._service = self.server.workbench().chat_service(self.events.emit)
        return self._service

    def _send_event(self, chat_id: str, payload: Payload) -> None:
        if payload.get("kind") == "failed":  # the session logs it at INFO only
            log.warning("chat %s failed: %s", chat_id, payload.get("error", {}).get("message"))
        self.server.protocol.notify(methods.CHAT_EVENT, {"chatId": chat_id, **payload})

    async def aclose(self) -> None:
        """Cancel the running chat requests."""
        if self._service is not None:
            await self._service.aclose()


async def chats(ls: QodeAssistServer) -> ChatService:
    """Return the server's chat service once the configuration is loaded."""
    return await ls.feature_of(ChatFeature).service()


def _follow(
    service: ChatService, chat_id: str, request: Request, progress: WorkDoneProgress
) -> None:
    """Report a chat request's streaming through ``progress`` until its terminal event."""
    streamed = 0
    reported = 0

    def listen(event: Any) -> None:
        nonlocal streamed, reported
        if event.kind == "text":
            streamed += len(event.text)
            if streamed - reported >= PROGRESS_EVERY_CHARS:
                reported = streamed
                progress.report(f"{streamed} characters")
        elif event.kind in ("finished", "failed", "cancelled"):
            progress.end(event.kind)

    request.add_listener(listen)
    progress.on_cancel(lambda: service.cancel(chat_id))


@contextlib.contextmanager
def _ending(progress: WorkDoneProgress) -> Iterator[None]:
    """End ``progress`` with the failure when the work raises one of the package's errors."""
    try:
        yield
    except QodeAssistError as exc:
        progress.end(f"failed: {exc}")
        raise


async def chat_send(ls: QodeAssistServer, args: SendParams) -> dict[str, Any]:
    """Start a chat request; answer ``{chatId, requestId, agent}`` at once, stream the rest."""
    feature = ls.feature_of(ChatFeature)
    from qodeassist_lsp.core.agent_pool import Requirements
    from qodeassist_lsp.features.chat.service import SendInput

    agent, requires = Requirements.of_agent(args.agent)
    service = await feature.service()
    progress = WorkDoneProgress(ls, args.work_done_token, "QodeAssist chat")
    await progress.begin(create=False)
    hold = feature.events.hold(args.chat_id)
    try:
        with _ending(progress):
            send = service.plans.start if args.mode == "plan" else service.send
            chat_id, request = await send(
                SendInput(
                    args.message,
                    chat_id=args.chat_id,
                    agent=agent,
                    attachments=args.attachments,
                    linked_files=args.linked_files,
                    requires=requires,
                )
            )
    finally:
        # pygls writes the answer in a done-callback scheduled when the handler returns; the
        # second `call_soon` runs after it.
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_soon, feature.events.release, hold)
    _follow(service, chat_id, request, progress)
    return {"chatId": chat_id, "requestId": request.id, "agent": service.agent_of(chat_id)}


async def chat_cancel(ls: QodeAssistServer, args: ChatIdParams) -> None:
    """Cancel the running request of a chat."""
    (await chats(ls)).cancel(args.chat_id)


async def chat_list(ls: QodeAssistServer, _params: object) -> list[dict[str, Any]]:
    """List the saved chats, newest first."""
    return (await chats(ls)).list()


async def chat_get(ls: QodeAssistServer, args: ChatIdParams) -> dict[str, Any]:
    """Return one chat with its messages."""
    return (await chats(ls)).get(args.chat_id)


async def chat_delete(ls: QodeAssistServer, args: ChatIdParams) -> None:
    """Delete a chat and its history file."""
    await (await chats(ls)).delete(args.chat_id)


async def chat_compress(ls: QodeAssistServer, args: CompressParams) -> dict[str, Any]:
    """Summarise a chat into a new, shorter one; answer the new chat's id."""
    service = await chats(ls)
    progress = WorkDoneProgress(ls, args.work_done_token, "QodeAssist: summarising chat")
    await progress.begin(create=False)
    with _ending(progress):
        new_id = await service.compress(args.chat_id)
    progress.end("done")
    return {"chatId": new_id}


async def chat_tokens(ls: QodeAssistServer, args: TokensParams) -> dict[str, Any]:
    """Estimate the tokens a chat with this draft and attachments would send."""
    return (await chats(ls)).tokens(args.chat_id, args.draft, args.attachments)


async def agents_list(ls: QodeAssistServer, args: AgentsParams) -> list[dict[str, Any]]:
    """List the agents (optionally only one pipeline's) for the agent pickers."""
    from qodeassist_lsp.core.agent_catalog import agent_summaries

    await ls.backend.runtime()
    return agent_summaries(ls.backend.configuration, args.pipeline)


def setup(server: QodeAssistServer) -> None:
    """Register the chat and agent-list handlers and the chat feature on ``server``."""
    server.add_feature(ChatFeature(server))
    server.feature(methods.CHAT_SEND)(chat_send)
    server.feature(methods.CHAT_CANCEL)(chat_cancel)
    server.feature(methods.CHAT_LIST)(chat_list)
    server.feature(methods.CHAT_GET)(chat_get)
    server.feature(methods.CHAT_DELETE)(chat_delete)
    server.feature(methods.CHAT_COMPRESS)(chat_compress)
    server.feature(methods.CHAT_TOKENS)(chat_tokens)
    server.feature(methods.AGENTS_LIST)(agents_list)
