"""``RepetitionWatch``: notice a model stuck in a loop while its answer streams.

Small models fall into loops: the same sentence or paragraph again and again until
``max_tokens`` (issue 15: ``chat "hi"`` printed a kilobyte of repeated persona text). The
session feeds every text delta here; once one line has come back ``REPEATS`` times among the last
``WINDOW`` complete lines, the answer is a loop and the session ends the request with the stop
reason ``repetition`` and closes the stream instead of paying for the rest. Short lines (``}``,
``return None``, blank lines) are ignored: code repeats those legitimately.
"""

from __future__ import annotations

from collections import deque
from typing import Final

__all__ = ["MIN_LINE_CHARS", "REPEATS", "REPETITION_STOP", "WINDOW", "RepetitionWatch"]

REPETITION_STOP: Final = "repetition"
"""The stop reason of a request ended because its answer looped."""
REPEATS: Final = 3
"""Occurrences of one line that make a loop (the third copy stops the stream)."""
WINDOW: Final = 24
"""Complete lines looked back over: loops of paragraphs up to eight lines long are caught."""
MIN_LINE_CHARS: Final = 16
"""Lines shorter than this (after stripping) never count: ``}``, ``return None``, ``else:``."""


class RepetitionWatch:
    """Fed with streamed text; says when the same line has come back too often."""

    def __init__(self) -> None:
        """Start with no text seen."""
        self._partial = ""
        self._recent: deque[str] = deque(maxlen=WINDOW)
        self.looping_line: str | None = None
        """The repeated line once a loop was seen."""

    def feed(self, text: str) -> bool:
        """Add streamed ``text``; return True once the answer is looping."""
        if self.looping_line is not None:
            return True
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for raw in lines:
            line = " ".join(raw.split())
            if len(line) < MIN_LINE_CHARS:
                continue
            if self._recent.count(line) + 1 >= REPEATS:
                self.looping_line = line
                return True
            self._recent.append(line)
        return False
