"""The extra-context ring: chunks of recently opened and edited files, first in the prompt.

Like llama.vim's ring buffer (docs/completion.md, "Prompt layout"): a completion prompt starts
with a few chunks of code the user has recently looked at or changed, then the cursor window.
The chunks change rarely and are kept in the order they were added (never re-sorted by score),
so consecutive prompts start with the same text and a model server's prompt cache reuses it.

Where chunks come from (fed by the document store's events and the completion requests):

* a document opened: its first ``chunk_lines`` lines (imports, declarations);
* a document edited: the lines around its last edit, taken when a completion is next asked
  for in *another* document (the user has moved on; while they type there the chunk would
  change with every key and spoil the cache);
* the cursor moving far within a document: the lines around where the previous request was.

A chunk exactly equal to one in the ring is not added again; one more than `DEDUPE_SIMILARITY`
similar (rapidfuzz, line by line) replaces the older one. Before a prompt is built, chunks whose
lines mostly (more than `WINDOW_OVERLAP`) appear in the cursor window are evicted: the model
already sees them, and seeing them twice makes small models repeat. The ring holds at most
``max_chunks`` chunks and ``max_tokens`` estimated tokens; the oldest go first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from rapidfuzz import fuzz

from qodeassist_lsp.context.documents import (
    Document,
    DocumentEvent,
    DocumentEventKind,
    DocumentStore,
    line_start_offset,
)

__all__ = ["DEDUPE_SIMILARITY", "WINDOW_OVERLAP", "Chunk", "ExtraContextRing", "ExtraFile"]

DEDUPE_SIMILARITY: Final = 0.9
"""Line similarity above which a new chunk replaces an older one (llama.vim's 0.9)."""
WINDOW_OVERLAP: Final = 0.5
"""Share of a chunk's lines found in the cursor window above which the chunk is evicted."""


def _key_lines(text: str) -> tuple[str, ...]:
    """Return the non-blank lines of ``text`` without their indentation, for similarity measures."""
    return tuple(stripped for line in text.split("\n") if (stripped := line.strip()))


@dataclass(frozen=True, slots=True)
class Chunk:
    """A run of lines of one document, as it was when the chunk was taken."""

    uri: str
    path: str
    """File-system path, or the URI of a document without one (the chunk's header names it)."""
    first_line: int
    text: str
    lines: tuple[str, ...] = field(repr=False, compare=False)
    """The non-blank lines, stripped (what the similarity measures compare)."""
    counts: Counter[str] = field(repr=False, compare=False)
    """How often each of ``lines`` occurs (the window overlap, counted once, not per request)."""

    @classmethod
    def of(cls, document: Document, first_line: int, count: int) -> Chunk | None:
        """Cut ``count`` lines of ``document`` from ``first_line``; None when they are blank."""
        text = document.text
        start = line_start_offset(text, first_line)
        end = start
        for _ in range(count):
            end = text.find("\n", end)
            if end < 0:
                end = len(text)
                break
            end += 1
        body = text[start:end]
        lines = _key_lines(body)
        if not lines:
            return None
        path = document.path or document.uri
        return cls(document.uri, path, first_line, body, lines, Counter(lines))

    @property
    def tokens(self) -> int:
        """Estimated tokens (about four characters a token, as the cursor window's budget)."""
        return (len(self.text) + 3) // 4

    def similarity(self, other: Chunk) -> float:
        """Line-by-line similarity with ``other``, 0..1 (normalised Indel distance)."""
        return fuzz.ratio(self.lines, other.lines) / 100.0

    def overlap(self, window: frozenset[str]) -> float:
        """Return the share of this chunk's lines that also appear in ``window``'s lines."""
        if not self.lines:
            return 0.0
        # A set intersection, in C: the per-line loop cost 0.1 ms per request (16 chunks).
        found = sum(self.counts[line] for line in self.counts.keys() & window)
        return found / len(self.lines)


@dataclass(frozen=True, slots=True)
class ExtraFile:
    """One chunk as a prompt carries it: ``ctx.files_metadata`` item of the agent template."""

    file_path: str
    content: str
    header: str
    """A comment line naming the file in the cursor file's syntax, for layouts without file
    separator tokens (``# src/util.py``)."""

    @classmethod
    def of(cls, chunk: Chunk, comment_prefix: str) -> ExtraFile:
        """Describe ``chunk`` for a prompt whose comments start with ``comment_prefix``."""
        return cls(chunk.path, chunk.text, f"{comment_prefix} {chunk.path}\n")

    def as_metadata(self) -> dict[str, str]:
        """Return the ``ctx.files_metadata`` item: ``file_path``, ``content`` and ``header``."""
        return {"file_path": self.file_path, "content": self.content, "header": self.header}


class ExtraContextRing:
    """The chunks of recently seen code, oldest first; one instance per completion service."""

    def __init__(
        self,
        documents: DocumentStore,
        *,
        chunk_lines: int = 32,
        max_chunks: int = 16,
        max_tokens: int = 1024,
        is_ignored: Callable[[Document], bool] = lambda document: False,
    ) -> None:
        """Create the ring; call `on_document` for every document store event."""
        self._documents = documents
        self.chunk_lines = chunk_lines
        self.max_chunks = max_chunks
        self.max_tokens = max_tokens
        self._is_ignored = is_ignored
        self._chunks: list[Chunk] = []
        self._edited: dict[str, int] = {}
        """Documents edited since their last chunk was taken: the line of the last edit."""
        self._asked: dict[str, int] = {}
        """The cursor line of the last completion request per document."""
        for document in documents:  # opened before the ring existed (the service starts lazily)
            self.add(document, 0)

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The chunks, in the order they were added."""
        return tuple(self._chunks)

    def configure(self, *, chunk_lines: int, max_chunks: int, max_tokens: int) -> None:
        """Follow changed settings (a smaller ring drops its oldest chunks)."""
        self.chunk_lines, self.max_chunks, self.max_tokens = chunk_lines, max_chunks, max_tokens
        self._trim()

    def clear(self) -> None:
        """Forget every chunk and every pending edit."""
        self._chunks.clear()
        self._edited.clear()
        self._asked.clear()

    # -- feeding -------------------------------------------------------------------------------
    def on_document(self, event: DocumentEvent) -> None:
        """Note a document store event (a listener of the store)."""
        uri = event.document.uri
        if event.kind is DocumentEventKind.OPENED:
            self.add(event.document, 0)
        elif event.kind is DocumentEventKind.CHANGED and event.edits:
            self._edited[uri] = event.edits[-1].line
        elif event.kind is DocumentEventKind.CLOSED:
            self._edited.pop(uri, None)
            self._asked.pop(uri, None)

    def add(self, document: Document, around_line: int) -> None:
        """Add the chunk of ``document`` around ``around_line`` (unless ignored or known)."""
        if self.max_chunks <= 0 or self._is_ignored(document):
            return
        half = max(self.chunk_lines // 2, 1)
        # Aligned to half a chunk: the same region gives the same chunk, which dedupes.
        first = max(around_line - half, 0) // half * half
        chunk = Chunk.of(document, first, self.chunk_lines)
        if chunk is None or any(c.text == chunk.text for c in self._chunks):
            return
        self._chunks = [c for c in self._chunks if c.similarity(chunk) <= DEDUPE_SIMILARITY]
        self._chunks.append(chunk)
        self._trim()

    # -- reading -------------------------------------------------------------------------------
    def for_request(self, document: Document, line: int | None, window: str) -> list[Chunk]:
        """Return the chunks for a completion at ``line`` of ``document``, oldest first.

        Takes the chunks that became due (edits in other documents, the previous position in
        this one when the cursor moved far), then evicts those the cursor ``window`` (the
        prefix and suffix sent) already mostly contains. ``line`` None: the cursor is not known
        (a warm-up after a document was opened); nothing is noted for this document.
        """
        if self.max_chunks <= 0:
            return []
        for uri, edited_line in list(self._edited.items()):
            if uri == document.uri:
                continue
            del self._edited[uri]
            other = self._documents.get(uri)
            if other is not None:
                self.add(other, edited_line)
        previous = self._asked.get(document.uri)
        if line is not None:
            if previous is not None and abs(line - previous) > self.chunk_lines:
                self.add(document, previous)
            self._asked[document.uri] = line
        seen = frozenset(_key_lines(window))
        self._chunks = [c for c in self._chunks if c.overlap(seen) <= WINDOW_OVERLAP]
        return [c for c in self._chunks if not self._ignored_uri(c.uri)]

    # -- internals -----------------------------------------------------------------------------
    def _trim(self) -> None:
        while self._chunks and (
            len(self._chunks) > self.max_chunks or _total(self._chunks) > self.max_tokens
        ):
            del self._chunks[0]

    def _ignored_uri(self, uri: str) -> bool:
        document = self._documents.get(uri)
        return document is not None and self._is_ignored(document)


def _total(chunks: Iterable[Chunk]) -> int:
    return sum(chunk.tokens for chunk in chunks)
