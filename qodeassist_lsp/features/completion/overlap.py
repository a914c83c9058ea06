"""How much of the text right of the cursor a suggestion replaces (behaviour §6.4).

Models often re-type what already follows the cursor — the rest of an identifier, or the
closing ``)`` an editor inserted automatically. Inserting the suggestion as-is would duplicate
it, so the inline item's range covers ``[cursor, cursor + replace_length)`` on the cursor line
(LSP ranges of inline items must stay on one line), computed from the suggestion's first line:

* a common prefix of suggestion and right-hand text is replaced — the whole right-hand text
  when what remains of it is only brackets, ``;``, ``,`` and whitespace;
* with no common prefix, right-hand text made only of those characters is replaced whole when
  the suggestion's last non-space character is a closing character that occurs in it;
* beyond the original, a first line ending with the whole right-hand text (``x, y):`` typed
  before ``):``) replaces it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["STRUCTURAL_CHARS", "replace_length"]

STRUCTURAL_CHARS: Final = frozenset("(){}[];,")
"""Characters a suggestion may re-type at the end of a line (brackets and separators)."""
_CLOSING: Final = frozenset(")}];,")


def _common_prefix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    index = 0
    while index < size and a[index] == b[index]:
        index += 1
    return index


def _structural_only(text: str) -> bool:
    return all(char in STRUCTURAL_CHARS or char.isspace() for char in text)


def replace_length(suggestion: str, right_text: str) -> int:
    """Return how many characters right of the cursor the suggestion replaces."""
    if not right_text:
        return 0
    first_line = suggestion.split("\n", 1)[0]
    common = _common_prefix(first_line, right_text)
    if common > 0:
        return len(right_text) if _structural_only(right_text[common:]) else common
    tail = right_text.strip()
    if not tail:
        return 0
    if _structural_only(right_text):
        last = first_line.rstrip()[-1:]
        if last and last in _CLOSING and last in right_text:
            return len(right_text)
    # Beyond the original: a first line that ends by re-typing the whole rest of the line.
    if first_line.rstrip().endswith(tail):
        return len(right_text)
    return 0
