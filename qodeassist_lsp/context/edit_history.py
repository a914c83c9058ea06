"""The user's recent edits per document, as original/updated hunks of whole lines.

Next-edit suggestions need to know what the user just changed, in the shape the models were
trained on: Sweep's ``original:``/``updated:`` blocks and Zeta's diffs are both built from a
hunk's lines before and after. ``DocumentStore`` feeds every change in (old and new text); the
changed region is found with the store's C-speed common prefix/suffix, so a keystroke in a big
file costs a few string comparisons, never a line split of the whole document.

A keystroke is not an edit: typing a word produces one change per character. A change that
lands within ``gap`` lines of the newest hunk and within ``window_s`` seconds of it is merged
into that hunk (its original keeps the text from before the first keystroke), so the history
says "renamed ``total`` to ``subtotal``", not eight one-letter changes. A merged hunk whose
updated lines equal its original (the user undid it) disappears. Every hunk's line numbers
are kept in the coordinates of the current text: a change above a hunk shifts it. The history
is bounded: at most ``max_hunks`` per document, and a hunk larger than ``max_lines`` on either
side is kept truncated and never merged into.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from qodeassist_lsp.context.positions import (
    line_end_offset,
    line_start_offset,
    position_at,
    split_lines,
)
from qodeassist_lsp.context.text_compare import common_ends

__all__ = ["EditHistory", "Hunk"]

MAX_HUNKS: Final = 12
"""Hunks remembered per document (Copilot's NES prompt keeps 25 diff entries in 1,000 tokens)."""
MAX_HUNK_LINES: Final = 40
"""Lines kept of a hunk's either side (Sweep's prompt allows 40)."""
MERGE_GAP_LINES: Final = 2
MERGE_WINDOW_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class Hunk:
    """One recent edit: lines ``start``… of the current text were ``original``, now ``updated``."""

    start: int
    """First line of the hunk in the current text (0-based)."""
    original: tuple[str, ...]
    updated: tuple[str, ...]
    at: float
    """When the hunk last changed (``time.monotonic``)."""
    line_count: int
    """Lines the hunk spans in the current text (``len(updated)`` unless truncated)."""
    truncated: bool = False

    @property
    def end(self) -> int:
        """The line after the hunk in the current text."""
        return self.start + self.line_count


def _lines(text: str, start: int, end: int) -> tuple[str, ...]:
    """Return lines ``start``…``end - 1`` of ``text`` (no line breaks)."""
    if end <= start:
        return ()
    begin = line_start_offset(text, start)
    stop = line_end_offset(text, line_start_offset(text, end - 1))
    return tuple(split_lines(text[begin:stop]))


def _changed_lines(old: str, new: str) -> tuple[int, int, int] | None:
    """Return (first line, old line count, new line count) of the change from ``old`` to ``new``."""
    if old == new:
        return None
    prefix, suffix = common_ends(old, new)
    first = position_at(old, prefix)[0]
    old_end, new_end = len(old) - suffix, len(new) - suffix
    old_last = position_at(old, old_end)[0]
    new_last = position_at(new, new_end)[0]
    whole_lines = (
        _at_line_start(old, prefix)
        and _at_line_start(old, old_end, prefix)
        and _at_line_start(new, new_end, prefix)
    )
    if whole_lines:
        # Whole lines inserted or deleted: no unchanged neighbour line in the hunk.
        return first, old_last - first, new_last - first
    return first, old_last - first + 1, new_last - first + 1


def _at_line_start(text: str, offset: int, floor: int = 0) -> bool:
    if offset in (floor, 0):
        return True
    before = text[offset - 1]
    # A \r followed by \n is half a break: the line starts after the \n.
    return before == "\n" or (before == "\r" and text[offset : offset + 1] != "\n")


class EditHistory:
    """Per document, the recent edits as merged, bounded original/updated hunks."""

    def __init__(
        self,
        *,
        max_hunks: int = MAX_HUNKS,
        max_lines: int = MAX_HUNK_LINES,
        gap: int = MERGE_GAP_LINES,
        window_s: float = MERGE_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create an empty history with the given bounds and merge rule."""
        self._hunks: dict[str, list[Hunk]] = {}
        self._max_hunks = max(1, max_hunks)
        self._max_lines = max(1, max_lines)
        self._gap = gap
        self._window_s = window_s
        self._clock = clock

    def hunks(self, uri: str) -> list[Hunk]:
        """Return the hunks of ``uri``, oldest first."""
        return list(self._hunks.get(uri, ()))

    def last(self, uri: str) -> Hunk | None:
        """Return the newest hunk of ``uri``, if any."""
        hunks = self._hunks.get(uri)
        return hunks[-1] if hunks else None

    def forget(self, uri: str) -> None:
        """Drop the history of ``uri`` (closed)."""
        self._hunks.pop(uri, None)

    def record(self, uri: str, old: str, new: str) -> None:
        """Record the change of ``uri`` from ``old`` to ``new``."""
        change = _changed_lines(old, new)
        if change is None:
            return
        first, old_count, new_count = change
        now = self._clock()
        hunks = self._hunks.setdefault(uri, [])
        delta = new_count - old_count
        last = hunks[-1] if hunks else None
        if last is not None and self._mergeable(last, first, old_count, now):
            hunks.pop()
            merged = self._merge(last, old, new, first, old_count, delta, now)
        else:
            merged = self._hunk(first, _lines(old, first, first + old_count), new, new_count, now)
        # Older hunks below the change move with it; one the change overlaps keeps its place.
        for index, hunk in enumerate(hunks):
            if hunk.start >= first + old_count:
                hunks[index] = replace(hunk, start=hunk.start + delta)
        if merged is not None:
            hunks.append(merged)
        while len(hunks) > self._max_hunks:
            hunks.pop(0)
        if not hunks:
            del self._hunks[uri]

    def _mergeable(self, last: Hunk, first: int, old_count: int, now: float) -> bool:
        return (
            not last.truncated
            and now - last.at <= self._window_s
            and first <= last.end + self._gap
            and first + old_count >= last.start - self._gap
        )

    def _merge(
        self,
        last: Hunk,
        old: str,
        new: str,
        first: int,
        old_count: int,
        delta: int,
        now: float,
    ) -> Hunk | None:
        low = min(last.start, first)
        high = max(last.end, first + old_count)
        # Lines of the old text outside the last hunk were untouched since before it.
        original = _lines(old, low, last.start) + last.original + _lines(old, last.end, high)
        return self._hunk(low, original, new, high + delta - low, now)

    def _hunk(
        self, start: int, original: tuple[str, ...], new: str, count: int, now: float
    ) -> Hunk | None:
        updated = _lines(new, start, start + count)
        if updated == original:
            return None  # undone: nothing left to tell
        truncated = len(original) > self._max_lines or len(updated) > self._max_lines
        return Hunk(
            start,
            original[: self._max_lines],
            updated[: self._max_lines],
            now,
            count,
            truncated,
        )
