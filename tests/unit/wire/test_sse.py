"""The SSE decoder: WHATWG framing rules, fed in every split, on real and edge-case bytes."""

from qodeassist_lsp.wire.sse import ServerSentEvent, SSEDecoder


def decode(pieces: list[bytes], **kwargs) -> list[ServerSentEvent]:
    decoder = SSEDecoder(**kwargs)
    events = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    return events + decoder.close()


def all_splits(kit, data: bytes, **kwargs) -> list[ServerSentEvent]:
    expected = decode([data], **kwargs)
    for label, pieces in kit.splits(data):
        assert decode(pieces, **kwargs) == expected, label
    return expected


def test_named_events_with_padded_json(kit) -> None:
    events = all_splits(kit, kit.bytes("anthropic/stream_text_hello.sse"))
    assert [e.event for e in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[-1].data == '{"type":"message_stop"   }'


def test_crlf_separated_gemini_events(kit) -> None:
    events = all_splits(kit, kit.bytes("gemini/sse_text.sse"))
    assert len(events) == 3
    assert all(e.event == "" and e.data.startswith('{"candidates"') for e in events)
    assert not any("\r" in e.data for e in events)


def test_trailing_event_without_blank_line_is_flushed_at_eof(kit) -> None:
    data = kit.bytes("mistral/chat_stream_tool_call_2024.sse")
    assert not data.endswith(b"\n")
    assert all_splits(kit, data)[-1].data == "[DONE]"


def test_cr_only_line_endings_and_crlf_split_across_chunks(kit) -> None:
    data = b"event: a\rdata: 1\r\rdata: 2\r\n\r\n"
    events = all_splits(kit, data)
    assert events == [ServerSentEvent("a", "1"), ServerSentEvent("", "2")]


def test_multiline_data_comments_id_and_one_space_strip(kit) -> None:
    data = b": keep-alive\nid: 7\ndata:first\ndata:  second\ndata\n\n: OPENROUTER PROCESSING\n\n"
    assert all_splits(kit, data) == [ServerSentEvent("", "first\n second\n")]


def test_blank_lines_without_data_dispatch_nothing_and_reset_the_name(kit) -> None:
    data = b"event: ping\n\n\n\ndata: x\n\n"
    assert all_splits(kit, data) == [ServerSentEvent("", "x")]


def test_multibyte_character_split_across_chunks(kit) -> None:
    text = "data: Pelé × ☃ 😀\n\n".encode()
    assert all_splits(kit, text) == [ServerSentEvent("", "Pelé × ☃ 😀")]


def test_invalid_utf8_becomes_replacement_character(kit) -> None:
    assert all_splits(kit, b"data: a\xff\xfeb\n\ndata: \xe2\x82\n\n") == [
        ServerSentEvent("", "a\ufffd\ufffdb"),
        ServerSentEvent("", "\ufffd"),
    ]


def test_byte_order_mark_is_ignored(kit) -> None:
    assert all_splits(kit, b"\xef\xbb\xbfdata: 1\n\n") == [ServerSentEvent("", "1")]


def test_unknown_fields_dropped_unless_declared_data_like(kit) -> None:
    data = b'retry: 10\nfoo: bar\n\nerror: {"code":500}\n\n'
    assert all_splits(kit, data) == []
    assert all_splits(kit, data, data_fields={"error"}) == [
        ServerSentEvent("error", '{"code":500}')
    ]


def test_unicode_line_separators_inside_data_do_not_split(kit) -> None:
    data = 'data: {"t":"a\u2028b\u0085c"}\n\n'.encode()
    assert all_splits(kit, data) == [ServerSentEvent("", '{"t":"a\u2028b\u0085c"}')]
