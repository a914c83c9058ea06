"""Where a cold window starts: at the top-level statement its first line is in (issue 46.3).

A cold window (``local_cold_lines_before``, ``prompt_plan``) gives a file the local model has
not read a short prefix. Cut a fixed number of lines above the cursor, it often started inside
the function being written, below its signature and docstring: the model then wrote code for
another function (HumanEval single-line infilling through the server lost 7 tasks of 120 to
the raw model on the same prompt cut at 80 lines, all with a different first line). The window
now starts at the first line of the top-level statement (a ``def``, ``class``, function or
block at column 0) that contains its first line, when that is within the usual ``lines_before``
window; the prompt grows by those few lines only.

A function the cursor's statement calls, defined right above it, is kept in the window too
(``window_start``): cut at the cursor's function, the window left out the helper the function
is written with (HumanEval/10's ``is_palindrome`` above ``make_palindrome``), and the model
wrote code that did not use it.

When nothing but the file's head (imports, includes, comments, blank lines; at most twelve
lines) is above the window, it starts at the top of the file: the raw model on the whole file
answered better than on the same prompt without its one to three head lines (HumanEval through
the server: 5 tasks lost and 1 won to that difference on two seeds).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["statement_start", "window_start"]

_BRACKETS: Final = "{}()[];, \t"
_ENDS: Final = ("}", ")", "]", "end")
"""A line at column 0 that starts with one of these closes a statement (C, JavaScript, Lua)."""
_DEFINES: Final = re.compile(
    r"(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|local\s+function)\s+"
    r"([A-Za-z_][A-Za-z0-9_]*)"
)
"""A top-level line that defines a function or class, and its name."""
_HEAD: Final = re.compile(
    r"\s*$|#|//|--|/\*|\*|(?:import|from|using|package|require|local\s+\w+\s*=\s*require)\b"
    r"|[\"']use strict"
)
"""A line of a file's head: blank, a comment or directive, an import, include or require."""
_MAX_HEAD: Final = 12
"""The most lines of a file's head a cold window takes in (a prompt that starts where the
file does; HumanEval lost 5 tasks and won 1 where the window left out one to three such lines
above the cursor's function, issue 46.3)."""


def statement_start(text: str, top: int, highest: int) -> int:
    """Return the first line of the top-level statement containing line ``top`` of ``text``.

    A top-level statement starts with code at column 0 (a line of only brackets, such as a C
    function's ``{``, does not count). Searched up to line ``highest`` only; ``top`` when none
    starts there or a statement ends in between (a ``}`` or ``end`` at column 0: ``top`` is
    already between statements).
    """
    if top <= highest:
        return top
    lines = text.split("\n", top + 1)
    for index in range(min(top, len(lines) - 1), highest - 1, -1):
        line = lines[index]
        if not line[:1] or line[0].isspace():
            continue
        if line.startswith(_ENDS) and index != top:
            return top
        if line.strip(_BRACKETS):
            return index
    return top


def window_start(text: str, top: int, highest: int, line: int) -> int:
    """Return where a cold window around ``top`` starts for a cursor on ``line``.

    The top-level statement containing ``top`` (``statement_start``); then, when the statement
    right above it defines a function or class whose name the cursor's statement uses (its
    lines from the window's start to the next top-level line, the cursor's line's rest
    included), that statement's first line. Searched up to line ``highest`` only. When all
    that is left above is the file's head (at most `_MAX_HEAD` lines of imports, includes,
    comments and blank lines), the top of the file.
    """
    start = _start(text, top, highest, line)
    if highest > 0 or not 0 < start <= _MAX_HEAD:
        return start
    head = text.split("\n", start + 1)[:start]
    return 0 if all(_HEAD.match(row) for row in head) else start


def _start(text: str, top: int, highest: int, line: int) -> int:
    start = statement_start(text, top, highest)
    if start <= highest:
        return start
    lines = text.split("\n")
    last = start - 1
    while last > highest and not lines[last].strip():
        last -= 1
    above = statement_start(text, last, highest)
    defined = _DEFINES.match(lines[above])
    if above < highest or defined is None:
        return start
    while above > highest and lines[above - 1].startswith("@"):
        above -= 1  # a decorated definition starts at its decorators
    end = line + 1
    while end < len(lines) and (not lines[end][:1] or lines[end][0].isspace()):
        end += 1
    used = re.compile(rf"\b{re.escape(defined.group(1))}\b")
    body = "\n".join(lines[start:end])
    return above if used.search(body) else start
