"""``POST /v1/chat/completions`` and ``GET /v1/models``: the OpenAI-compatible surface.

``model`` is a chat agent's name (``GET /v1/models`` lists them; ``auto`` lets the router
pick), or ``pool`` with ``"qodeassist": {"requires": {…}}`` (or alone, for any agent) to let the
agent pool lend one; the answer's ``model`` is the agent that served. A request starts a new
stored chat seeded with the earlier messages it carries (system messages become a layer of the
system prompt), or continues a stored chat named by ``"qodeassist": {"chatId": …}`` with its
last user message; either way it runs through the chat service, so tools, permissions and
history are the LSP chat's. The chat's id comes back in the ``X-QodeAssist-Chat-Id`` header,
percent-encoded (`chat_header`: a header carries Latin-1 only, an id may hold any text).
Tools run on the server: their calls are not OpenAI ``tool_calls``, and the OpenAI fields this
cannot serve (client ``tools``, ``tool_choice`` that forces a call, structured
``response_format``, ``n`` > 1) are refused with a 400 naming them (`refuse_unservable`); with
``"qodeassist": {"events": true}`` every chunk of the stream also carries the typed chat event
(``qodeassist``) — thinking, tool calls and results, proposed edits, permission questions.
``"qodeassist": {"permissions": "deny" | "allow" | "ask"}`` says how ``ask`` is answered.
User messages may carry images as ``image_url`` parts with ``data:`` URLs (none is fetched).
A non-streamed request whose client disconnects cancels its turn (and so the provider request).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any
from urllib.parse import quote

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.agent_pool import InvalidRequirements, Requirements
from qodeassist_lsp.core.content import ImageBlock, Message, TextBlock
from qodeassist_lsp.features.chat.files import MAX_IMAGE_BYTES
from qodeassist_lsp.http_api.bodies import (
    ChatMessage,
    CompletionBody,
    ContentPart,
    Extension,
    ImageUrl,
    validated,
)
from qodeassist_lsp.http_api.errors import NO_RETRY, ApiError, error_body, read_json
from qodeassist_lsp.http_api.gate import AskMode, ChatAsker
from qodeassist_lsp.http_api.host import HttpHost
from qodeassist_lsp.wire.error_table import category_status

CHAT_HEADER = "X-QodeAssist-Chat-Id"
POOL = "pool"
"""The ``model`` that asks the agent pool (with ``qodeassist.requires``, or for any agent)."""
TERMINAL = ("finished", "failed", "cancelled")
_FINISH = {"max_tokens": "length", "length": "length"}


_DATA_URL = re.compile(r"data:(image/[\w.+-]+);base64,(.*)", re.DOTALL)
_TOOLS_HINT = (
    "the server runs its own tool kit for the chat agent (its calls show as events with "
    '"qodeassist": {"events": true}), so client-side function tools cannot be served'
)


def chat_header(chat_id: str) -> str:
    """Return ``chat_id`` as an ``X-QodeAssist-Chat-Id`` value: ASCII, never raising.

    Percent-encoded (RFC 3986, UTF-8): an id of letters, digits, ``_ - . ~`` is sent as is.
    """
    return quote(chat_id, safe="", errors="surrogatepass")


def _unsupported(param: str, message: str) -> ApiError:
    return ApiError(400, f"{param}: {message}", code="unsupported_parameter", param=param)


def refuse_unservable(body: CompletionBody) -> None:
    """Refuse the OpenAI fields this server cannot honour, naming the field (never ignore them).

    Harmless values pass: no ``tools`` (or an empty list), ``tool_choice`` ``none``/``auto``,
    ``response_format`` ``{"type": "text"}``, ``n`` 1.
    """
    if body.tools:
        raise _unsupported("tools", f"{_TOOLS_HINT}; send the request without tools")
    if body.functions:
        raise _unsupported("functions", f"{_TOOLS_HINT}; send the request without functions")
    for name, value in (("tool_choice", body.tool_choice), ("function_call", body.function_call)):
        if value not in (None, "none", "auto"):
            raise _unsupported(
                name, f'{_TOOLS_HINT}, nor a call forced; leave it out (or send "none")'
            )
    if body.response_format is not None and body.response_format != {"type": "text"}:
        raise _unsupported(
            "response_format",
            "structured output (json_object, json_schema) is not supported: the chat agent "
            'answers in free text; leave it out (or send {"type": "text"}) and ask for JSON '
            "in the message instead",
        )
    if body.n is not None and (body.n != 1 or isinstance(body.n, bool)):
        raise _unsupported("n", "one choice per request only: leave n out or send 1")


def _content_of(
    content: str | list[ContentPart] | None, where: str
) -> tuple[str, list[ImageBlock]]:
    """Return the text and the images (``image_url`` parts with ``data:`` URLs) of a message."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    parts: list[str] = []
    images: list[ImageBlock] = []
    for index, part in enumerate(content):
        if part.type == "text":
            parts.append(part.text)
        elif part.type == "image_url":
            images.append(_image_of(part.image_url, f"{where}.content[{index}]"))
        else:
            raise ApiError(
                400,
                f"{where}.content[{index}]: only text and image_url parts are supported",
                param=f"{where}.content[{index}]",
            )
    return "".join(parts), images


def _image_of(spec: ImageUrl | str | None, where: str) -> ImageBlock:
    url = spec.url if isinstance(spec, ImageUrl) else spec
    match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if match is None:
        raise ApiError(
            400,
            f"{where}: send the image inline, as a data:image/…;base64,… URL "
            "(the server does not fetch images)",
            param=where,
        )
    data = match.group(2).strip()
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        raise ApiError(400, f"{where}: the data URL's image is not base64", param=where) from None
    if size > MAX_IMAGE_BYTES:
        raise ApiError(
            400,
            f"{where}: the image is {size / 2**20:.1f} MiB; images over "
            f"{MAX_IMAGE_BYTES // 2**20} MiB cannot be sent",
            param=where,
        )
    return ImageBlock(data, match.group(1))


class Completion:
    """A parsed ``/v1/chat/completions`` request."""

    def __init__(self, raw: dict[str, Any]) -> None:
        """Read ``raw`` as `CompletionBody`; raise `ApiError` (400) with what to change."""
        body = validated(CompletionBody, raw)
        refuse_unservable(body)
        self.stream = body.stream is True
        self.include_usage = bool(body.stream_options and body.stream_options.include_usage)
        extension = body.qodeassist or Extension()
        self.chat_id = extension.chat_id or None
        self.mode: AskMode = extension.permissions
        self.events = extension.events
        self.model, self.requires = _choice(body.model, extension.requires)
        turns, self.system = self._messages(body.messages)
        last = turns.pop()
        self.message, self.history = last.text, turns
        self.images = [b for b in last.blocks if isinstance(b, ImageBlock)]
        """The last message's images (stored beside the chat as attached ones are)."""

    @staticmethod
    def _messages(raw: list[ChatMessage]) -> tuple[list[Message], str]:
        """Return the turns (the user's last) and the system text."""
        system: list[str] = []
        turns: list[Message] = []
        for index, item in enumerate(raw):
            where = f"messages[{index}]"
            role, (text, images) = item.role, _content_of(item.content, where)
            if images and role != "user":
                raise ApiError(400, f"{where}: only user messages can carry images", param=where)
            if role in ("system", "developer"):
                system.append(text)
            elif role in ("user", "assistant"):
                blocks = ((TextBlock(text),) if text else ()) + tuple(images)
                turns.append(Message("user" if role == "user" else "assistant", blocks))
            else:
                raise ApiError(
                    400,
                    f"messages[{index}]: role {role!r} is not supported (tools run on the "
                    "server; send system, user and assistant messages)",
                    param=f"messages[{index}].role",
                )
        if not turns or turns[-1].role != "user":
            raise ApiError(400, "messages: the last message must be the user's", param="messages")
        return turns, "\n\n".join(s for s in system if s)


def _choice(model: Any, requires: Any) -> tuple[str, Requirements | None]:
    """Return the named agent, or the agent pool's requirements (``model`` then ``pool``)."""
    if requires is None:
        if not isinstance(model, str) or not model:
            raise ApiError(
                400, "model: name a chat agent (GET /v1/models lists them)", param="model"
            )
        return model, (Requirements() if model == POOL else None)
    if model not in (None, "", POOL):
        raise ApiError(
            400,
            f"model {model!r} and qodeassist.requires both choose the agent: send model "
            f'"{POOL}" (or none) with requires, or drop requires',
            param="model",
        )
    try:
        return POOL, Requirements.from_json(requires)
    except InvalidRequirements as exc:
        message = str(exc).replace("agent.requires", "qodeassist.requires")
        raise ApiError(400, message, param="qodeassist.requires") from None


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps(
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]},
        ensure_ascii=False,
    )


def _error(payload: dict[str, Any]) -> dict[str, Any]:
    error = payload.get("error") or {}
    category = str(error.get("category", "cancelled" if payload["kind"] == "cancelled" else ""))
    message = error.get("message") or "the request was cancelled"
    return {"message": message, "type": category, "code": category}


class _Usage:
    def __init__(self) -> None:
        self.prompt = 0
        self.completion = 0

    def add(self, payload: dict[str, Any]) -> None:
        self.prompt = int(payload.get("inputTokens", 0)) + int(payload.get("cachedTokens", 0))
        self.completion = int(payload.get("outputTokens", 0))

    def as_json(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        }


async def chat_completions(request: Request) -> Response:
    """Run one chat turn; answer as one JSON object or as an SSE stream of chunks."""
    host: HttpHost = request.app.state.host
    args = Completion(await read_json(request))
    if args.requires is None:
        await _check_model(host, args.model)
    service = await host.chat()
    from qodeassist_lsp.features.chat.files import InlineImage
    from qodeassist_lsp.features.chat.service import SendInput

    images = [
        InlineImage(base64.b64decode(image.data), image.media_type, f"image-{number}")
        for number, image in enumerate(args.images, 1)
    ]

    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    hold = host.hub.hold(args.chat_id)  # a pool's wait holds no other chat's stream
    try:
        chat_id, turn = await service.send(
            SendInput(
                args.message,
                chat_id=args.chat_id,
                agent=None if args.requires else args.model,
                history=args.history,
                images=images,
                system=args.system,
                requires=args.requires,
            )
        )
        unsubscribe = host.hub.subscribe(chat_id, queue.put_nowait, turn.id)
        assert host.bench is not None  # wired by host.chat()
        gate = host.bench.gate
        gate.serve(chat_id, ChatAsker(host.questions, chat_id, args.mode))
    finally:
        host.hub.release(hold)
    base = {
        "id": f"chatcmpl-{turn.id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": service.agent_of(chat_id) or args.model,  # the agent that serves
    }

    def end() -> None:
        unsubscribe()
        gate.release(chat_id)
        if not turn.done:
            service.cancel(chat_id)

    headers = {CHAT_HEADER: chat_header(chat_id)}
    if args.stream:
        return EventSourceResponse(
            _stream(args, base, chat_id, queue, end), headers=headers, ping=15
        )
    try:
        return await _until_gone(request, _collect(args, base, chat_id, queue, headers))
    finally:
        end()


async def _until_gone(request: Request, answer: Awaitable[Response]) -> Response:
    """Await ``answer``; if the client disconnects first, stop waiting (``end`` cancels the turn).

    The body has been read, so the next ASGI message is the disconnect.
    """
    collecting = asyncio.ensure_future(answer)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait((collecting, gone), return_when=asyncio.FIRST_COMPLETED)
        if collecting.done():
            return collecting.result()
        # Nobody reads this answer: the client left.
        return JSONResponse(
            error_body(499, "the client closed the connection", "client_closed"), status_code=499
        )
    finally:
        for task in (collecting, gone):
            task.cancel()
        await asyncio.gather(collecting, gone, return_exceptions=True)


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _check_model(host: HttpHost, model: str) -> None:
    config = (await host.runtime()).configuration
    names = config.pipelines.loaded(config.agents).choices(CHAT_ASSISTANT)  # GET /v1/models's
    if model not in names:
        raise ApiError(
            404,
            f"model {model!r} is not a chat agent; use one of: {', '.join(names) or 'none'} "
            f'(pipelines.chat_assistant lists them), or "{POOL}" with qodeassist.requires',
            code="model_not_found",
            param="model",
        )


async def _stream(
    args: Completion,
    base: dict[str, Any],
    chat_id: str,
    queue: asyncio.Queue[dict[str, Any]],
    end: Any,
) -> AsyncIterator[str]:
    usage = _Usage()
    try:
        first = {"role": "assistant", "content": ""}
        if args.events:
            yield json.dumps(
                {
                    **base,
                    "choices": [{"index": 0, "delta": first}],
                    "qodeassist": {"kind": "chat", "chatId": chat_id},
                }
            )
        else:
            yield _chunk(base, first)
        while True:
            payload = await queue.get()
            kind = payload.get("kind")
            if kind == "text":
                yield _chunk(base, {"content": payload["text"]})
            elif kind == "thinking" and payload.get("text"):
                yield _chunk(base, {"reasoning_content": payload["text"]})
            elif kind == "usage":
                usage.add(payload)
            if kind in ("failed", "cancelled"):
                yield json.dumps({"error": _error(payload), "qodeassist": payload})
                break
            if kind == "finished":
                finish = _FINISH.get(str(payload.get("stopReason")), "stop")
                extra = {"qodeassist": payload} if args.events else {}
                yield json.dumps(
                    {
                        **base,
                        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                        **extra,
                    }
                )
                if args.include_usage:
                    yield json.dumps({**base, "choices": [], "usage": usage.as_json()})
                break
            if args.events and kind not in ("text", "thinking"):
                yield json.dumps(
                    {**base, "choices": [{"index": 0, "delta": {}}], "qodeassist": payload}
                )
        yield "[DONE]"
    finally:
        end()


async def _collect(
    args: Completion,
    base: dict[str, Any],
    chat_id: str,
    queue: asyncio.Queue[dict[str, Any]],
    headers: dict[str, str],
) -> Response:
    text: list[str] = []
    thinking: list[str] = []
    events: list[dict[str, Any]] = []
    usage = _Usage()
    while True:
        payload = await queue.get()
        events.append(payload)
        kind = payload.get("kind")
        if kind == "text":
            text.append(payload["text"])
        elif kind == "thinking":
            thinking.append(payload.get("text", ""))
        elif kind == "usage":
            usage.add(payload)
        if kind in TERMINAL:
            break
    if kind != "finished":
        error = _error(payload)
        status = 499 if kind == "cancelled" else category_status(error["type"])
        body = error_body(status, error["message"], error["code"])
        # The chat exists and keeps the failed turn: a client's retry would start another.
        return JSONResponse(body, status_code=status, headers={**headers, **NO_RETRY})
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if any(thinking):
        message["reasoning_content"] = "".join(thinking)
    extension: dict[str, Any] = {"chatId": chat_id}
    if args.events:
        extension["events"] = events
    body = {
        **base,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _FINISH.get(str(payload.get("stopReason")), "stop"),
            }
        ],
        "usage": usage.as_json(),
        "qodeassist": extension,
    }
    return JSONResponse(body, headers=headers)


async def list_models(request: Request) -> Response:
    """List the chat agents as OpenAI models (``qodeassist`` holds the agent's summary)."""
    from qodeassist_lsp.core.agent_catalog import agent_summaries

    host: HttpHost = request.app.state.host
    config = (await host.runtime()).configuration
    data = [
        {
            "id": agent["name"],
            "object": "model",
            "created": 0,
            "owned_by": "qodeassist",
            "qodeassist": agent,
        }
        for agent in agent_summaries(config, "chat")
    ]
    return JSONResponse({"object": "list", "data": data})
