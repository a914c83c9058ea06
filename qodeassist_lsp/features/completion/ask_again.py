"""Asking again where the code below the cursor proves the model's answer wrong.

A base model sees only the text before the cursor; the server also knows the line below it.
Some answers cannot stand above that line whatever the rest of the file is:

* ``repeats``: the answer's first line is the line below (the model wrote code that exists);
* ``no body``: a block header (``if x:``, ``for x in xs {``, ``while x do``) above a line that
  is not indented deeper, which is no block body (Python, brace and Lua blocks; a brace-less C
  ``if (x)`` is left alone, the line below would be its body);
* ``unreachable``: a ``return``, ``raise``, ``throw``, ``break`` or ``continue`` above code at
  its own level in the same block (not above ``else``, ``except``, ``}``, ``end``, ``case``…);
* ``not a block`` (Python): a line that opens no block above a line indented deeper
  (an ``IndentationError``).

A comment alone is left alone: it stands anywhere, and asking again where the model wrote one
won no HumanEval task and lost one (a comment passes where the missing line was not needed).

Where one of these fires, the generation asks the model once more with the first token of its
answer excluded (``ctx.avoid``, which an agent's body turns into llama.cpp's ``logit_bias``): the
prompt is in the model server's cache, so the second request costs about the answer's tokens.
An agent whose body does not use ``ctx.avoid`` is never asked again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from qodeassist_lsp.features.completion.postprocess import (
    PostprocessOptions,
    bracket_depth,
    indent_of,
    line_code,
)

__all__ = ["avoided_token", "disproved"]

_JUMP: Final = re.compile(r"(?:return|raise|throw|break|continue)\b")
_GOES_ON: Final = re.compile(
    r"(?:else|elif|elseif|except|finally|case|default|end|until|catch|when)\b|[)\]}]"
)
"""A line below that continues or closes the block: a jump may stand above it."""
_LUA_HEADER: Final = re.compile(r"(?:^|\s)(?:then|do|repeat)$|^(?:local\s+)?function\b.*\)$")
_PY_HEADER: Final = re.compile(
    r"(?:if|elif|else|for|while|try|except|finally|with|def|class|async|match|case)\b.*:$"
)
_PY_KEYWORD: Final = re.compile(
    r"(?:if|elif|else|for|while|try|except|finally|with|def|class|async|match|case)\b"
)
_CONTINUES: Final = ("\\", ",", "=", "+", "-", "*", "/", "%", "&&", "||", "|", "&", "?", ".", "(")
_CLOSERS: Final = ")]}"


def disproved(answer: str, options: PostprocessOptions, language: str) -> str | None:
    """Why the line below the cursor proves ``answer`` wrong (a rule's name), else None.

    Only on a fresh line (nothing but indentation before the cursor, nothing after it) with a
    line of code below; ``language`` is the completion language's name (``python``, ``lua``…).
    """
    before, below = options.line_before, options.next_line
    if before.strip() or options.line_after.strip() or not below.strip() or not answer.strip():
        return None
    lines = [line for line in answer.split("\n") if line.strip()]
    first = lines[0].strip()
    level, deeper = len(before), indent_of(below)
    code = _code(first, options.comment_prefix)
    if first == below.strip():
        return "repeats"
    if not code:
        return None  # a comment: it may stand anywhere
    if len(lines) > 1:
        return None  # the answer wrote its own block, or more than one statement
    if deeper <= level and not below.strip().startswith(_CLOSERS):
        if _header(code, language):
            return "no body"
        if _JUMP.match(code) and deeper == level and not _GOES_ON.match(below.strip()):
            return "unreachable"
    if language == "python" and deeper > level and not _python_opens(code):
        return "not a block"
    return None


def avoided_token(pieces: Sequence[str]) -> str | None:
    """Return the answer's first token from the streamed ``pieces`` (a token each), or None.

    The piece that holds the answer's first visible character, when it is a token to ban
    alone: no line break in it and at most the one space a tokenizer folds into a word (a
    ban of indentation would ban every line's).
    """
    for piece in pieces:
        if not piece.strip():
            continue
        lead = len(piece) - len(piece.lstrip())
        if "\n" in piece or lead > 1 or piece.startswith("\t"):
            return None
        return piece
    return None


def _header(code: str, language: str) -> bool:
    if language == "python":
        return _PY_HEADER.match(code) is not None
    if language == "lua" and _LUA_HEADER.search(code) is not None:
        return True
    return code.endswith("{") and bracket_depth(code, "") > 0


def _python_opens(code: str) -> bool:
    # A line that starts a block header and does not end it was cut (the token cap), not wrong.
    return (
        code.endswith((":", *_CONTINUES))
        or bracket_depth(code, "") > 0
        or _PY_KEYWORD.match(code) is not None
    )


def _code(line: str, comment_prefix: str) -> str:
    """``line`` without a trailing comment outside strings (a line-start comment: "").

    A C-family ``/* … */`` after code counts as its comment too.
    """
    code = line_code(line, comment_prefix)
    return line_code(code, "/*") if comment_prefix == "//" else code
