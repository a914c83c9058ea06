"""Next-edit suggestions over LSP, exactly as Copilot's language server serves them.

``textDocument/copilotInlineEdit`` (and its alias ``qodeassist/inlineEdit``) takes
``{textDocument: {uri, version}, position, context?}`` and answers
``{edits: [{text, textDocument: {uri, version}, range, command}]}``; the edits are alternatives.
Accepting one runs its ``command`` (``qodeassist.nextEditAccepted``) through
``workspace/executeCommand``, which feeds the acceptance statistics.
``textDocument/didShowInlineEdit {item}`` counts a shown edit and ``textDocument/didFocus``
marks a file as recently viewed. So copilot-lsp, sidekick.nvim and copilot.el work against
this server unchanged.

Positions arrive and leave in the negotiated encoding; ``NextEditService`` works in code points.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.positions import client_position, line_at, require_line, to_code_points
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.features.next_edit.results import SuggestedEdit
    from qodeassist_lsp.features.next_edit.service import NextEditService
    from qodeassist_lsp.lsp.params import FocusParams, InlineEditParams, ShownParams

__all__ = [
    "NextEditFeature",
    "did_focus",
    "did_show_inline_edit",
    "inline_edit",
    "next_edit_accepted",
    "setup",
]

log = logging.getLogger("qodeassist.server")

_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class NextEditFeature(LanguageFeature):
    """The next-edit service of one server, created with the first opened document."""

    status_key = "nextEdit"

    def __init__(self, server: QodeAssistServer) -> None:
        """Create the service for ``server`` when its first document opens."""
        self.server = server
        self.service: NextEditService | None = None
        server.documents.add_listener(self._on_first_document)

    def _on_first_document(self, event: object) -> None:
        self.server.documents.remove_listener(self._on_first_document)
        self.created()

    def created(self) -> NextEditService:
        """Return the workbench's service, following the documents from now on."""
        if self.service is None:
            backend = self.server.backend
            self.service = self.server.workbench().next_edit(is_ready=lambda: backend.loaded)
            _follow_completion(self.server, self.service)
        return self.service

    async def ready(self) -> NextEditService:
        """Return the service once the configuration is loaded."""
        service = self.created()
        await self.server.backend.runtime()
        return service

    def reloaded(self, config: Configuration) -> None:
        """Drop next edits being computed for the old configuration."""
        if self.service is not None:
            self.service.reset()

    def status(self) -> dict[str, object] | None:
        """Return the next-edit statistics, None before the service exists."""
        return self.service.status() if self.service is not None else None

    async def aclose(self) -> None:
        """Stop listening and cancel everything in flight."""
        if self.service is not None:
            self.service.close()


def _follow_completion(server: QodeAssistServer, service: NextEditService) -> None:
    """Let inline completion claim its provider instances first (ghost text never waits)."""
    from qodeassist_lsp.lsp.completion_handlers import CompletionFeature

    completion = server.feature_of(CompletionFeature).created()
    completion.upstream_listeners.append(service.yield_to)


def _client_position(ls: QodeAssistServer, text: str, offset: int) -> dict[str, int]:
    line, character = client_position(ls.workspace.position_codec, text, offset)
    return {"line": line, "character": character}


def _edit_json(ls: QodeAssistServer, edit: SuggestedEdit) -> dict[str, Any]:
    text = ls.documents.get(edit.uri)
    source = text.text if text is not None and text.version == edit.version else edit.text_before
    return {
        "text": edit.change.text,
        "textDocument": {"uri": edit.uri, "version": edit.version},
        "range": {
            "start": _client_position(ls, source, edit.change.start),
            "end": _client_position(ls, source, edit.change.end),
        },
        "command": {
            "title": "Accept next edit",
            "command": methods.CMD_NEXT_EDIT_ACCEPTED,
            "arguments": [edit.id],
        },
    }


async def inline_edit(ls: QodeAssistServer, request: InlineEditParams) -> dict[str, Any]:
    """Answer ``textDocument/copilotInlineEdit`` (and ``qodeassist/inlineEdit``)."""
    from qodeassist_lsp.features.next_edit.prompts import DiagnosticNote
    from qodeassist_lsp.features.next_edit.results import NextEditRequest, Outcome

    service = await ls.feature_of(NextEditFeature).ready()
    uri = request.text_document.uri
    document = ls.documents.get(uri)
    if document is None:
        return {"edits": []}
    if request.text_document.version is not None and request.text_document.version != (
        document.version
    ):
        return {"edits": []}  # the editor asked about a text this server does not have
    require_line(methods.INLINE_EDIT, uri, document.text, request.position.line)
    _start, line_text = line_at(document.text, request.position.line)
    column = to_code_points(ls.workspace.position_codec, line_text, request.position.character)
    diagnostics = tuple(
        DiagnosticNote(
            int(d.range.get("start", {}).get("line", 0)),
            _SEVERITY.get(d.severity or 1, "error"),
            d.message,
        )
        for d in (request.context.diagnostics if request.context else [])
    )
    result = await service.suggest(
        NextEditRequest(document, request.position.line, column, diagnostics)
    )
    if result.outcome is Outcome.ERROR and result.error is not None:
        ls.background_failed("next edit", result.agent, result.error)
    elif result.outcome in (Outcome.SUGGESTED, Outcome.NO_CHANGE, Outcome.UNDO):
        ls.background_succeeded()
    return {"edits": [_edit_json(ls, edit) for edit in result.edits]}


async def did_show_inline_edit(ls: QodeAssistServer, args: ShownParams) -> None:
    """Count a next edit the editor showed (``textDocument/didShowInlineEdit``)."""
    item = args.item
    command = item.get("command")
    arguments = command.get("arguments") if isinstance(command, dict) else None
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], str):
        (await ls.feature_of(NextEditFeature).ready()).stats.record_shown(arguments[0])


async def did_focus(ls: QodeAssistServer, args: FocusParams) -> None:
    """Mark the focused document as recently viewed (``textDocument/didFocus``)."""
    document = args.text_document
    if document is not None:
        ls.feature_of(NextEditFeature).created().focus(document.uri)


async def next_edit_accepted(ls: QodeAssistServer, edit_id: str) -> bool:
    """Count an accepted next edit (the edit's ``command``)."""
    return (await ls.feature_of(NextEditFeature).ready()).stats.record_accepted(edit_id)


def setup(server: QodeAssistServer) -> None:
    """Register the next-edit methods, notifications, command and feature on ``server``."""
    server.add_feature(NextEditFeature(server))
    server.feature(methods.INLINE_EDIT)(inline_edit)
    server.feature(methods.INLINE_EDIT_ALIAS)(inline_edit)
    server.feature(methods.DID_SHOW_INLINE_EDIT)(did_show_inline_edit)
    server.feature(methods.DID_FOCUS)(did_focus)
    server.command(methods.CMD_NEXT_EDIT_ACCEPTED)(next_edit_accepted)
