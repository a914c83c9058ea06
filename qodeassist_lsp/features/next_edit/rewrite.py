"""From a rewritten window to the smallest edit of the document, or to no suggestion.

The model answers with the whole window rewritten; what it changed is found by the common
prefix and suffix of the two texts, which gives the one smallest edit that turns the window
into the answer (LSP next-edit items are alternatives, not a sequence, so several separate
changes become one edit spanning them). No suggestion is made when nothing changed or when the
edit would only undo the user's last edit (the model copying the "original" block back is its
commonest mistake). An edit carries offsets into the document version it was computed on;
``rebase`` moves it onto a newer text only when the change between the two lies wholly before
or after it, so the replaced text is exactly what it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qodeassist_lsp.context.documents import (
    common_ends,
    line_start_offset,
    offset_at,
    position_at,
)
from qodeassist_lsp.context.edit_history import Hunk
from qodeassist_lsp.features.next_edit.window import Window

__all__ = ["TextChange", "apply", "rebase", "smallest_change", "undoes"]


@dataclass(frozen=True, slots=True)
class TextChange:
    """Replace document offsets ``start``…``end`` (code points) with ``text``."""

    start: int
    end: int
    text: str


def apply(text: str, change: TextChange) -> str:
    """Return ``text`` with ``change`` applied."""
    return text[: change.start] + change.text + text[change.end :]


def smallest_change(
    document_text: str, window: Window, rewritten: tuple[str, ...]
) -> TextChange | None:
    """Return the smallest edit of ``document_text`` that makes the window ``rewritten``."""
    old = window.text
    new = "\n".join(rewritten)
    if old == new:
        return None
    prefix, suffix = common_ends(old, new)
    start_line, start_column = position_at(old, prefix)
    end_line, end_column = position_at(old, len(old) - suffix)
    start = offset_at(document_text, window.first + start_line, start_column)
    end = offset_at(document_text, window.first + end_line, end_column)
    inserted = new[prefix : len(new) - suffix]
    if "\r\n" in document_text[window.start_offset : window.end_offset + 2]:
        inserted = inserted.replace("\n", "\r\n")
    return TextChange(start, end, inserted)


def undoes(document_text: str, change: TextChange, last: Hunk | None) -> bool:
    """Whether applying ``change`` only restores the text from before the ``last`` edit.

    Both texts differ from ``document_text`` only around the change and the hunk, so only that
    stretch is compared (a whole-file copy per request would cost milliseconds on big files).
    """
    if last is None or last.truncated:
        return False
    text = document_text
    hunk_start = line_start_offset(text, last.start)
    hunk_end = line_start_offset(text, last.end)
    original = "".join(f"{line}\n" for line in last.original)
    if hunk_end == len(text) and not text.endswith("\n") and last.end > last.start:
        original = original[:-1]  # the hunk runs to the end of a file without a final newline
    low = min(hunk_start, change.start)
    high = max(hunk_end, change.end)
    applied = text[low : change.start] + change.text + text[change.end : high]
    reverted = text[low:hunk_start] + original + text[hunk_end:high]
    return applied.replace("\r\n", "\n") == reverted.replace("\r\n", "\n")


def rebase(change: TextChange, old: str, new: str) -> TextChange | None:
    """Return ``change`` moved from ``old`` onto ``new``, or None when that is not exact."""
    if old == new:
        return change
    prefix, suffix = common_ends(old, new)
    old_end = len(old) - suffix
    if prefix > change.end:
        return change  # the document changed after the edit only
    if old_end < change.start:
        delta = len(new) - len(old)
        return replace(change, start=change.start + delta, end=change.end + delta)
    return None  # the change touches (or borders) the edited text: no exact rebase
