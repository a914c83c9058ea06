"""The web chat's JSON routes under ``/v1/qodeassist/``: chats, edits and permission answers.

``GET chats`` lists the stored chats (the LSP's ``chat/list``), ``GET chats/{id}`` returns one
(``chat/get``), ``DELETE chats/{id}`` removes it, ``POST chats/{id}/cancel`` stops its answer,
``POST edits/{id}`` applies, rejects or undoes a proposed edit (``chat/editFile``) and
``POST permissions/{id}`` answers a permission question shown in a stream. Bodies are the
models of `bodies`; a malformed one is a 400 naming the field.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from qodeassist_lsp.http_api.bodies import EditActionBody, PermissionAnswerBody, validated
from qodeassist_lsp.http_api.errors import ApiError, read_json
from qodeassist_lsp.http_api.host import HttpHost

EDIT_ACTIONS = ("apply", "reject", "undo")


def _host(request: Request) -> HttpHost:
    host: HttpHost = request.app.state.host
    return host


async def list_chats(request: Request) -> Response:
    """``[{chatId, title, agent, updatedAt}]``, most recent first."""
    return JSONResponse((await _host(request).chat()).list())


async def get_chat(request: Request) -> Response:
    """One chat with its messages in the history file's block format."""
    service = await _host(request).chat()
    return JSONResponse(service.get(request.path_params["chat_id"]))


async def delete_chat(request: Request) -> Response:
    """Cancel and remove a chat."""
    await (await _host(request).chat()).delete(request.path_params["chat_id"])
    return JSONResponse({"deleted": request.path_params["chat_id"]})


async def cancel_chat(request: Request) -> Response:
    """Cancel the chat's answer in flight."""
    (await _host(request).chat()).cancel(request.path_params["chat_id"])
    return JSONResponse({"cancelled": request.path_params["chat_id"]})


async def act_on_edit(request: Request) -> Response:
    """``{chatId, action: apply | reject | undo}`` → ``{status, message}``."""
    raw = await read_json(request)
    try:
        body = validated(EditActionBody, raw)
    except ApiError as exc:
        raise ApiError(
            400,
            f"{exc.param}: send {{chatId, action}} with action one of {', '.join(EDIT_ACTIONS)}",
            param=exc.param,
        ) from None
    manager = await _host(request).edits()
    status, message = await manager.act(body.chat_id, request.path_params["edit_id"], body.action)
    return JSONResponse({"status": status, "message": message})


async def answer_permission(request: Request) -> Response:
    """``{answer}`` (one of the question's actions) → ``{answered: true}``."""
    answer = validated(PermissionAnswerBody, await read_json(request)).answer
    question_id = request.path_params["question_id"]
    if not _host(request).questions.answer(question_id, answer):
        raise ApiError(404, f"no open permission question {question_id!r} with that answer")
    return JSONResponse({"answered": True})
