"""Clean a quick-refactor answer down to the code that replaces the selection.

Models wrap code in Markdown fences and announce it ("Here's the refactored code:") despite
the prompt saying not to. These are the original plugin's ``ResponseCleaner`` rules, in its
order: take the fenced code, strip surrounding line breaks (never spaces: the first line's
indentation is part of the edit), drop explanation lines at the top. One deliberate addition:
the line breaks are stripped again after the explanation lines are dropped, so a blank line
between an announcement and the code does not end up in the document.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["EXPLANATION_PREFIXES", "clean_response", "extract_fenced", "remove_explanations"]

FENCE: Final = "```"
_FENCED_BLOCK: Final = re.compile(r"```\w*\n([\s\S]*?)```")
EXPLANATION_PREFIXES: Final = (
    "here's the",
    "here is the",
    "here's",
    "here is",
    "the refactored",
    "refactored code:",
    "code:",
    "i've refactored",
    "i refactored",
    "i've changed",
    "i changed",
)
"""Lower-case starts of an announcement line (the original's list, in its order)."""
_SCANNED_LINES: Final = 3


def extract_fenced(text: str) -> tuple[str, bool]:
    """Return the first fenced block's body (or ``text``) and whether a fence was used."""
    if FENCE not in text:
        return text, False
    match = _FENCED_BLOCK.search(text)
    if match is not None:
        return match.group(1), True
    first = text.find(FENCE)
    last = text.rfind(FENCE)
    if last > first:
        newline = text.find("\n", first)
        if newline != -1 and newline < last:
            return text[newline + 1 : last], True
    return text, False


def _strip_line_breaks(text: str) -> str:
    return text.strip("\r\n")


def _is_explanation(line: str, *, from_fence: bool) -> bool:
    lowered = line.strip().lower()
    for prefix in EXPLANATION_PREFIXES:
        if lowered.startswith(prefix) or f"{prefix} code" in lowered:
            return True
    if from_fence:
        return False
    # A short prose header ("Updated function:") — but not code ending in a colon (``else:``).
    return (
        len(lowered) < 50
        and lowered.endswith(":")
        and " " in lowered
        and all(c.isalpha() or c == " " for c in lowered[:-1])
    )


def remove_explanations(text: str, *, from_fence: bool = False) -> str:
    """Drop announcement lines among the first three lines (all-explanation text is kept)."""
    lines = text.split("\n")
    start = 0
    for index, line in enumerate(lines[:_SCANNED_LINES]):
        if _is_explanation(line, from_fence=from_fence):
            start = index + 1
        elif line.strip():
            break
    if 0 < start < len(lines):
        return "\n".join(lines[start:])
    return text


def clean_response(text: str) -> str:
    """Return the code of a refactor answer: fence body, no explanation, indentation kept."""
    body, from_fence = extract_fenced(text)
    body = _strip_line_breaks(body)
    body = remove_explanations(body, from_fence=from_fence)
    return _strip_line_breaks(body)
