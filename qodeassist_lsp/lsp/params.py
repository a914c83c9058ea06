"""The params of every custom method and command: one pydantic model each (camelCase on the wire).

A handler takes its params one way: lsprotocol's types for LSP methods, a model of this module
for ours, named in its signature (``async def chat_send(ls, args: SendParams)``, imported under
``TYPE_CHECKING``). `lsp.errors.answering`, which wraps every handler, validates the params into
that model once, with `parse`, before the handler runs; a problem is answered -32602 naming each
field. Kept out of the handler modules so that importing the server does not import pydantic
before ``initialize`` is answered.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import pydantic
from pydantic.alias_generators import to_camel

from qodeassist_lsp.wire.errors import InvalidParams
from qodeassist_lsp.workbench.features import problems


class Params(pydantic.BaseModel):
    """Params: camelCase keys, unknown keys ignored."""

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )


class SendParams(Params):
    """``qodeassist/chat/send`` params."""

    message: str = ""
    chat_id: str | None = None
    agent: str | dict[str, Any] | None = None
    """An agent's name, ``"auto"``, or ``{"requires": {...}}`` for the agent pool."""
    attachments: list[str] = []
    linked_files: list[str] | None = None
    work_done_token: str | int | None = None
    mode: Literal["chat", "plan"] = "chat"
    """``plan``: the model writes a plan of steps first (docs/plan.md)."""


class PlanStepParams(Params):
    """One step of ``qodeassist/chat/plan/update``."""

    id: str | None = None
    title: str
    status: str | None = None


class PlanUpdateParams(Params):
    """``qodeassist/chat/plan/update`` params."""

    chat_id: str
    steps: list[PlanStepParams]


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


class EditFileParams(Params):
    """``qodeassist/chat/editFile`` params."""

    chat_id: str
    edit_id: str
    action: Literal["apply", "undo", "reject"]


class CheckpointsListParams(Params):
    """``qodeassist/checkpoints/list`` params."""

    chat_id: str | None = None


class RestoreParams(Params):
    """``qodeassist/checkpoints/restore`` params."""

    checkpoint_id: str


class Position(Params):
    """A position as the client counts it."""

    line: int = pydantic.Field(ge=0)
    character: int = pydantic.Field(ge=0)


class Range(Params):
    """A range of the document."""

    start: Position
    end: Position


class RefactorParams(Params):
    """The ``qodeassist.refactor`` command's argument (and a refactor code action's data)."""

    uri: str
    range: Range
    version: int | None = None
    instruction: str | None = None
    instruction_id: str | None = None
    title: str | None = None


class SettingsParams(Params):
    """``qodeassist/settings/get`` params."""

    scope: Literal["user", "project"] = "user"


class SettingsUpdateParams(SettingsParams):
    """``qodeassist/settings/update`` params: ``{"section.key": value}``, null removes a key."""

    changes: dict[str, Any] = pydantic.Field(min_length=1)


class DoctorParams(Params):
    """The ``qodeassist.doctor`` command's optional argument."""

    timeout: float | None = pydantic.Field(default=None, gt=0)


class DocumentRef(Params):
    """``{uri, version?}``."""

    uri: str
    version: int | None = None


class DiagnosticParam(Params):
    """A diagnostic of the document (LSP ``Diagnostic``; only what the prompt uses)."""

    range: dict[str, Any]
    message: str
    severity: int | None = None


class InlineEditContext(Params):
    """``context``: sidekick.nvim sends ``triggerKind``; ``diagnostics`` is our addition."""

    trigger_kind: int | None = None
    diagnostics: list[DiagnosticParam] = pydantic.Field(default_factory=list)


class InlineEditParams(Params):
    """``textDocument/copilotInlineEdit`` params."""

    text_document: DocumentRef
    position: Position
    context: InlineEditContext | None = None


class ShownParams(Params):
    """``textDocument/didShowInlineEdit`` params: the item the editor showed."""

    item: dict[str, Any] = pydantic.Field(default_factory=dict)


class CursorParams(Params):
    """``qodeassist/didMoveCursor`` params: the document and where its caret rests."""

    text_document: DocumentRef
    position: Position


class FocusParams(Params):
    """``textDocument/didFocus`` params."""

    text_document: DocumentRef | None = None


P = TypeVar("P", bound=Params)


def parse(model: type[P], params: Any) -> P:
    """Validate ``params`` as ``model``; problems become ``InvalidParams`` naming each field."""
    try:
        return model.model_validate(params or {})
    except pydantic.ValidationError as exc:
        raise InvalidParams(f"{model.__name__}: {problems(exc)}") from None
