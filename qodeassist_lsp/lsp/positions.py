"""pygls's ``PositionCodec`` in front of ``context.positions``, and the LSP's line check.

The conversions themselves (lines as LSP defines them, UTF-16/UTF-8 columns, lone surrogates,
clamping) are ``context.positions``', shared with ACP's next edits; this module only reads the
negotiated encoding off the codec. Only the cursor's line is converted, an ASCII line (almost
every line of code) needs no conversion at all: pygls's codec rebuilds the document's line list
on every call, which on a large file was the most expensive part of a completion request.
"""

from __future__ import annotations

from pygls.workspace.position_codec import PositionCodec

from qodeassist_lsp.context import positions
from qodeassist_lsp.context.positions import has_line, line_at, line_count
from qodeassist_lsp.lsp.errors import InvalidParams

__all__ = [
    "client_position",
    "encoding_of",
    "line_at",
    "require_line",
    "to_client_units",
    "to_code_points",
]


def encoding_of(codec: PositionCodec) -> str:
    """Return the LSP name of ``codec``'s position encoding (``"utf-16"`` when none was chosen)."""
    kind = codec.encoding or "utf-16"
    return str(getattr(kind, "value", kind))


def require_line(method: str, uri: str, text: str, line: int) -> None:
    """Raise ``InvalidParams`` (-32602) when the document ``uri`` has no ``line``.

    A column past a line's end is clamped, as LSP says; a line past the document's end has no
    meaning, and answering it would put text where the user never was.
    """
    if not has_line(text, line):
        lines = line_count(text)
        raise InvalidParams(
            f"{method}: line {line} is past the end of {uri}, which has {lines} "
            f"line{'s' if lines != 1 else ''} (lines count from 0)"
        )


def client_position(codec: PositionCodec, text: str, offset: int) -> tuple[int, int]:
    """Return the client's (line, column) of the code-point ``offset`` in ``text``."""
    return positions.position_of(text, offset, encoding_of(codec))


def to_code_points(codec: PositionCodec, line_text: str, column: int) -> int:
    """Return the code-point column of the client ``column`` on ``line_text``, clamped.

    A column inside a character's code units (half a surrogate pair) rounds up past it.
    """
    return positions.to_code_points(line_text, column, encoding_of(codec))


def to_client_units(codec: PositionCodec, line_text: str, character: int) -> int:
    """Return the client column of the code-point ``character`` on ``line_text``."""
    return positions.to_units(line_text, character, encoding_of(codec))
