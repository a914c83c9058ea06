"""The HTTP API's request bodies as pydantic models, and their problems as `ApiError` 400s.

A body is validated once, by its model, before a route reads it: the shape (types, required
fields, the extension's choices) is the model's; what the route cannot serve or what only makes
sense across fields (client tools, the last message's role) is the route's, on the typed body.
Unknown fields are accepted, since OpenAI clients send many. A problem answers 400 with
``param`` naming the field (``messages[0].content[1]``) and a message that starts with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

import pydantic
from pydantic import ConfigDict, Field, StrictBool

from qodeassist_lsp.http_api.errors import ApiError
from qodeassist_lsp.http_api.gate import ASK_MODES, AskMode

__all__ = [
    "ChatMessage",
    "CompletionBody",
    "ContentPart",
    "EditActionBody",
    "Extension",
    "ImageUrl",
    "PermissionAnswerBody",
    "StreamOptions",
    "validated",
]

M = TypeVar("M", bound=pydantic.BaseModel)


class Body(pydantic.BaseModel):
    """A body or a part of one: unknown fields accepted and kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ImageUrl(Body):
    """``image_url``: ``{url}`` (a ``data:`` URL; none is fetched)."""

    url: str | None = None


class ContentPart(Body):
    """One part of a message's content: ``text`` or ``image_url``."""

    type: str
    text: str = ""
    image_url: ImageUrl | str | None = None


class ChatMessage(Body):
    """One message: ``{role, content}``, the content text or a list of parts."""

    role: str | None = None
    content: str | list[ContentPart] | None = None


class StreamOptions(Body):
    """``stream_options``."""

    include_usage: bool = False


class Extension(Body):
    """``qodeassist``: the server's own request fields."""

    chat_id: str | None = Field(default=None, alias="chatId")
    permissions: AskMode = "deny"
    events: bool = False
    requires: Any = None
    """The agent pool's requirements, read by `Requirements.from_json` (its messages)."""


class CompletionBody(Body):
    """``POST /v1/chat/completions``: OpenAI's fields, and ``qodeassist``."""

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: StrictBool | None = None
    stream_options: StreamOptions | None = None
    n: Any = None
    tools: Any = None
    functions: Any = None
    tool_choice: Any = None
    function_call: Any = None
    response_format: Any = None
    qodeassist: Extension | None = None


class EditActionBody(Body):
    """``POST /v1/qodeassist/edits/{id}``: ``{chatId, action}``."""

    chat_id: str = Field(alias="chatId")
    action: Literal["apply", "reject", "undo"]


class PermissionAnswerBody(Body):
    """``POST /v1/qodeassist/permissions/{id}``: ``{answer}``."""

    answer: str


def _param(loc: tuple[int | str, ...]) -> str:
    """``("messages", 0, "content")`` → ``messages[0].content`` (union member tags dropped)."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif "[" in part or part in ("str", "none", "function-after", "json-or-python"):
            continue  # pydantic names the union member it tried: not a field
        elif part[:1].isupper():
            continue  # ``ImageUrl``: a model tried in a union
        else:
            text += f".{part}" if text else part
    return text


_FRIENDLY: Mapping[str, Callable[[str, Any], str]] = {
    "model": lambda _p, _v: "model: name a chat agent (GET /v1/models lists them)",
    "messages": lambda _p, _v: "messages: a non-empty list of {role, content} is required",
    "stream": lambda _p, value: f"stream: must be true or false (a JSON boolean), not {value!r}",
    "qodeassist": lambda _p, _v: "qodeassist: must be an object",
    "qodeassist.permissions": lambda _p, _v: (
        f"qodeassist.permissions: use one of {', '.join(ASK_MODES)}"
    ),
}
"""The messages of the fields clients get wrong most, by ``param``."""


_MESSAGE = re.compile(r"messages\[\d+\]")
_CONTENT = re.compile(r"(messages\[\d+\])\.content")
_PART = re.compile(r"(messages\[\d+\]\.content\[\d+\])(\.type)?")


def _message(param: str, error: Any) -> tuple[str, str]:
    """Return the ``param`` to name and the message for one pydantic error."""
    friendly = _FRIENDLY.get(param)
    if friendly is not None:
        return param, friendly(param, error.get("input"))
    if _MESSAGE.fullmatch(param):
        return param, f"{param}: must be an object"
    if match := _CONTENT.fullmatch(param):
        return param, f"{match[1]}: content must be a string or a list of content parts"
    if match := _PART.fullmatch(param):
        return match[1], f"{match[1]}: only text and image_url parts are supported"
    return param or "body", f"{param or 'the body'}: {error['msg']}"


def validated(model: type[M], body: Mapping[str, Any]) -> M:
    """Return ``body`` as ``model``; raise `ApiError` 400 naming the first field at fault."""
    try:
        return model.model_validate(body)
    except pydantic.ValidationError as exc:
        errors = exc.errors()
        # A union reports every member it tried; the member the value was meant for is the
        # one with the deepest location.
        error = max(errors, key=lambda e: len(e["loc"])) if errors else {"loc": (), "msg": ""}
        param, message = _message(_param(tuple(error["loc"])), error)
        raise ApiError(400, message, param=param) from None
