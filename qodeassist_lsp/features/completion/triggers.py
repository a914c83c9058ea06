"""When an automatic completion is worth a request, and whether it may span several lines.

Ports the original's client-side trigger logic (behaviour §6.2) to the server so every editor
gets it: smart suppression (the cursor inside an identifier, or right after a member access
``.``/``->``/``::``), eager triggers (a fresh indented line, or right after ``{ ( , = [ ; : >``)
and the typed-character threshold. ``TypingCounter`` counts the characters typed per document
within ``typing_interval_ms``, as the original did. The multi-line policy decides single-line
mode: ``smart`` completes a single line when the cursor is mid-line, or at the end of a line
that already has code and does not end in an opener.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from qodeassist_lsp.config.settings import MultiLinePolicy
from qodeassist_lsp.features.completion.settings import CompletionSettings

__all__ = [
    "EAGER_CHARS",
    "TriggerDecision",
    "TypingCounter",
    "evaluate_trigger",
    "is_eager",
    "single_line_mode",
    "suppression_reason",
]

EAGER_CHARS: Final = frozenset("{(,=[;:>")
"""A request is due at once after one of these (the last non-space character)."""
_MEMBER_ACCESS: Final = re.compile(r"(?:(?<!\\)\.|->|::)\w*$")
"""``x.``, ``p->``, ``ns::`` (a dot after a backslash is an escape: ``\\.`` in a regex)."""
_NUMBER_DOT: Final = re.compile(r"(?<![\w.])\d+\.\d*$")
_CLOSING_ONLY: Final = re.compile(r"[\s)\]}>;,'\"`]*")


def _is_identifier_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def suppression_reason(line_before: str, line_after: str) -> str | None:
    """Return why no automatic request should be sent here, or None when one may be."""
    if (
        line_before
        and line_after
        and _is_identifier_char(line_before[-1])
        and _is_identifier_char(line_after[0])
    ):
        return "inside an identifier"
    if _MEMBER_ACCESS.search(line_before) and not _NUMBER_DOT.search(line_before):
        return "right after a member access"
    return None


def is_eager(line_before: str) -> bool:
    """Whether the cursor is where a suggestion is wanted at once (no character threshold)."""
    if line_before and not line_before.strip():
        return True  # a fresh indented line
    stripped = line_before.rstrip()
    return bool(stripped) and stripped[-1] in EAGER_CHARS


def single_line_mode(policy: MultiLinePolicy, line_after: str, line_before: str = "") -> bool:
    """Whether a suggestion must stay on the cursor line under ``policy``.

    ``smart`` is single-line when real code follows the cursor on its line (closing brackets,
    quotes and punctuation alone, such as an auto-inserted ``)``, do not count), and when the
    line already has code before the cursor that does not end in one of ``EAGER_CHARS``: the
    user is finishing a line, and its answer is ready (and the model's slot free) as soon as
    that line is. A blank line or an opener (``{ ( , = [ ; : >``) may start a block.
    """
    if policy == "never":
        return True
    if policy == "always":
        return False
    if _CLOSING_ONLY.fullmatch(line_after) is None:
        return True
    stripped = line_before.rstrip()
    return bool(stripped) and stripped[-1] not in EAGER_CHARS


class TypingCounter:
    """Characters typed per document within a time window (reset by deletions and newlines)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Create an empty counter; ``clock`` returns monotonic seconds."""
        self._clock = clock
        self._windows: dict[str, tuple[float, int, int]] = {}

    def note_insert(self, uri: str, text: str, window_s: float) -> None:
        """Count ``text`` typed into ``uri``; a window older than ``window_s`` restarts."""
        if not text or "\n" in text:
            self.reset(uri)
            return
        now = self._clock()
        visible = sum(1 for char in text if not char.isspace())
        started = self._windows.get(uri)
        if started is None or now - started[0] > window_s:
            self._windows[uri] = (now, len(text), visible)
        else:
            self._windows[uri] = (started[0], started[1] + len(text), started[2] + visible)

    def reset(self, uri: str) -> None:
        """Forget what was typed into ``uri`` (a deletion, a newline, a closed document)."""
        self._windows.pop(uri, None)

    def count(self, uri: str, *, ignore_whitespace: bool = True) -> int:
        """Return the characters typed into ``uri`` in the current window."""
        window = self._windows.get(uri)
        if window is None:
            return 0
        return window[2] if ignore_whitespace else window[1]


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    """Whether an automatic request goes ahead, and why (for logs and the status request)."""

    allowed: bool
    reason: str
    eager: bool = False


def evaluate_trigger(
    settings: CompletionSettings, line_before: str, line_after: str, typed: int
) -> TriggerDecision:
    """Decide an automatic trigger at a cursor with ``typed`` characters counted so far."""
    if settings.smart_context_trigger:
        reason = suppression_reason(line_before, line_after)
        if reason is not None:
            return TriggerDecision(False, reason)
        if is_eager(line_before):
            return TriggerDecision(True, "eager trigger", eager=True)
    if typed >= settings.char_threshold:
        return TriggerDecision(True, "typed enough characters")
    return TriggerDecision(
        False, f"typed {typed} of {settings.char_threshold} characters (char_threshold)"
    )
