"""ACP's next-edit suggestions (``nes/*``, unstable) on the workbench's `NextEditService`.

The client opens an NES session (``nes/start``), keeps the agent's `DocumentStore` in step with
``document/didOpen|didChange|didClose|didFocus`` (which builds the edit history the prompts
need), asks ``nes/suggest`` at a cursor and answers ``nes/accept``/``nes/reject``. A suggestion
is the service's edit as one ``NesEditSuggestion``; accepting or rejecting it counts it as
shown, accepting also as accepted (the statistics of the LSP's ``didShowInlineEdit`` and
``qodeassist.nextEditAccepted``). Positions travel in the encoding chosen in ``initialize``.
A document the ``.qodeassistignore`` of a session's folder excludes gets no edit and never goes
to a prompt: the workbench's rule, the LSP's too.

SDK 0.12 declares these methods but routes none of them, so `add_routes` adds them to the
agent's router.
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp.meta import AGENT_METHODS
from acp.router import MessageRouter, Route
from acp.schema import (
    AcceptNesNotification,
    CloseNesRequest,
    CloseNesResponse,
    DidChangeDocumentNotification,
    DidCloseDocumentNotification,
    DidFocusDocumentNotification,
    DidOpenDocumentNotification,
    DidSaveDocumentNotification,
    NesCapabilities,
    NesDocumentDidChangeCapabilities,
    NesDocumentDidCloseCapabilities,
    NesDocumentDidFocusCapabilities,
    NesDocumentDidOpenCapabilities,
    NesDocumentEventCapabilities,
    NesEditSuggestionVariant,
    NesEventCapabilities,
    NesTextEdit,
    Position,
    Range,
    RejectNesNotification,
    StartNesRequest,
    StartNesResponse,
    SuggestNesRequest,
    SuggestNesResponse,
    TextDocumentContentChangeEvent,
)
from pydantic import BaseModel

from qodeassist_lsp.acp_agent.errors import answering
from qodeassist_lsp.context import positions
from qodeassist_lsp.context.documents import uri_to_path
from qodeassist_lsp.features.next_edit.results import NextEditRequest, Outcome, SuggestedEdit
from qodeassist_lsp.features.next_edit.service import NextEditService
from qodeassist_lsp.wire.errors import InvalidParams
from qodeassist_lsp.workbench.bench import Workbench

__all__ = ["NesServer", "add_routes", "pick_encoding"]

log = logging.getLogger("qodeassist.acp")


def pick_encoding(offered: list[str] | None) -> str:
    """Return the position encoding to use: utf-32 if offered, else utf-16 (the default)."""
    for name in ("utf-32", "utf-16", "utf-8"):
        if offered and name in offered:
            return name
    return "utf-16"


class NesServer:
    """The NES sessions of one agent process, over the host's workbench and its documents."""

    def __init__(self, bench: Workbench) -> None:
        """Serve next edits of ``bench`` for its documents."""
        self._bench = bench
        self._documents = bench.ports.documents
        self._service: NextEditService | None = None
        self.sessions: dict[str, list[Path]] = {}
        """The workspace folders of each NES session (their ``.qodeassistignore`` applies)."""
        self.encoding = "utf-16"

    @staticmethod
    def capabilities() -> NesCapabilities:
        """Return what ``initialize`` advertises: the document events the service follows."""
        return NesCapabilities(
            events=NesEventCapabilities(
                document=NesDocumentEventCapabilities(
                    did_open=NesDocumentDidOpenCapabilities(),
                    did_change=NesDocumentDidChangeCapabilities(sync_kind="incremental"),
                    did_close=NesDocumentDidCloseCapabilities(),
                    did_focus=NesDocumentDidFocusCapabilities(),
                )
            )
        )

    def service(self) -> NextEditService:
        """Return the workbench's next-edit service (over the folders of every NES session)."""
        if self._service is None:
            self._service = self._bench.next_edit(self._folders)
        return self._service

    def _folders(self) -> list[Path]:
        return [folder for folders in self.sessions.values() for folder in folders]

    def _session(self, session_id: str) -> None:
        if session_id not in self.sessions:
            raise InvalidParams(f"no NES session {session_id!r}; start one with nes/start")

    # -- session ------------------------------------------------------------------------------
    def start(self, request: StartNesRequest) -> StartNesResponse:
        """Open an NES session; its folders' ``.qodeassistignore`` files apply to suggestions."""
        uris = [f.uri for f in request.workspace_folders or []]
        if not uris and request.workspace_uri:
            uris = [request.workspace_uri]
        folders = [Path(uri_to_path(u)) for u in uris if u.startswith("file:")]
        session_id = f"nes-{uuid.uuid4().hex[:12]}"
        self.sessions[session_id] = [folder for folder in folders if folder.is_dir()]
        self.service()  # follows the documents from now on (edit pause, typing cancels)
        return StartNesResponse(session_id=session_id)

    def close(self, session_id: str) -> CloseNesResponse:
        """Close an NES session (the documents stay: chat sessions may use them)."""
        self.sessions.pop(session_id, None)
        return CloseNesResponse()

    # -- documents ----------------------------------------------------------------------------
    def did_open(self, note: DidOpenDocumentNotification) -> None:
        """Track an opened document."""
        self._documents.open(note.uri, note.text, note.version, note.language_id)

    def did_change(self, note: DidChangeDocumentNotification) -> None:
        """Apply a document's changes (ranged or whole) in order; the history records them."""
        document = self._documents.get(note.uri)
        if document is None:
            log.warning("document/didChange for %s, which was never opened: ignored", note.uri)
            return
        text = document.text
        for change in note.content_changes:
            text = self._applied(text, change)
        self._documents.change(note.uri, text, note.version)

    def _applied(self, text: str, change: TextDocumentContentChangeEvent) -> str:
        if change.range is None:
            return change.text
        start = self._offset(text, change.range.start)
        end = max(start, self._offset(text, change.range.end))
        return text[:start] + change.text + text[end:]

    def _offset(self, text: str, position: Position) -> int:
        return positions.offset_of(text, position.line, position.character, self.encoding)

    def did_close(self, note: DidCloseDocumentNotification) -> None:
        """Forget a closed document."""
        self._documents.close(note.uri)

    def did_focus(self, note: DidFocusDocumentNotification) -> None:
        """Mark the focused document as recently viewed."""
        self.service().focus(note.uri)

    # -- suggestions --------------------------------------------------------------------------
    async def suggest(self, request: SuggestNesRequest) -> SuggestNesResponse:
        """Answer ``nes/suggest``: the service's edit at the cursor, or no suggestion."""
        self._session(request.session_id)
        document = self._documents.get(request.uri)
        if document is None or document.version != request.version:
            return SuggestNesResponse(suggestions=[])  # a text this agent does not have
        line = request.position.line
        line_text = positions.line_at(document.text, line)[1]
        column = positions.to_code_points(line_text, request.position.character, self.encoding)
        result = await self.service().suggest(NextEditRequest(document, line, column))
        if result.outcome is Outcome.ERROR and result.error is not None:
            log.warning("next edit (%s) failed: %s", result.agent, result.error.message)
        return SuggestNesResponse(suggestions=[self._suggestion(e) for e in result.edits])

    def _suggestion(self, edit: SuggestedEdit) -> NesEditSuggestionVariant:
        text = edit.text_before
        return NesEditSuggestionVariant(
            kind="edit",
            id=edit.id,
            uri=edit.uri,
            edits=[
                NesTextEdit(
                    range=Range(
                        start=self._position(text, edit.change.start),
                        end=self._position(text, edit.change.end),
                    ),
                    new_text=edit.change.text,
                )
            ],
        )

    def _position(self, text: str, offset: int) -> Position:
        line, character = positions.position_of(text, offset, self.encoding)
        return Position(line=line, character=character)

    def accept(self, note: AcceptNesNotification) -> None:
        """Count an accepted suggestion (shown, then accepted)."""
        self._session(note.session_id)
        stats = self.service().stats
        stats.record_shown(note.id)
        if stats.record_accepted(note.id):
            log.info("next edit %s accepted (%d in all)", note.id, sum(stats.accepted.values()))

    def reject(self, note: RejectNesNotification) -> None:
        """Count a rejected suggestion as shown (not accepted)."""
        self._session(note.session_id)
        self.service().stats.record_shown(note.id)

    def aclose(self) -> None:
        """Cancel the next edits in flight."""
        if self._service is not None:
            self._service.close()


def add_routes(router: MessageRouter, nes: NesServer) -> None:
    """Route ``nes/*`` and ``document/*`` of ``router`` to ``nes``."""
    requests: dict[str, tuple[type[BaseModel], Callable[[Any], Any]]] = {
        "nes_start": (StartNesRequest, nes.start),
        "nes_suggest": (SuggestNesRequest, nes.suggest),
        "nes_close": (CloseNesRequest, lambda r: nes.close(r.session_id)),
    }
    notifications: dict[str, tuple[type[BaseModel], Callable[[Any], Any]]] = {
        "nes_accept": (AcceptNesNotification, nes.accept),
        "nes_reject": (RejectNesNotification, nes.reject),
        "document_did_open": (DidOpenDocumentNotification, nes.did_open),
        "document_did_change": (DidChangeDocumentNotification, nes.did_change),
        "document_did_close": (DidCloseDocumentNotification, nes.did_close),
        "document_did_save": (DidSaveDocumentNotification, lambda _note: None),
        "document_did_focus": (DidFocusDocumentNotification, nes.did_focus),
    }
    for kind, table in (("request", requests), ("notification", notifications)):
        for key, (model, handler) in table.items():
            router.add_route(Route(AGENT_METHODS[key], _handler(model, handler), kind))  # type: ignore[arg-type]


def _handler(model: type[BaseModel], handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Validate the params into ``model`` (bad params answer "invalid params"), then call."""

    @answering
    async def handle(params: Any) -> Any:
        result = handler(model.model_validate(params))
        return await result if inspect.isawaitable(result) else result

    return handle
