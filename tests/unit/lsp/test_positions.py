"""Client position units ↔ code points, checked against pygls's own codec on tricky lines."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from qodeassist_lsp.lsp.errors import InvalidParams
from qodeassist_lsp.lsp.positions import (
    client_position,
    line_at,
    require_line,
    to_client_units,
    to_code_points,
)

LINES = ["", "plain ascii = 1", 'x="😋" + "é"', "ünïcödé ✓", "😋😋"]
ENCODINGS = [
    types.PositionEncodingKind.Utf8,
    types.PositionEncodingKind.Utf16,
    types.PositionEncodingKind.Utf32,
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("line", LINES)
def test_round_trip_and_agreement_with_pygls(
    encoding: types.PositionEncodingKind, line: str
) -> None:
    codec = PositionCodec(encoding)
    assert client_position(codec, line, len(line)) == (0, codec.client_num_units(line))
    for character in range(len(line) + 1):
        column = to_client_units(codec, line, character)
        expected = codec.position_to_client_units([line], types.Position(0, character))
        assert column == expected.character
        assert to_code_points(codec, line, column) == character


def test_the_documented_example_in_each_encoding() -> None:
    line = 'x="😋"'
    closing = line.index('"', 3)
    assert to_client_units(PositionCodec(types.PositionEncodingKind.Utf8), line, closing) == 7
    assert to_client_units(PositionCodec(types.PositionEncodingKind.Utf16), line, closing) == 5
    assert to_client_units(PositionCodec(types.PositionEncodingKind.Utf32), line, closing) == 4


def test_columns_out_of_range_are_clamped_and_half_characters_round_up() -> None:
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    assert to_code_points(codec, "abc", 99) == 3
    assert to_code_points(codec, "abc", -1) == 0
    assert to_code_points(codec, "😋x", 1) == 1  # inside the surrogate pair
    assert to_code_points(codec, "é😋", 99) == 2
    assert to_client_units(codec, "abc", -5) == 0


def test_line_at_returns_the_line_without_its_break() -> None:
    text = "first\r\nsecond\nthird"
    assert line_at(text, 1) == (7, "second")
    assert line_at(text, 2) == (14, "third")
    assert line_at(text, 9) == (len(text), "")


def test_a_line_past_the_end_of_the_document_is_refused_by_name() -> None:
    for text, last in (("", 0), ("a", 0), ("a\nb", 1), ("a\nb\n", 2), ("a\r\nb\r\n", 2)):
        for line in range(last + 1):
            require_line("m", "file:///x", text, line)
        with pytest.raises(InvalidParams) as raised:
            require_line("textDocument/completion", "file:///x", text, last + 1)
        message = str(raised.value)
        assert message.startswith(f"textDocument/completion: line {last + 1} is past the end")
        assert "file:///x" in message and f"has {last + 1} line" in message
    with pytest.raises(InvalidParams):
        require_line("m", "file:///x", "a\nb", -1)
