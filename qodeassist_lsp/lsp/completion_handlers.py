"""Completion over LSP: inline completion and the ``textDocument/completion`` fallback.

Both are thin translations to ``CompletionService``. Inline completion is the hot path: its
params arrive and its result leaves as JSON (see ``protocol.DIRECT_REQUESTS``), checked here
as lsprotocol's classes would check them.

Positions arrive in the negotiated encoding (UTF-16 by default); the service works in code
points, so every position is converted through the pygls document on the way in and out.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.positions import line_at, require_line, to_client_units, to_code_points
from qodeassist_lsp.lsp.server import QodeAssistServer

_WORD_BEFORE = re.compile(r"[\w$]+$")


def _documentation(ls: QodeAssistServer, text: str) -> types.MarkupContent | str:
    """Return the suggestion as Markdown when the client declared it, else plain text."""
    document = ls.client_capabilities.text_document
    completion = document.completion if document else None
    item = completion.completion_item if completion else None
    formats = item.documentation_format if item else None
    if formats and types.MarkupKind.Markdown in formats:
        fence = "````" if "```" in text else "```"
        return types.MarkupContent(types.MarkupKind.Markdown, f"{fence}\n{text}\n{fence}")
    return text


if TYPE_CHECKING:
    from qodeassist_lsp.features.completion.service import CompletionItem, CompletionResult

log = logging.getLogger("qodeassist.server")

FALLBACK_BUDGET_S = 0.8
"""``textDocument/completion`` answers within this or empty (``isIncomplete``), so it never
holds up other servers' items; the generation keeps running and the next request reuses it."""


class InlineParams(NamedTuple):
    """What a ``textDocument/inlineCompletion`` request asks for."""

    uri: str
    line: int
    character: int
    invoked: bool
    popup_open: bool

    @classmethod
    def parse(cls, params: Any) -> InlineParams:
        """Read the JSON params; raise ``JsonRpcInvalidParams`` naming what is wrong."""
        try:
            uri = params["textDocument"]["uri"]
            line = params["position"]["line"]
            character = params["position"]["character"]
            context = params["context"]
            trigger = context["triggerKind"]
            popup = context.get("selectedCompletionInfo")
        except (KeyError, TypeError) as exc:
            raise JsonRpcInvalidParams(
                f"textDocument/inlineCompletion: params lack {exc} (textDocument.uri, "
                "position.line, position.character and context.triggerKind are required)"
            ) from exc
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams(
                "textDocument/inlineCompletion: textDocument.uri is not a string"
            )
        for name, value in (("line", line), ("character", character)):
            if not isinstance(value, int) or not 0 <= value <= _UINTEGER_MAX:
                raise JsonRpcInvalidParams(
                    f"textDocument/inlineCompletion: position.{name} is not an unsigned integer"
                )
        if trigger not in _TRIGGER_KINDS:
            raise JsonRpcInvalidParams(
                f"textDocument/inlineCompletion: context.triggerKind {trigger!r} is not 1 or 2"
            )
        return cls(uri, line, character, trigger == _INVOKED, popup is not None)


_UINTEGER_MAX = 2**31 - 1
_INVOKED = types.InlineCompletionTriggerKind.Invoked.value
_TRIGGER_KINDS = {kind.value for kind in types.InlineCompletionTriggerKind}


async def _complete(
    ls: QodeAssistServer, method: str, uri: str, line: int, column: int, invoked: bool
) -> tuple[CompletionResult, str] | None:
    """Run one completion; return the result and the cursor line's text, or None if stale.

    A line past the end of the document is refused (``JsonRpcInvalidParams``).
    """
    service = await ls.completion_service()
    from qodeassist_lsp.features.completion.service import CompletionRequest, TriggerKind

    document = ls.documents.get(uri)
    if document is None:
        return None
    require_line(method, uri, document.text, line)
    start, line_text = line_at(document.text, line)
    character = to_code_points(ls.workspace.position_codec, line_text, column)
    trigger = TriggerKind.INVOKED if invoked else TriggerKind.AUTOMATIC
    request = CompletionRequest(document, line, character, trigger, start + character)
    result = await service.complete(request)
    if result.error is not None:
        log.warning("completion (%s) failed: %s", result.agent, result.error.message)
        ls.show_error(
            f"completion:{result.agent}:{result.error.category}:{result.reason}",
            f"qodeassist completion ({result.agent}): {result.error.message}",
        )
    current = ls.documents.get(uri)
    if current is None or current.version != document.version:
        return None  # the document changed while we worked: the answer is stale
    return result, line_text


def _columns(ls: QodeAssistServer, line_text: str, item: CompletionItem) -> tuple[int, int]:
    """Return the item's replaced span on its line, in the client's position units."""
    codec = ls.workspace.position_codec
    start = to_client_units(codec, line_text, item.start_character)
    end = to_client_units(codec, line_text, item.end_character)
    return start, end


def _range(ls: QodeAssistServer, line_text: str, item: CompletionItem) -> types.Range:
    start, end = _columns(ls, line_text, item)
    return types.Range(types.Position(item.line, start), types.Position(item.line, end))


def _accept_command(item: CompletionItem) -> types.Command:
    return types.Command(title="accepted", command=methods.CMD_ACCEPTED, arguments=[item.id])


def _inline_item(ls: QodeAssistServer, line_text: str, item: CompletionItem) -> dict[str, Any]:
    """Build the ``InlineCompletionItem`` JSON: the text, the range it replaces, the command."""
    start, end = _columns(ls, line_text, item)
    return {
        "insertText": item.insert_text,
        "range": {
            "start": {"line": item.line, "character": start},
            "end": {"line": item.line, "character": end},
        },
        "command": {"title": "accepted", "command": methods.CMD_ACCEPTED, "arguments": [item.id]},
    }


def register(server: QodeAssistServer) -> None:
    """Register the completion handlers on ``server``."""

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(ls: QodeAssistServer, params: Any) -> dict[str, Any]:
        request = InlineParams.parse(params)
        if request.popup_open:
            # Items would have to extend the popup's selection; stay out of its way.
            return {"items": []}
        answer = await _complete(
            ls,
            types.TEXT_DOCUMENT_INLINE_COMPLETION,
            request.uri,
            request.line,
            request.character,
            request.invoked,
        )
        if answer is None:
            return {"items": []}
        result, line_text = answer
        return {"items": [_inline_item(ls, line_text, item) for item in result.items]}

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())
    async def completion(
        ls: QodeAssistServer, params: types.CompletionParams
    ) -> types.CompletionList:
        invoked = (
            params.context is not None
            and params.context.trigger_kind == types.CompletionTriggerKind.Invoked
        )
        try:
            answer = await asyncio.wait_for(
                _complete(
                    ls,
                    types.TEXT_DOCUMENT_COMPLETION,
                    params.text_document.uri,
                    params.position.line,
                    params.position.character,
                    invoked,
                ),
                FALLBACK_BUDGET_S,
            )
        except TimeoutError:
            return types.CompletionList(is_incomplete=True, items=[])
        if answer is None or not answer[0].items:
            return types.CompletionList(is_incomplete=True, items=[])
        result, line_text = answer
        item = result.items[0]
        first_line = item.insert_text.strip().splitlines()[0] if item.insert_text.strip() else ""
        # Clients filter the menu by the word left of the cursor: the item must match it.
        cursor = to_code_points(ls.workspace.position_codec, line_text, params.position.character)
        word = _WORD_BEFORE.search(line_text[:cursor])
        typed = word.group(0) if word else ""
        return types.CompletionList(
            is_incomplete=True,
            items=[
                types.CompletionItem(
                    label=first_line[:60] or item.insert_text[:60],
                    kind=types.CompletionItemKind.Text,
                    detail="qodeassist",
                    filter_text=typed + item.insert_text if typed else None,
                    documentation=_documentation(ls, item.insert_text),
                    sort_text="\U0010ffff",  # after every other server's items
                    text_edit=types.TextEdit(_range(ls, line_text, item), item.insert_text),
                    insert_text_format=types.InsertTextFormat.PlainText,
                    command=_accept_command(item),
                )
            ],
        )

    @server.command(methods.CMD_ACCEPTED)
    async def accepted(ls: QodeAssistServer, item_id: str) -> bool:
        return (await ls.completion_service()).accept(item_id)
