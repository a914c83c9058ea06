"""Trailing-whitespace healing: a prompt never ends in the spaces left of the cursor.

Tokenizers fold whitespace into the token that follows it (``"    return"`` is indentation plus
``" return"``, or one token). A prompt that ends in the indentation of a fresh line, or in the
space after ``x =``, ends in a token the model rarely saw at that place, and small models
answer it badly: they repeat the indentation, start a new line or stop. This is the cheap half
of token healing (Guidance, llama.cpp's ``--token-healing``): the spaces and tabs at the end of
the prefix are left out of the prompt, and the model types them itself; they are then taken off
the start of its answer, because the user has already typed them.

When the answer starts with other whitespace than was left out (a deeper or shallower indent),
its leading spaces and tabs are dropped all the same: the cursor's indentation is the user's.
"""

from __future__ import annotations

from typing import Final

__all__ = ["heal_prefix", "unheal"]

_HORIZONTAL: Final = " \t"


def heal_prefix(prefix: str) -> tuple[str, str]:
    """Return ``prefix`` without the spaces and tabs it ends in, and what was left out."""
    healed = prefix.rstrip(_HORIZONTAL)
    return healed, prefix[len(healed) :]


def unheal(text: str, trimmed: str) -> str:
    """Return the model's ``text`` without the whitespace ``trimmed`` off its prompt.

    Exactly ``trimmed`` when the answer starts with it, else all its leading spaces and tabs
    (an answer streamed so far that is only a part of ``trimmed`` gives "").
    """
    if not trimmed:
        return text
    if text.startswith(trimmed):
        return text[len(trimmed) :]
    return text.lstrip(_HORIZONTAL)
