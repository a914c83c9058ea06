"""The NDJSON splitter: b"\\n" only, blank lines skipped, the unterminated tail kept for EOF."""

from qodeassist_lsp.wire.ndjson import NDJSONDecoder


def lines(pieces: list[bytes]) -> list[bytes]:
    decoder = NDJSONDecoder()
    out = []
    for piece in pieces:
        out.extend(decoder.feed(piece))
    return out + decoder.close()


def test_every_split_gives_the_same_lines_and_the_tail_is_flushed(kit) -> None:
    data = kit.bytes("ollama/chat_stream_excerpt_sk.ndjson")
    assert not data.endswith(b"\n")
    expected = lines([data])
    assert len(expected) == 6
    for label, pieces in kit.splits(data):
        assert lines(pieces) == expected, label


def test_blank_lines_and_crlf_are_skipped() -> None:
    assert lines([b'{"a":1}\r\n\r\n\n  \n{"b":2}\n']) == [b'{"a":1}', b'{"b":2}']


def test_splits_only_on_newline_bytes() -> None:
    line = '{"content":"a\u0085b\u2028c"}'.encode()
    assert lines([line + b"\n"]) == [line]
