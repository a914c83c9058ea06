"""The one position module: LSP lines (LF, CRLF, CR), UTF-16/UTF-8 columns, lone surrogates."""

from __future__ import annotations

from typing import cast

import pytest
from acp.schema import DidChangeDocumentNotification, DidOpenDocumentNotification, StartNesRequest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from qodeassist_lsp.acp_agent.nes import NesServer
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.positions import (
    has_line,
    line_at,
    line_count,
    line_end_offset,
    line_start_offset,
    offset_at,
    offset_of,
    position_at,
    position_of,
    split_lines,
    to_code_points,
    to_units,
    units,
)
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.next_edit.window import window_around
from qodeassist_lsp.lsp.text_sync import apply_change
from qodeassist_lsp.workbench.bench import Workbench
from qodeassist_lsp.workbench.ports import Ports

EMOJI = "a😀b"
LONE = "a\ud800b"


def _bench(documents: DocumentStore) -> Workbench:
    """A workbench whose agents are never asked (the next edit's answers are faked)."""
    return Workbench(cast(RuntimeView, object()), Ports(folders=list, documents=documents))


def test_an_astral_character_is_two_utf16_units_and_four_utf8_bytes() -> None:
    assert units(EMOJI, "utf-16") == 4
    assert units(EMOJI, "utf-8") == 6
    assert units(EMOJI, "utf-32") == 3
    assert [to_units(EMOJI, c, "utf-16") for c in range(4)] == [0, 1, 3, 4]
    assert [to_code_points(EMOJI, u, "utf-16") for u in range(5)] == [0, 1, 2, 2, 3]
    assert [to_code_points(EMOJI, u, "utf-8") for u in range(7)] == [0, 1, 2, 2, 2, 2, 3]


def test_column_2_of_an_emoji_line_is_after_the_emoji_in_every_door() -> None:
    """Inside the surrogate pair rounds up past it, as pygls's own codec does."""
    assert to_code_points(EMOJI, 2, "utf-16") == 2
    assert offset_of(EMOJI, 0, 2, "utf-16") == 2
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    assert codec.position_from_client_units([EMOJI], types.Position(0, 2)).character == 2


def test_a_lone_surrogate_is_one_unit_and_raises_nothing() -> None:
    assert units(LONE, "utf-16") == 3
    assert units(LONE, "utf-8") == 5  # surrogatepass: three bytes
    for encoding in ("utf-16", "utf-8", "utf-32"):
        for column in range(7):
            character = to_code_points(LONE, column, encoding)
            assert 0 <= character <= 3
        for character in range(4):
            assert to_code_points(LONE, to_units(LONE, character, encoding), encoding) == character
    assert offset_of(LONE, 0, 2, "utf-16") == 2
    assert position_of(LONE, 3, "utf-16") == (0, 3)
    assert position_of("\ud83d", 1, "utf-8") == (0, 3)


def test_crlf_lines_never_include_their_carriage_return() -> None:
    text = "ab\r\ncd\r\n"
    assert line_count(text) == 3
    assert line_at(text, 0) == (0, "ab")
    assert line_at(text, 1) == (4, "cd")
    assert line_at(text, 2) == (8, "")
    assert offset_of(text, 0, 99, "utf-16") == 2  # past the end: the end, before the \r
    assert position_at(text, 3) == (0, 2)  # between \r and \n: the end of the line
    assert position_at(text, 4) == (1, 0)
    assert position_of(text, 8, "utf-16") == (2, 0)


def test_a_lone_carriage_return_ends_a_line_as_lsp_says() -> None:
    text = "ab\rc😀\rd\n\re"
    assert line_count(text) == 5
    assert [line_at(text, n)[1] for n in range(5)] == ["ab", "c😀", "d", "", "e"]
    assert line_start_offset(text, 1) == 3
    assert line_start_offset(text, 4) == 9
    assert line_start_offset(text, 5) == len(text)
    assert line_end_offset(text, 3) == 5
    assert offset_of(text, 1, 3, "utf-16") == 5
    assert offset_of(text, 1, 9, "utf-16") == 5
    for offset in range(len(text) + 1):
        line, column = position_of(text, offset, "utf-16")
        assert offset_of(text, line, column, "utf-16") == offset
    assert position_at(text, len(text)) == (4, 1)
    assert has_line(text, 4) and not has_line(text, 5)
    assert has_line("a\r", 1) and not has_line("a\r", 2)


def test_positions_past_the_end_are_clamped() -> None:
    text = "héllo\nwörld"
    assert offset_of(text, 0, 99, "utf-16") == 5
    assert offset_of(text, 1, 99, "utf-8") == len(text)
    assert offset_of(text, 7, 0, "utf-16") == len(text)
    assert offset_of(text, 0, -3, "utf-16") == 0
    assert offset_at(text, 0, 99) == 5
    assert position_at(text, 999) == (1, 5)
    assert position_at(text, -4) == (0, 0)
    assert not has_line(text, 2) and not has_line(text, -1)


def test_the_old_ports_agree_on_an_emoji_and_a_lone_surrogate() -> None:
    """The ACP NES door and the LSP door put the same edit at the same place."""
    for text in (EMOJI, LONE, "x\r\n" + EMOJI):
        line = text.count("\n")
        acp = _acp_after_insert(text, line, 2)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, 2), types.Position(line, 2)), text="X"
        )
        lsp, _ = apply_change(text, change, PositionCodec(types.PositionEncodingKind.Utf16))
        assert acp == lsp
    assert _acp_after_insert(EMOJI, 0, 2) == "a😀Xb"


def _acp_after_insert(text: str, line: int, character: int) -> str:
    documents = DocumentStore()
    nes = NesServer(_bench(documents))
    session = nes.start(StartNesRequest()).session_id
    uri = "file:///p/a.txt"
    nes.did_open(
        DidOpenDocumentNotification(
            session_id=session, uri=uri, language_id="text", version=1, text=text
        )
    )
    where = {"line": line, "character": character}
    nes.did_change(
        DidChangeDocumentNotification.model_validate(
            {
                "sessionId": session,
                "uri": uri,
                "version": 2,
                "contentChanges": [{"range": {"start": where, "end": where}, "text": "X"}],
            }
        )
    )
    document = documents.get(uri)
    assert document is not None
    return document.text


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("line", ["", "plain", 'x="😋" + "é"', "ünïcödé ✓", "😋😋", LONE])
def test_round_trip_and_agreement_with_pygls(encoding: str, line: str) -> None:
    codec = PositionCodec(types.PositionEncodingKind(encoding))
    if line != LONE:  # pygls's codec counts a lone surrogate's UTF-8 bytes by encoding it
        assert units(line, encoding) == codec.client_num_units(line)
    for character in range(len(line) + 1):
        column = to_units(line, character, encoding)
        if line != LONE:
            expected = codec.position_to_client_units([line], types.Position(0, character))
            assert column == expected.character
        assert to_code_points(line, column, encoding) == character


def test_split_lines_breaks_where_lsp_does() -> None:
    assert split_lines("a\nb\r\nc\rd") == ["a", "b", "c", "d"]
    assert split_lines("") == [""]
    assert split_lines("a\r") == ["a", ""]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_the_document_features_count_lines_as_the_doors_do(eol: str) -> None:
    """Edit history, changed lines and the next-edit window agree with LSP lines, CR too."""
    old = eol.join(["one", "two", "three", "four", ""])
    new = old.replace("three", "THREE")
    store = DocumentStore()
    store.open("file:///x", old, 1)
    store.change("file:///x", new, 2)
    hunk = store.edit_history.last("file:///x")
    assert hunk is not None and hunk.start == 2
    assert (hunk.original, hunk.updated) == (("three",), ("THREE",))
    assert store.recent_changes("file:///x") == ["THREE"]
    document = store.get("file:///x")
    assert document is not None
    window = window_around(document, 3, 2, above=1, below=1)
    assert window.lines == ("THREE", "four", "")
    inserted = old.replace("two" + eol, "two" + eol + "2b" + eol)
    store = DocumentStore()
    store.open("file:///x", old, 1)
    store.change("file:///x", inserted, 2)
    hunk = store.edit_history.last("file:///x")
    assert hunk is not None and (hunk.start, hunk.original, hunk.updated) == (2, (), ("2b",))


def test_long_texts_are_told_apart_when_one_gains_a_lone_carriage_return() -> None:
    """A long text's answer is remembered per text object: an edited copy is looked at anew."""
    crlf = "".join(f"line {n}\r\n" for n in range(2000))
    assert line_start_offset(crlf, 1500) == crlf.index("line 1500")
    assert position_at(crlf, crlf.index("line 1500") + 2) == (1500, 2)
    edited = crlf.replace("line 10\r\n", "line 10\rx\r\n")  # a lone \r: one line more
    assert line_start_offset(edited, 1501) == edited.index("line 1500")
    assert position_at(edited, edited.index("line 1500") + 2) == (1501, 2)
    assert line_start_offset(crlf, 1500) == crlf.index("line 1500")
    assert line_count(edited) == line_count(crlf) + 1 == 2002
