"""Open documents as plain snapshots, their recent edits, and position/offset arithmetic.

The L5 server owns the LSP text synchronisation; it feeds every ``didOpen``/``didChange``/
``didClose`` into a ``DocumentStore`` with positions already converted from UTF-16 to code
points. Features below L5 only ever see ``Document`` snapshots (no pygls here, by contract).
The store also keeps, per document, a short queue of recently changed lines — the original's
"Recent Project Changes" context — and the edit history of next-edit suggestions
(``edit_history``: original/updated hunks), and tells listeners (the completion feature's
typing rhythm, typed-ahead cache and in-flight generations) what was edited.

The position helpers (``line_start_offset``, ``offset_at``, ``position_at``…) live in
``positions`` (lines as LSP defines them, client encodings) and ``common_ends`` in
``text_compare``; they are re-exported here for the features that import them with documents.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Final
from urllib.parse import unquote, urlsplit

from qodeassist_lsp.context.edit_history import EditHistory
from qodeassist_lsp.context.positions import (
    line_count,
    line_end_offset,
    line_start_offset,
    offset_at,
    position_at,
)
from qodeassist_lsp.context.text_compare import common_ends

__all__ = [
    "CursorListener",
    "Document",
    "DocumentEvent",
    "DocumentEventKind",
    "DocumentListener",
    "DocumentStore",
    "LineEdit",
    "common_ends",
    "diff_edit",
    "line_end_offset",
    "line_start_offset",
    "offset_at",
    "position_at",
    "uri_to_path",
]

log = logging.getLogger("qodeassist.documents")

_MAX_CHANGE_LINE: Final = 500
"""Longest changed line remembered; a minified line must not flood the completion context."""


def uri_to_path(uri: str) -> str:
    """Return the file-system path of a ``file:`` URI, or ``""`` for other schemes."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return ""
    path = unquote(parts.path)
    if _looks_like_drive(path):
        path = path[1:]  # file:///C:/x names C:/x
    elif parts.netloc and parts.netloc != "localhost":
        path = f"//{parts.netloc}{path}"  # a UNC share
    if sys.platform == "win32":
        path = path.replace("/", "\\")
    return path


def _looks_like_drive(path: str) -> bool:
    return len(path) >= 3 and path[0] == "/" and path[1].isalpha() and path[2] == ":"


@dataclasses.dataclass(frozen=True, slots=True)
class Document:
    """An immutable snapshot of one open text document (text in code points)."""

    uri: str
    text: str
    version: int = 0
    language_id: str = ""
    path: str = ""
    """File-system path; empty for untitled or non-file documents."""

    def offset_at(self, line: int, character: int) -> int:
        """Convert a (line, code-point column) position to an offset into ``text``."""
        return offset_at(self.text, line, character)

    @property
    def name(self) -> str:
        """The file name (or the URI when there is no path), for prompts and logs."""
        return os.path.basename(self.path) if self.path else self.uri


@dataclasses.dataclass(frozen=True, slots=True)
class LineEdit:
    """One edit, as features need it: where, what was inserted, how much was removed."""

    line: int
    """First line touched (0-based, in the new text)."""
    inserted: str = ""
    removed: int = 0
    """Code points removed (0 when unknown)."""

    @property
    def multiline(self) -> bool:
        """Whether the inserted text contains a line break."""
        return "\n" in self.inserted


class DocumentEventKind(enum.StrEnum):
    """What happened to a document."""

    OPENED = "opened"
    CHANGED = "changed"
    CLOSED = "closed"


@dataclasses.dataclass(frozen=True, slots=True)
class DocumentEvent:
    """A store notification: the document as it is now and the edits that produced it."""

    kind: DocumentEventKind
    document: Document
    edits: tuple[LineEdit, ...] = ()


DocumentListener = Callable[[DocumentEvent], None]
CursorListener = Callable[[str, int, int], None]
"""Told ``(uri, line, character)``: where an editor request showed the caret."""


def diff_edit(old: str, new: str) -> LineEdit | None:
    """Describe the change from ``old`` to ``new`` as one edit (for full-text sync clients)."""
    if old == new:
        return None
    prefix, suffix = common_ends(old, new)
    inserted = new[prefix : len(new) - suffix]
    return LineEdit(
        line=position_at(new, prefix)[0],
        inserted=inserted,
        removed=len(old) - prefix - suffix,
    )


class _ChangeQueue:
    """Up to ``limit`` distinct changed lines of one document, keyed by line number."""

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines: dict[int, str] = {}

    def record(self, line: int, content: str, limit: int) -> None:
        if line in self.lines:
            # The original updates an already queued line in place (keeping its age).
            self.lines[line] = content
            return
        self.lines[line] = content
        while len(self.lines) > limit:
            del self.lines[next(iter(self.lines))]


class DocumentStore:
    """The open documents, their recently changed lines, and change listeners."""

    def __init__(self, max_changes: int = 10) -> None:
        """Create an empty store remembering ``max_changes`` changed lines per document."""
        self._docs: dict[str, Document] = {}
        self._changes: dict[str, _ChangeQueue] = {}
        self._listeners: list[DocumentListener] = []
        self._cursor_listeners: list[CursorListener] = []
        self._max_changes = max(1, max_changes)
        self.edit_history = EditHistory()
        """The recent edits of every open document as original/updated hunks (next edit)."""

    # -- queries ------------------------------------------------------------------------------
    def get(self, uri: str) -> Document | None:
        """Return the current snapshot of ``uri``, if it is open."""
        return self._docs.get(uri)

    def __contains__(self, uri: object) -> bool:
        return uri in self._docs

    def __len__(self) -> int:
        return len(self._docs)

    def __iter__(self) -> Iterator[Document]:
        return iter(list(self._docs.values()))

    def documents(self) -> list[Document]:
        """Return every open document, in opening order."""
        return list(self._docs.values())

    def recent_changes(self, uri: str) -> list[str]:
        """Return the recently changed lines of ``uri``, oldest first."""
        queue = self._changes.get(uri)
        return list(queue.lines.values()) if queue else []

    @property
    def max_changes(self) -> int:
        """How many distinct changed lines are remembered per document."""
        return self._max_changes

    @max_changes.setter
    def max_changes(self, value: int) -> None:
        self._max_changes = max(1, value)
        for queue in self._changes.values():
            while len(queue.lines) > self._max_changes:
                del queue.lines[next(iter(queue.lines))]

    # -- updates from the server --------------------------------------------------------------
    def open(self, uri: str, text: str, version: int = 0, language_id: str = "") -> Document:
        """Register a newly opened document."""
        document = Document(uri, text, version, language_id, uri_to_path(uri))
        self._docs[uri] = document
        self._notify(DocumentEvent(DocumentEventKind.OPENED, document))
        return document

    def change(
        self,
        uri: str,
        text: str,
        version: int,
        edits: Sequence[LineEdit] | None = None,
    ) -> Document:
        """Replace the text of ``uri``; ``edits`` describe what changed (diffed when None)."""
        old = self._docs.get(uri)
        if old is None:
            document = Document(uri, text, version, "", uri_to_path(uri))
        else:
            document = dataclasses.replace(old, text=text, version=version)
        if edits is None:
            edit = diff_edit(old.text if old else "", text)
            edits = (edit,) if edit else ()
        self._docs[uri] = document
        self._record(uri, text, edits)
        if old is not None:
            self.edit_history.record(uri, old.text, text)
        self._notify(DocumentEvent(DocumentEventKind.CHANGED, document, tuple(edits)))
        return document

    def close(self, uri: str) -> None:
        """Forget ``uri`` and its recent changes."""
        document = self._docs.pop(uri, None)
        self._changes.pop(uri, None)
        self.edit_history.forget(uri)
        if document is not None:
            self._notify(DocumentEvent(DocumentEventKind.CLOSED, document))

    def add_listener(self, listener: DocumentListener) -> None:
        """Call ``listener`` after every open, change and close."""
        self._listeners.append(listener)

    def remove_listener(self, listener: DocumentListener) -> None:
        """Stop calling ``listener``."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def note_cursor(self, uri: str, line: int, character: int) -> None:
        """Tell the cursor listeners where the editor shows the caret in ``uri`` (a hint)."""
        if uri not in self._docs:
            return
        for listener in list(self._cursor_listeners):
            try:
                listener(uri, line, character)
            except Exception:  # a hint must not break the request that carried it
                log.exception("cursor listener failed for %s", uri)

    def add_cursor_listener(self, listener: CursorListener) -> None:
        """Call ``listener(uri, line, character)`` on each ``note_cursor``."""
        self._cursor_listeners.append(listener)

    def remove_cursor_listener(self, listener: CursorListener) -> None:
        """Stop calling ``listener`` on cursor hints."""
        if listener in self._cursor_listeners:
            self._cursor_listeners.remove(listener)

    # -- internals ----------------------------------------------------------------------------
    def _record(self, uri: str, text: str, edits: Sequence[LineEdit]) -> None:
        if not edits:
            return
        queue = self._changes.setdefault(uri, _ChangeQueue())
        for edit in edits:
            last = edit.line + line_count(edit.inserted) - 1
            # Only the newest lines of a big paste can survive in the queue anyway.
            first = max(edit.line, last - self._max_changes + 1)
            start = line_start_offset(text, first)
            for number in range(first, last + 1):
                end = line_end_offset(text, start)
                content = text[start : min(end, start + _MAX_CHANGE_LINE)]
                queue.record(number, content, self._max_changes)
                if end >= len(text):
                    break
                start = end + (2 if text.startswith("\r\n", end) else 1)

    def _notify(self, event: DocumentEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # one broken feature must not break document sync
                log.exception("document listener failed for %s", event.document.uri)
