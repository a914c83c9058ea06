"""Converting positions between the client's encoding and code points, one line at a time.

pygls converts through the whole document's line list, which it rebuilds on every call; on a
large file that is the most expensive part of a completion request. Only the cursor's line is
needed, so only that line is converted.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from qodeassist_lsp.context.documents import line_start_offset


def line_at(text: str, line: int) -> tuple[int, str]:
    """Return the offset where ``line`` starts and its text (without the line break)."""
    start = line_start_offset(text, line)
    end = text.find("\n", start)
    return start, text[start : len(text) if end < 0 else end]


def to_code_points(codec: PositionCodec, line_text: str, column: int) -> int:
    """Return the code-point column of the client ``column`` on ``line_text``."""
    return codec.position_from_client_units([line_text], types.Position(0, column)).character


def to_client_units(codec: PositionCodec, line_text: str, character: int) -> int:
    """Return the client column of the code-point ``character`` on ``line_text``."""
    return codec.position_to_client_units([line_text], types.Position(0, character)).character
