"""Recently viewed files: the other documents the user opened, focused or edited last.

Next-edit prompts show snippets of them (Copilot's NES prompt has its
``<|recently_viewed_code_snippets|>``, Sweep its context files): the lines around a file's
newest edit, or else its first lines. The list follows the document store's events and the
editor's ``textDocument/didFocus``; ignored files (``.qodeassistignore``) are never shown.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from qodeassist_lsp.context.documents import (
    Document,
    DocumentEvent,
    DocumentEventKind,
    DocumentStore,
    line_end_offset,
    line_start_offset,
)
from qodeassist_lsp.features.next_edit.prompts import Snippet

__all__ = ["RecentFiles"]

REMEMBERED: Final = 20
SNIPPET_LINES: Final = 20


class RecentFiles:
    """The most recently viewed documents, newest last, and snippets of them."""

    def __init__(
        self,
        documents: DocumentStore,
        display_path: Callable[[Document], str],
        is_ignored: Callable[[Document], bool],
    ) -> None:
        """Follow ``documents``; ``display_path`` names a file in prompts."""
        self._documents = documents
        self._display_path = display_path
        self._is_ignored = is_ignored
        self._order: OrderedDict[str, None] = OrderedDict()

    def on_document(self, event: DocumentEvent) -> None:
        """Note an open or change; forget a closed document."""
        uri = event.document.uri
        if event.kind is DocumentEventKind.CLOSED:
            self._order.pop(uri, None)
        else:
            self.touch(uri)

    def touch(self, uri: str) -> None:
        """Note that ``uri`` was viewed now (``didFocus``)."""
        self._order[uri] = None
        self._order.move_to_end(uri)
        while len(self._order) > REMEMBERED:
            self._order.popitem(last=False)

    def snippets(self, current: str, limit: int) -> list[Snippet]:
        """Return snippets of up to ``limit`` recent documents other than ``current``."""
        found: list[Snippet] = []
        for uri in reversed(self._order):
            if len(found) >= limit:
                break
            document = self._documents.get(uri)
            if uri == current or document is None or self._is_ignored(document):
                continue
            text = self._snippet(document)
            if text.strip():
                found.append(Snippet(self._display_path(document), text))
        found.reverse()  # newest last, nearest the cursor's window
        return found

    def _snippet(self, document: Document) -> str:
        last = self._documents.edit_history.last(document.uri)
        first = max(0, last.start - SNIPPET_LINES // 2) if last is not None else 0
        text = document.text
        start = line_start_offset(text, first)
        end = line_end_offset(text, line_start_offset(text, first + SNIPPET_LINES - 1))
        return text[start:end].replace("\r\n", "\n")
