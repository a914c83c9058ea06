"""Incremental changes applied by `apply_change` give exactly pygls's text, edit after edit."""

from __future__ import annotations

import logging
import random

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from qodeassist_lsp.context.documents import LineEdit
from qodeassist_lsp.lsp.text_sync import apply_change, apply_changes

START = 'def f(x):\n    return "😋é" + x\n\nclass A:\n    pass\n'
PIECES = ["a", "é", "😋", "\n", "    ", "word", "", "\n\n", "}"]


def _units(text: str, encoding: types.PositionEncodingKind) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode())
    if encoding == types.PositionEncodingKind.Utf16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def _random_position(
    rng: random.Random, text: str, encoding: types.PositionEncodingKind
) -> types.Position:
    lines = text.split("\n")
    line = rng.randrange(len(lines))
    character = rng.randint(0, len(lines[line]))
    return types.Position(line, _units(lines[line][:character], encoding))


@pytest.mark.parametrize(
    "encoding",
    [
        types.PositionEncodingKind.Utf8,
        types.PositionEncodingKind.Utf16,
        types.PositionEncodingKind.Utf32,
    ],
)
@pytest.mark.parametrize("seed", range(5))
def test_random_edits_match_pygls(encoding: types.PositionEncodingKind, seed: int) -> None:
    rng = random.Random(seed)
    codec = PositionCodec(encoding)
    reference = TextDocument(
        "file:///a.py",
        START,
        sync_kind=types.TextDocumentSyncKind.Incremental,
        position_codec=codec,
    )
    text = START
    for _ in range(200):
        start = _random_position(rng, text, encoding)
        end = _random_position(rng, text, encoding)
        if (end.line, end.character) < (start.line, start.character):
            start, end = end, start
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start, end), text=rng.choice(PIECES)
        )
        text, _ = apply_change(text, change, codec)
        reference.apply_change(change)
        assert text == reference.source


def test_edits_at_and_past_the_end_append() -> None:
    codec = PositionCodec()
    end = types.Position(2, 0)
    change = types.TextDocumentContentChangePartial(range=types.Range(end, end), text="tail")
    assert apply_change("one\ntwo\n", change, codec)[0] == "one\ntwo\ntail"
    far = types.Position(40, 7)
    change = types.TextDocumentContentChangePartial(range=types.Range(far, far), text="!")
    assert apply_change("one", change, codec)[0] == "one!"


def test_a_range_past_the_end_is_clamped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    codec = PositionCodec()
    with caplog.at_level(logging.WARNING, logger="qodeassist.lsp"):
        assert apply_change("one\ntwo", _partial((1, 3), (7, 2), "!"), codec)[0] == "one\ntwo!"
    [record] = caplog.records
    assert "1:3-7:2" in record.getMessage() and "2 lines" in record.getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="qodeassist.lsp"):
        # The end of the last line, the empty line after a final break, a long column: in range.
        apply_change("one\ntwo", _partial((1, 3), (1, 3), "!"), codec)
        apply_change("one\ntwo\n", _partial((2, 0), (2, 0), "!"), codec)
        apply_change("one\ntwo", _partial((0, 99), (0, 99), "!"), codec)
    assert caplog.records == []


def test_a_column_past_the_line_end_stops_before_the_line_break() -> None:
    codec = PositionCodec()
    at = types.Position(0, 99)
    change = types.TextDocumentContentChangePartial(range=types.Range(at, at), text=";")
    assert apply_change("a = 1\r\nb = 2\n", change, codec)[0] == "a = 1;\r\nb = 2\n"


def test_a_whole_document_change_replaces_the_text() -> None:
    change = types.TextDocumentContentChangeWholeDocument(text="new")
    assert apply_change("old text", change, PositionCodec())[0] == "new"


def _partial(
    start: tuple[int, int], end: tuple[int, int], text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(*start), types.Position(*end)), text=text
    )


def test_one_range_change_also_says_what_changed() -> None:
    codec = PositionCodec()  # UTF-16: "😋" is two units, one code point
    text, edits = apply_changes('x = "😋ab"\ny\n', [_partial((0, 5), (0, 8), "Z\nW")], codec)
    assert text == 'x = "Z\nWb"\ny\n'
    assert edits == (LineEdit(0, "Z\nW", 2),)
    _, edits = apply_changes("one", [_partial((40, 7), (40, 7), "!")], codec)
    assert edits == (LineEdit(0, "!", 0),)  # clamped to the end: the last line, not line 40


def test_several_or_whole_text_changes_leave_the_comparison_to_the_store() -> None:
    codec = PositionCodec()
    two = [_partial((0, 0), (0, 0), "a"), _partial((0, 1), (0, 1), "b")]
    assert apply_changes("x", two, codec) == ("abx", None)
    whole = [types.TextDocumentContentChangeWholeDocument(text="new")]
    assert apply_changes("old", whole, codec) == ("new", None)
