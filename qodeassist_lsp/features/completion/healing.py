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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from qodeassist_lsp.config.fim_templates import is_fim_agent

__all__ = ["continues_text", "heal_prefix", "unheal"]

_HORIZONTAL: Final = " \t"
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
