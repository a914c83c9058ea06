"""The streamed-JSON splitter: array elements as soon as they close, in every split."""

import json

from qodeassist_lsp.wire.jsonstream import JsonElementDecoder


def elements(pieces: list[bytes]) -> tuple[list[bytes], JsonElementDecoder]:
    decoder = JsonElementDecoder()
    out = []
    for piece in pieces:
        out.extend(decoder.feed(piece))
    return out, decoder


def test_gemini_array_elements_in_every_split(kit) -> None:
    data = kit.bytes("gemini/array_text_with_thoughts.json")
    whole, decoder = elements([data])
    assert decoder.complete
    assert [json.loads(e) for e in whole] == json.loads(data)
    for label, pieces in kit.splits(data):
        assert elements(pieces)[0] == whole, label


def test_element_is_emitted_before_the_array_closes(kit) -> None:
    data = kit.bytes("gemini/array_function_call_gemini3.json")
    first_end = data.index(b"\n,\r\n")
    out, decoder = elements([data[: first_end + 2]])
    assert len(out) == 1 and not decoder.complete
    assert json.loads(out[0])["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == (
        "multiply"
    )


def test_strings_with_brackets_quotes_and_escapes() -> None:
    data = b'[{"a":"]}\\"{["}, ["x", {"b":"\\\\"}], "s]", 12, true, null]'
    out, decoder = elements([data[i : i + 1] for i in range(len(data))])
    assert decoder.complete
    assert [json.loads(e) for e in out] == json.loads(data)


def test_single_object_body_is_one_element() -> None:
    out, decoder = elements([b'  {"error": {"code": 429}}  '])
    assert out == [b'{"error": {"code": 429}}'] and decoder.complete


def test_cut_array_is_not_complete_and_garbage_is_broken() -> None:
    out, decoder = elements([b'[{"a": 1}, {"b": '])
    assert out == [b'{"a": 1}'] and not decoder.complete and not decoder.broken
    assert elements([b"<html>"])[1].broken
