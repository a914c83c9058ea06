from __future__ import annotations

import pytest

from qodeassist_lsp.http_api.errors import ApiError, error_body, error_type, parse_json
from qodeassist_lsp.http_api.openai_routes import chat_header


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (405, "invalid_request_error"),
        (409, "invalid_request_error"),
        (500, "server_error"),
        (503, "server_error"),
    ],
)
def test_the_type_follows_the_status(status: int, kind: str) -> None:
    assert error_type(status) == kind
    assert error_body(status, "m", "c") == {"error": {"message": "m", "type": kind, "code": "c"}}


def test_param_is_named_when_given() -> None:
    assert error_body(400, "m", "c", "tools")["error"]["param"] == "tools"


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a": ' * 65 + b"1" + b"}" * 65,
        b"[" * 65 + b"]" * 65,
        b'{"messages": "\\ud800"}',
        b'{"\\udfff": 1}',
        b"{not json",
        b"\xff\xfe",
    ],
)
def test_bad_json_is_a_400_never_an_exception(raw: bytes) -> None:
    with pytest.raises(ApiError) as caught:
        parse_json(raw)
    assert caught.value.status == 400 and caught.value.code == "invalid_json"


def test_sixty_four_levels_and_any_real_text_parse() -> None:
    assert parse_json(b"[" * 64 + b"]" * 64) is not None
    text = '{"t": "Привет 日本 שלום 👋🏽 e\\u0301 \\u0000 \\ud83d\\ude00"}'
    assert parse_json(text.encode())["t"].endswith("\x00 😀")


@pytest.mark.parametrize(
    "chat_id",
    ["hi_2026-01-01_10-00", "Привет_2026", "日本", "שלום", "👋🏽", "e\u0301", "a\x00b", "a\ud800b"],
)
def test_the_chat_header_is_ascii_for_any_id(chat_id: str) -> None:
    from urllib.parse import unquote

    value = chat_header(chat_id)
    assert value.isascii() and value.isprintable() and " " not in value
    value.encode("latin-1")  # what a header must be
    if "\ud800" not in chat_id:
        assert unquote(value) == chat_id


def test_a_plain_id_is_sent_as_is() -> None:
    assert chat_header("hi_2026-01-01_10-00.x~") == "hi_2026-01-01_10-00.x~"
