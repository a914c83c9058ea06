"""The fixed window of lines around the cursor that a next-edit model rewrites.

Sweep found a fixed window (10 lines above, the cursor line, 10 below: 21 lines) works better
than syntax-driven regions; Zeta widens its region to syntax boundaries. A fixed window keeps the
prompt cheap to build and the answer easy to check: the model must give back the same lines
with the next edit applied. Lines are kept without their line breaks (a CRLF document's carriage
returns included), and the window knows the document offsets it covers, so an answer maps
back to exact document ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.context.edit_history import Hunk
from qodeassist_lsp.context.positions import (
    line_count,
    line_end_offset,
    line_start_offset,
    split_lines,
)

__all__ = ["LINES_ABOVE", "LINES_BELOW", "Window", "window_around"]

LINES_ABOVE: Final = 10
LINES_BELOW: Final = 10


@dataclass(frozen=True, slots=True)
class Window:
    """Lines ``first``… of a document around the cursor, and where the cursor is in them."""

    first: int
    """The window's first line in the document (0-based)."""
    lines: tuple[str, ...]
    cursor_line: int
    """The cursor's line, relative to ``first``."""
    cursor_column: int
    start_offset: int
    """Document offset of the window's first character."""
    end_offset: int
    """Document offset just after the window's last character (before its line break)."""

    @property
    def text(self) -> str:
        """The window's lines joined with line feeds."""
        return "\n".join(self.lines)

    @property
    def last(self) -> int:
        """The window's last line in the document."""
        return self.first + len(self.lines) - 1

    def with_cursor(self, marker: str) -> str:
        """Return the window's text with ``marker`` at the cursor."""
        lines = list(self.lines)
        line = lines[self.cursor_line]
        column = min(self.cursor_column, len(line))
        lines[self.cursor_line] = line[:column] + marker + line[column:]
        return "\n".join(lines)

    def before_edits(self, hunks: list[Hunk]) -> str:
        """Return the window's text as it was before the hunks that lie wholly inside it."""
        lines = list(self.lines)
        inside = [
            h for h in hunks if not h.truncated and h.start >= self.first and h.end <= self.last + 1
        ]
        taken: list[Hunk] = []
        for hunk in sorted(inside, key=lambda h: h.start, reverse=True):
            if any(hunk.end > other.start for other in taken):
                continue  # overlaps a hunk already reverted below it
            start = hunk.start - self.first
            lines[start : start + hunk.line_count] = hunk.original
            taken.append(hunk)
        return "\n".join(lines)


def window_around(
    document: Document, line: int, column: int, above: int = LINES_ABOVE, below: int = LINES_BELOW
) -> Window:
    """Return the window of ``above`` lines, the cursor's line and ``below`` lines."""
    text = document.text
    total = line_count(text)
    line = max(0, min(line, total - 1))
    first = max(0, line - above)
    last = min(total - 1, line + below)
    start = line_start_offset(text, first)
    end = line_end_offset(text, line_start_offset(text, last))
    lines = tuple(split_lines(text[start:end]))
    cursor_text = lines[line - first]
    return Window(first, lines, line - first, max(0, min(column, len(cursor_text))), start, end)
