"""Trailing-whitespace healing: a prompt never ends in the spaces after the cursor line's code.

Tokenizers fold whitespace into the token that follows it (``x = 1`` is ``x``, `` =``, `` 1``).
A prompt that ends in the space after ``x =`` ends in a token the model rarely saw at that
place, and small models answer it badly: they repeat the space, start a new line or stop. This
is the cheap half of token healing (Guidance, llama.cpp's ``--token-healing``): the spaces and
tabs after the code of the cursor line are left out of the prompt, and the model types them
itself; they are then taken off the start of its answer, because the user has already typed
them. A line of only indentation keeps it (``heal_prefix``).

The answer's first line loses all its leading spaces and tabs, even when the model indented
differently from what was left out: the cursor's indentation is the user's.

Only prompts the model continues are healed (FIM agents and the raw completion endpoints):
chat-style agents show the model the code with a cursor marker, where the space before the
cursor is information, not a token boundary.

Word healing is the other half: a prompt that ends inside a word (``re`` of ``return``) ends in
a token the model rarely saw there, and it goes on with ``re`` as a word of its own
(``re.match(...)``, ``lo = 1``). ``heal_word`` cuts the half-typed word off the prompt, with the
spaces before it when they follow code on its line (``x = fo``: `` fo``, the token a tokenizer
would have made); the agent's body makes the model write it again with a grammar
(``ctx.healed_word``, llama.cpp's GBNF ``grammar``), and ``unheal_word`` takes it off the
answer. Only one of the two halves applies to a prompt: it ends in a word or in spaces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from qodeassist_lsp.config.fim_templates import is_fim_agent

__all__ = [
    "MAX_HEALED_WORD",
    "continues_text",
    "heal_prefix",
    "heal_word",
    "unheal",
    "unheal_word",
]

_HORIZONTAL: Final = " \t"
MAX_HEALED_WORD: Final = 16
"""The longest word cut off: a longer one is left alone (the model would write it again)."""
_WORD_CHAR: Final = re.compile(r"\w")
_CONTINUATION_ENDPOINTS: Final = frozenset({"/v1/completions", "/completions", "/completion"})
"""Raw completion endpoints: the model continues the prompt text (OpenAI-style, llama.cpp)."""


def continues_text(endpoint: str, body: Mapping[str, Any], tags: list[str]) -> bool:
    """Whether an agent's model continues the prefix (FIM or a raw completion endpoint)."""
    return endpoint in _CONTINUATION_ENDPOINTS or is_fim_agent(endpoint, body, tags)


def heal_prefix(prefix: str) -> tuple[str, str]:
    """Return ``prefix`` without the spaces and tabs it ends in after code, and those.

    A line of only indentation is left alone: the indentation tells the model the block it
    writes in, and without it the embedded model chose other code (``benchmarks/
    infill_humaneval.py``: one task of 60 lost, none won).
    """
    healed = prefix.rstrip(_HORIZONTAL)
    if not healed or healed.endswith("\n"):
        return prefix, ""
    return healed, prefix[len(healed) :]


def unheal(text: str, trimmed: str) -> str:
    """Return the model's ``text`` without its leading spaces and tabs once ``trimmed`` is set.

    (An answer streamed so far that is only a part of ``trimmed`` gives "".)
    """
    return text.lstrip(_HORIZONTAL) if trimmed else text


def heal_word(prefix: str, line_after: str) -> tuple[str, str]:
    """Return ``prefix`` without the half-typed word it ends in, and that word ("" if none).

    The word is the 1 to ``MAX_HEALED_WORD`` word characters (letters of any script, digits,
    ``_``) before the cursor, after a non-word character, with no word character right of the
    cursor (``line_after``), and not all of ``prefix``. The spaces and tabs before it go with
    it when code comes before them on its line (`` fo`` of ``x = fo``); indentation stays, as
    in ``heal_prefix``.
    """
    if _is_word(line_after[:1]):
        return prefix, ""
    start = len(prefix)
    while start > 0 and len(prefix) - start <= MAX_HEALED_WORD and _is_word(prefix[start - 1]):
        start -= 1
    if not 0 < len(prefix) - start <= MAX_HEALED_WORD or start == 0:
        return prefix, ""  # no word, too long, or nothing would be left to continue
    spaced = start
    while spaced > 0 and prefix[spaced - 1] in _HORIZONTAL:
        spaced -= 1
    if spaced < start and spaced > 0 and prefix[spaced - 1] != "\n":
        start = spaced
    return prefix[:start], prefix[start:]


def unheal_word(text: str, word: str) -> str:
    """Return the model's ``text`` without the healed ``word`` it must start with.

    "" when it does not start with it: a partial answer shorter than the word, or a provider
    that ignored the grammar (its answer continues a prompt the user did not type).
    """
    return text[len(word) :] if text.startswith(word) else ""


def _is_word(char: str) -> bool:
    return _WORD_CHAR.match(char) is not None
