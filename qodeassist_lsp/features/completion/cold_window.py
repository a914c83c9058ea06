"""Where a cold window starts: at the top-level statement its first line is in (issue 46.3).

A cold window (``local_cold_lines_before``, ``prompt_plan``) gives a file the local model has
not read a short prefix. Cut a fixed number of lines above the cursor, it often started inside
the function being written, below its signature and docstring: the model then wrote code for
another function (HumanEval single-line infilling through the server lost 7 tasks of 120 to
the raw model on the same prompt cut at 80 lines, all with a different first line). The window
now starts at the first line of the top-level statement (a ``def``, ``class``, function or
block at column 0) that contains its first line, when that is within the usual ``lines_before``
window; the prompt grows by those few lines only.
"""

from __future__ import annotations

from typing import Final

__all__ = ["statement_start"]

_BRACKETS: Final = "{}()[];, \t"
_ENDS: Final = ("}", ")", "]", "end")
"""A line at column 0 that starts with one of these closes a statement (C, JavaScript, Lua)."""


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
