"""Typed-ahead cache: keep serving a suggestion while the user types its first characters.

Editors re-request an inline completion after every keystroke (Neovim dismisses the ghost text
on each cursor move). When the user types exactly what the current suggestion starts with, the
rest of it is still the answer, and no upstream request is needed. Entries are keyed by the
document, the line and the text left of the cursor when the suggestion was made (the anchor); a
later cursor on the same line whose left text extends the anchor by a prefix of the suggestion
is a hit — which also survives backspacing within the typed part. An entry is dropped when the
typed text stops matching, when the whole suggestion has been typed, when the text right of the
cursor changes, and on any edit elsewhere in the document. An edit inserting a line break on the
anchor's line drops it too, unless the inserted text is the next part of the suggestion (an
editor accepting it line by line): then the rest is anchored on the new line. The cache is
LRU-bounded.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from qodeassist_lsp.context.documents import LineEdit

__all__ = ["TypedAheadCache", "TypedAheadHit"]

_Key = tuple[str, int, str]


@dataclass(frozen=True, slots=True)
class _Entry:
    line_after: str
    texts: tuple[str, ...]
    agent: str
    typed: str = ""
    """What had been typed since the anchor at the last hit."""


@dataclass(frozen=True, slots=True)
class TypedAheadHit:
    """What is left of cached suggestions after the text typed since they were made."""

    texts: tuple[str, ...]
    typed: str
    agent: str


class TypedAheadCache:
    """Suggestions by (document, line, text left of the cursor), LRU-bounded."""

    def __init__(self, capacity: int = 64) -> None:
        """Create an empty cache holding at most ``capacity`` anchors."""
        self._capacity = max(1, capacity)
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def put(
        self,
        uri: str,
        line: int,
        line_before: str,
        line_after: str,
        texts: Iterable[str],
        agent: str = "",
    ) -> None:
        """Remember ``texts`` as the suggestions for the cursor after ``line_before``."""
        kept = tuple(t for t in texts if t)
        if not kept:
            return
        key = (uri, line, line_before)
        self._entries[key] = _Entry(line_after, kept, agent)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def lookup(
        self, uri: str, line: int, line_before: str, line_after: str
    ) -> TypedAheadHit | None:
        """Return the rest of a suggestion the typed text matches, dropping stale anchors."""
        for key in reversed(list(self._entries)):
            if key[0] != uri or key[1] != line:
                continue
            entry = self._entries[key]
            anchor = key[2]
            if entry.line_after != line_after or not line_before.startswith(anchor):
                del self._entries[key]
                continue
            typed = line_before[len(anchor) :]
            rests = tuple(
                text[len(typed) :]
                for text in entry.texts
                if text.startswith(typed) and len(text) > len(typed)
            )
            if not rests:
                del self._entries[key]
                continue
            if entry.typed != typed:
                self._entries[key] = replace(entry, typed=typed)
            self._entries.move_to_end(key)
            return TypedAheadHit(rests, typed, entry.agent)
        return None

    def note_edits(self, uri: str, edits: Iterable[LineEdit]) -> None:
        """Drop the anchors of ``uri`` that ``edits`` touch outside their own line."""
        edits = tuple(edits)
        if not edits:
            return
        for key in [k for k in self._entries if k[0] == uri]:
            if not any(edit.multiline or edit.line != key[1] for edit in edits):
                continue
            entry = self._entries.pop(key)
            if len(edits) == 1 and edits[0].line == key[1] and not edits[0].removed:
                self._continue_on_next_line(key, entry, edits[0].inserted)

    def _continue_on_next_line(self, key: _Key, entry: _Entry, inserted: str) -> None:
        """Re-anchor what follows ``inserted`` when it is the next part of a suggestion."""
        rests = []
        for text in entry.texts:
            # The break must continue exactly what had been typed on the anchor's line.
            rest = text[len(entry.typed) :] if text.startswith(entry.typed) else ""
            if rest.startswith(inserted) and len(rest) > len(inserted):
                rests.append(rest[len(inserted) :])
        if rests:
            before = inserted.rsplit("\n", 1)[1]
            line = key[1] + inserted.count("\n")
            self.put(key[0], line, before, entry.line_after, rests, entry.agent)

    def forget(self, uri: str) -> None:
        """Drop every anchor of ``uri``."""
        for key in [k for k in self._entries if k[0] == uri]:
            del self._entries[key]

    def clear(self) -> None:
        """Drop everything (configuration changed)."""
        self._entries.clear()
