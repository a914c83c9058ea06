"""The params of the next-edit methods (Copilot's shapes), validated with pydantic.

Kept out of ``next_edit_handlers`` so that importing the server does not import pydantic before
``initialize`` is answered.
"""

from __future__ import annotations

from typing import Any

import pydantic

from qodeassist_lsp.lsp.chat_params import Params


class DocumentRef(Params):
    """``{uri, version?}``."""

    uri: str
    version: int | None = None


class Position(Params):
    """``{line, character}`` in the negotiated position encoding."""

    line: int
    character: int


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


class FocusParams(Params):
    """``textDocument/didFocus`` params."""

    text_document: DocumentRef | None = None
