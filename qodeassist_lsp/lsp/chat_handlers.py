"""Chat over LSP: the ``qodeassist/chat/*`` requests, ``qodeassist/chat/event`` and agents.

``chat/send`` answers ``{chatId, requestId}`` at once; the answer streams as notifications
(held back until that answer is written, see ``EventGate``) and, with a work-done token, as
``$/progress``. Params are validated with pydantic (``chat_params``, imported on first use so
that ``initialize`` does not wait for it); a problem the user can fix comes back as
``InvalidParams`` with a message that says what to change.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.progress import WorkDoneProgress
from qodeassist_lsp.lsp.server import QodeAssistServer
from qodeassist_lsp.wire.errors import QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.core.request import Request
    from qodeassist_lsp.features.chat.service import ChatService

log = logging.getLogger("qodeassist.server")

PROGRESS_EVERY_CHARS = 200


class RequestFailed(QodeAssistError, JsonRpcException):
    """LSP ``RequestFailed``: valid params, but the work failed (the message says why)."""

    CODE = -32803
    MESSAGE = "RequestFailed"


def _failed(info: Any) -> RequestFailed:
    """Return the error answered for a failure with a typed ``ErrorInfo``."""
    category = str(info.category)
    return RequestFailed(f"{category} error: {info.message}", data={"category": category})


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
def _answer_errors(progress: WorkDoneProgress | None = None) -> Iterator[None]:
    """Turn the chat's typed failures into JSON-RPC errors (ending ``progress`` first)."""
    from qodeassist_lsp.core.agent_catalog import UnknownPipeline
    from qodeassist_lsp.features.chat.compressor import CompressionFailed
    from qodeassist_lsp.features.chat.files import ChatInputError
    from qodeassist_lsp.features.chat.history_format import HistoryFormatError

    try:
        yield
    except (ChatInputError, HistoryFormatError, UnknownPipeline) as exc:
        if progress is not None:
            progress.end(f"failed: {exc}")
        raise JsonRpcInvalidParams(str(exc)) from None
    except CompressionFailed as exc:
        if progress is not None:
            progress.end(f"failed: {exc}")
        raise _failed(exc.info) from None


def register(server: QodeAssistServer) -> None:
    """Register the chat and agent-list handlers on ``server``."""

    @server.feature(methods.CHAT_SEND)
    async def chat_send(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
        from qodeassist_lsp.features.chat.service import SendInput
        from qodeassist_lsp.lsp.chat_params import SendParams, parse

        args = parse(SendParams, params)
        service = await ls.chat_service()
        progress = WorkDoneProgress(ls, args.work_done_token, "QodeAssist chat")
        if args.work_done_token is not None:
            await progress.begin()
        ls.chat_events.hold()
        try:
            with _answer_errors(progress):
                chat_id, request = await service.send(
                    SendInput(
                        args.message,
                        chat_id=args.chat_id,
                        agent=args.agent,
                        attachments=args.attachments,
                        linked_files=args.linked_files,
                    )
                )
        finally:
            ls.chat_events.release_after_answer()
        _follow(service, chat_id, request, progress)
        return {"chatId": chat_id, "requestId": request.id, "agent": service.agent_of(chat_id)}

    @server.feature(methods.CHAT_CANCEL)
    async def chat_cancel(ls: QodeAssistServer, params: dict[str, Any] | None) -> None:
        from qodeassist_lsp.lsp.chat_params import ChatIdParams, parse

        args = parse(ChatIdParams, params)
        (await ls.chat_service()).cancel(args.chat_id)

    @server.feature(methods.CHAT_LIST)
    async def chat_list(
        ls: QodeAssistServer, params: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        return (await ls.chat_service()).list()

    @server.feature(methods.CHAT_GET)
    async def chat_get(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
        from qodeassist_lsp.lsp.chat_params import ChatIdParams, parse

        args = parse(ChatIdParams, params)
        with _answer_errors():
            return (await ls.chat_service()).get(args.chat_id)

    @server.feature(methods.CHAT_DELETE)
    async def chat_delete(ls: QodeAssistServer, params: dict[str, Any] | None) -> None:
        from qodeassist_lsp.lsp.chat_params import ChatIdParams, parse

        args = parse(ChatIdParams, params)
        with _answer_errors():
            await (await ls.chat_service()).delete(args.chat_id)

    @server.feature(methods.CHAT_COMPRESS)
    async def chat_compress(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
        from qodeassist_lsp.lsp.chat_params import CompressParams, parse

        args = parse(CompressParams, params)
        service = await ls.chat_service()
        progress = WorkDoneProgress(ls, args.work_done_token, "QodeAssist: summarising chat")
        if args.work_done_token is not None:
            await progress.begin()
        with _answer_errors(progress):
            new_id = await service.compress(args.chat_id)
        progress.end("done")
        return {"chatId": new_id}

    @server.feature(methods.CHAT_TOKENS)
    async def chat_tokens(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
        from qodeassist_lsp.lsp.chat_params import TokensParams, parse

        args = parse(TokensParams, params)
        with _answer_errors():
            return (await ls.chat_service()).tokens(args.chat_id, args.draft, args.attachments)

    @server.feature(methods.AGENTS_LIST)
    async def agents_list(
        ls: QodeAssistServer, params: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        from qodeassist_lsp.core.agent_catalog import agent_summaries
        from qodeassist_lsp.lsp.chat_params import AgentsParams, parse

        args = parse(AgentsParams, params)
        await ls.backend.runtime()
        with _answer_errors():
            return agent_summaries(ls.backend.configuration_now, args.pipeline)
