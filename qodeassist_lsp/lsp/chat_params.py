"""The params of the chat methods, validated with pydantic (camelCase on the wire).

Kept out of ``chat_handlers`` so that importing the server does not import pydantic before
``initialize`` is answered.
"""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic
from pydantic.alias_generators import to_camel

from qodeassist_lsp.lsp.errors import InvalidParams


class Params(pydantic.BaseModel):
    """Params: camelCase keys, unknown keys ignored."""

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )


class SendParams(Params):
    """``qodeassist/chat/send`` params."""

    message: str = ""
    chat_id: str | None = None
    agent: str | None = None
    attachments: list[str] = []
    linked_files: list[str] | None = None
    work_done_token: str | int | None = None


class ChatIdParams(Params):
    """Params naming one chat."""

    chat_id: str


class TokensParams(Params):
    """``qodeassist/chat/tokens`` params."""

    chat_id: str | None = None
    draft: str = ""
    attachments: list[str] = []


class CompressParams(ChatIdParams):
    """``qodeassist/chat/compress`` params."""

    work_done_token: str | int | None = None


class AgentsParams(Params):
    """``qodeassist/agents/list`` params."""

    pipeline: str | None = None


P = TypeVar("P", bound=Params)


def parse(model: type[P], params: dict[str, Any] | None) -> P:
    """Validate ``params`` as ``model``; problems become ``InvalidParams`` naming each field."""
    try:
        return model.model_validate(params or {})
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidParams(f"{model.__name__}: {problems}") from None
