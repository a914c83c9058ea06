r"""Positions in a text: lines as LSP defines them, client columns, code-point columns, offsets.

The one place every door converts positions: the LSP server (``lsp/positions.py`` adapts
pygls's codec to it, ``lsp/text_sync.py`` applies changes with it), ACP's next edits
(``acp_agent/nes.py``) and the features below them (through ``documents``). No pygls here: the
encodings are named by their LSP strings, ``"utf-8"``, ``"utf-16"`` (the default) and
``"utf-32"``; any other name counts code points, like ``"utf-32"``.

The rules, from the LSP specification where it has one:

- A line ends at ``\n``, ``\r\n`` or a lone ``\r``; a line's text never includes its break.
  The empty line after a final break exists (the cursor can be there).
- A column is counted in the encoding's units: UTF-16 code units (an astral character such as
  😀 is two), UTF-8 bytes, or code points. A column past the line's end means the line's end,
  as the specification says; a negative one means its start.
- A column inside a character (the second unit of a surrogate pair, a byte inside a UTF-8
  sequence) rounds up past that character, as pygls's own codec does.
- A lone surrogate (``"\ud800"``, which a JSON ``\ud800`` escape produces) is one code point,
  one UTF-16 unit (as in the editor's UTF-16 string) and three UTF-8 bytes (its
  ``surrogatepass`` encoding); it is measured, never encoded strictly, so it raises nothing.
- A line past the document's end is clamped to the document's end here; a door that must refuse
  it says so first (``lsp/positions.require_line``).

No whole-text split: a line's start is found by counting ``\n`` at C speed. Whether a long text
holds a lone ``\r`` at all (rare: old Mac files) is found once per text object and remembered
for the last few, so a CRLF document costs what an LF one does, and resolving a position in a
5,000-line file stays a fraction of a millisecond.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "has_line",
    "line_at",
    "line_count",
    "line_end_offset",
    "line_start_offset",
    "offset_at",
    "offset_of",
    "position_at",
    "position_of",
    "split_lines",
    "to_code_points",
    "to_units",
    "units",
]

_CHUNK: Final = 16_384
"""Characters counted per ``str.count`` call while looking for a line (C speed, bounded copy)."""
_FIND_SPAN: Final = 64
"""Below this many characters the line breaks left to pass are found one by one."""
_BREAK: Final = re.compile(r"\r\n?|\n")
"""An LSP line break."""


_PROBED: list[tuple[str, bool]] = []
"""The last few long texts asked about (the same object, not an equal copy) and whether they hold
a lone ``\r``: a CRLF document is counted once per version, not once per position."""
_PROBED_KEPT: Final = 4
_PROBE_FROM: Final = 4096
"""Texts shorter than this are counted every time (cheaper than remembering them)."""


def _has_lone_cr(text: str) -> bool:
    r"""Whether ``text`` holds a ``\r`` not followed by ``\n`` (an old Mac line break)."""
    if text.find("\r") < 0:
        return False
    if len(text) < _PROBE_FROM:
        return text.count("\r") != text.count("\r\n")
    for probed, answer in _PROBED:
        if probed is text:
            return answer
    answer = text.count("\r") != text.count("\r\n")
    _PROBED.append((text, answer))
    del _PROBED[:-_PROBED_KEPT]
    return answer


def _lone_crs(text: str, end: int) -> int:
    r"""Return how many ``\r`` not followed by ``\n`` are in ``text[:end]``."""
    if text.find("\r", 0, end) < 0 or not _has_lone_cr(text):
        return 0
    return text.count("\r", 0, end) - text.count("\r\n", 0, end)


def _after_newlines(text: str, line: int) -> int:
    r"""Return the offset after the ``line``-th ``\n`` (``len(text)`` when there are fewer)."""
    remaining = line
    pos = 0
    size = len(text)
    while pos < size:
        end = min(pos + _CHUNK, size)
        found = text.count("\n", pos, end)
        if found >= remaining:
            # Halve the chunk around the wanted line break, then step over the last few.
            while end - pos > _FIND_SPAN:
                middle = (pos + end) // 2
                below = text.count("\n", pos, middle)
                if below >= remaining:
                    end = middle
                else:
                    remaining -= below
                    pos = middle
            for _ in range(remaining):
                pos = text.find("\n", pos, end) + 1
            return pos
        remaining -= found
        pos = end
    return size


def line_start_offset(text: str, line: int) -> int:
    """Return the offset where 0-based ``line`` starts (``len(text)`` past the last line)."""
    if line <= 0:
        return 0
    start = _after_newlines(text, line)
    if not _lone_crs(text, start):
        return start
    for count, found in enumerate(_BREAK.finditer(text), 1):
        if count == line:
            return found.end()
    return len(text)


def line_count(text: str) -> int:
    """Return the number of lines of ``text`` (one more than its line breaks)."""
    return text.count("\n") + _lone_crs(text, len(text)) + 1


def has_line(text: str, line: int, start: int | None = None) -> bool:
    """Whether 0-based ``line`` exists in ``text`` (``start``: its `line_start_offset`, if known).

    The empty line after a final line break exists: the cursor can be there.
    """
    if line < 0:
        return False
    if start is None:
        start = line_start_offset(text, line)
    # Only a position at the very end needs the lines counted.
    return start < len(text) or line == line_count(text) - 1


def split_lines(text: str) -> list[str]:
    """Return the lines of ``text`` without their breaks (one line more than breaks)."""
    if "\r" not in text:
        return text.split("\n")
    return _BREAK.split(text)


def line_end_offset(text: str, start: int) -> int:
    """Return the offset of the line break ending the line that contains ``start``."""
    newline = text.find("\n", start)
    stop = len(text) if newline < 0 else newline
    carriage = text.find("\r", start, stop)
    return stop if carriage < 0 else carriage


def line_at(text: str, line: int) -> tuple[int, str]:
    """Return the offset where ``line`` starts and its text (without the line break)."""
    start = line_start_offset(text, line)
    return start, text[start : line_end_offset(text, start)]


def offset_at(text: str, line: int, character: int) -> int:
    """Convert a (line, code-point column) position to an offset, clamped to the line."""
    start = line_start_offset(text, line)
    end = line_end_offset(text, start)
    return start + max(0, min(character, end - start))


def _line_of(text: str, offset: int) -> tuple[int, int, int]:
    r"""Return the line of ``offset``, that line's start and ``offset`` clamped to the text.

    An offset between the ``\r`` and the ``\n`` of one break is moved onto the ``\r``: the
    end of its line.
    """
    offset = max(0, min(offset, len(text)))
    if 0 < offset < len(text) and text[offset] == "\n" and text[offset - 1] == "\r":
        offset -= 1
    line = text.count("\n", 0, offset) + _lone_crs(text, offset)
    newline = text.rfind("\n", 0, offset)
    carriage = text.rfind("\r", newline + 1, offset)
    start = max(newline, carriage) + 1
    return line, start, offset


def position_at(text: str, offset: int) -> tuple[int, int]:
    """Convert an offset to a 0-based (line, code-point column) position."""
    line, start, offset = _line_of(text, offset)
    return line, offset - start


def _width_utf16(char: str) -> int:
    return 2 if ord(char) > 0xFFFF else 1


def _width_utf8(char: str) -> int:
    code = ord(char)
    # A lone surrogate (below 0x10000) is three bytes, as ``surrogatepass`` writes it.
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def units(text: str, encoding: str) -> int:
    """Return the length of ``text`` in ``encoding``'s units (code points unless utf-8/16)."""
    if text.isascii():
        return len(text)
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text)


def to_code_points(line_text: str, column: int, encoding: str) -> int:
    """Return the code-point column of the ``encoding`` ``column`` on ``line_text``, clamped.

    A column inside a character's units (half a surrogate pair) rounds up past it.
    """
    if column <= 0:
        return 0
    if line_text.isascii() or encoding not in ("utf-16", "utf-8"):
        return min(column, len(line_text))
    width = _width_utf16 if encoding == "utf-16" else _width_utf8
    counted = 0
    for index, char in enumerate(line_text):
        if counted >= column:
            return index
        counted += width(char)
    return len(line_text)


def to_units(line_text: str, character: int, encoding: str) -> int:
    """Return the ``encoding`` column of the code-point ``character`` on ``line_text``."""
    return units(line_text[: max(0, character)], encoding)


def offset_of(text: str, line: int, column: int, encoding: str) -> int:
    """Return the offset of the client position (``line``, ``column`` in ``encoding``), clamped.

    A column past the line's end is the line's end; a line past the document's end is its end.
    """
    start, line_text = line_at(text, line)
    return start + to_code_points(line_text, column, encoding)


def position_of(text: str, offset: int, encoding: str) -> tuple[int, int]:
    """Return the client position (line, column in ``encoding``) of ``offset`` in ``text``."""
    line, start, offset = _line_of(text, offset)
    return line, units(text[start:offset], encoding)
