from __future__ import annotations

import pytest

from qodeassist_lsp.http_api.errors import ApiError, error_body, error_type, parse_json
from qodeassist_lsp.http_api.openai_routes import chat_header
from qodeassist_lsp.wire.error_table import http_answer


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
    answer = http_answer(caught.value)
    assert answer.status == 400 and answer.code == "invalid_json"


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


async def test_every_failure_of_a_route_answers_in_the_one_shape() -> None:
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.routing import Route

    from qodeassist_lsp.features.chat.files import ChatBusy
    from qodeassist_lsp.features.chat.store import ChatNotFound
    from qodeassist_lsp.http_api.errors import exception_handlers

    failures: dict[str, Exception] = {
        "busy": ChatBusy("c1", "r1"),
        "gone": ChatNotFound("invalid chat id 'a\\x00b'"),
        "bug": RuntimeError("boom"),
    }

    async def fail(request: Request) -> None:
        raise failures[request.path_params["what"]]

    app = Starlette(
        routes=[Route("/fail/{what}", fail, methods=["POST"])],
        exception_handlers=exception_handlers(),
    )
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        expected = {
            "/fail/busy": (409, "invalid_request_error", "chat_busy"),
            "/fail/gone": (404, "not_found_error", "not_found"),
            "/fail/bug": (500, "server_error", "internal_error"),
        }
        for path, (status, kind, code) in expected.items():
            answer = await http.post(path)
            error = answer.json()["error"]
            assert (answer.status_code, error["type"], error["code"]) == (status, kind, code)
            assert error["message"]
        assert (await http.post("/fail/busy")).headers["x-should-retry"] == "false"
        missing = await http.get("/nowhere")
        assert (missing.status_code, missing.json()["error"]["type"]) == (404, "not_found_error")
        wrong = await http.get("/fail/bug")
        assert wrong.status_code == 405
        assert wrong.json()["error"]["code"] == "method_not_allowed"
        assert "POST" in wrong.json()["error"]["message"]
