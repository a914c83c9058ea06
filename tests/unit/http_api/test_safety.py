from __future__ import annotations

import httpx
import pytest
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from qodeassist_lsp.http_api.safety import Guard, host_name, is_loopback

TOKEN = "secret"


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await PlainTextResponse(f"ok {len(body)}")(scope, receive, send)


LOCAL = frozenset({"127.0.0.1", "localhost"})


def client(hosts: frozenset[str] | None = LOCAL, max_body: int = 100) -> httpx.AsyncClient:
    guard = Guard(app, lambda: TOKEN, hosts=hosts, max_body=max_body)
    return httpx.AsyncClient(transport=httpx.ASGITransport(guard), base_url="http://127.0.0.1:9")


AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:80", "127.0.0.1"),
        ("[::1]:80", "::1"),
        ("localhost", "localhost"),
        ("::1", "::1"),
    ],
)
def test_host_name_drops_the_port(header: str, name: str) -> None:
    assert host_name(header) == name


def test_loopback_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("127.1.2.3")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")


async def test_the_token_is_required_except_for_the_page() -> None:
    async with client() as http:
        assert (await http.get("/v1/models")).status_code == 401
        assert (
            await http.get("/v1/models", headers={"Authorization": "Bearer x"})
        ).status_code == 401
        assert (await http.get("/v1/models", headers=AUTH)).status_code == 200
        assert (await http.get("/")).status_code == 200
        assert (await http.post("/")).status_code == 401  # only GET of the page is public


async def test_host_and_origin_are_checked() -> None:
    async with client() as http:
        assert (await http.get("/", headers={"Host": "evil.example"})).status_code == 403
        foreign = await http.get("/x", headers={**AUTH, "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        own = await http.get("/x", headers={**AUTH, "Origin": "http://127.0.0.1:9"})
        assert own.status_code == 200
    async with client(hosts=None) as anyone:
        assert (await anyone.get("/", headers={"Host": "box.lan"})).status_code == 200


async def test_bodies_over_the_limit_are_refused() -> None:
    async with client(max_body=100) as http:
        assert (await http.post("/x", headers=AUTH, content=b"x" * 100)).text == "ok 100"
        assert (await http.post("/x", headers=AUTH, content=b"x" * 101)).status_code == 413

        async def chunks():  # no Content-Length
            for _ in range(3):
                yield b"x" * 60

        assert (await http.post("/x", headers=AUTH, content=chunks())).status_code == 413


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
async def test_the_scheme_is_case_insensitive(scheme: str) -> None:
    async with client() as http:
        answer = await http.get("/v1/models", headers={"Authorization": f"{scheme} {TOKEN}"})
        assert answer.status_code == 200


@pytest.mark.parametrize(
    "value", [None, "Bearer", "Basic c2VjcmV0", f"Bearer {TOKEN}x", f"Token {TOKEN}"]
)
async def test_a_refused_token_is_an_openai_401(value: str | None) -> None:
    headers = {} if value is None else {"Authorization": value}
    async with client() as http:
        answer = await http.get("/v1/models", headers=headers)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
    error = answer.json()["error"]
    assert (error["type"], error["code"]) == ("authentication_error", "invalid_api_key")
    assert "Authorization: Bearer" in error["message"]


async def test_the_completion_route_takes_a_bigger_body() -> None:
    guard = Guard(app, lambda: TOKEN, hosts=LOCAL, max_body=100, max_completion_body=300)
    transport = httpx.ASGITransport(guard)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as http:
        big = b"x" * 250
        assert (await http.post("/v1/chat/completions", headers=AUTH, content=big)).text == (
            "ok 250"
        )
        assert (await http.post("/x", headers=AUTH, content=big)).status_code == 413
        over = await http.post("/v1/chat/completions", headers=AUTH, content=b"x" * 301)
        assert over.status_code == 413 and over.json()["error"]["code"] == "too_large"


def test_the_limits_agree_with_the_image_limit() -> None:
    from qodeassist_lsp.features.chat.files import MAX_IMAGE_BYTES
    from qodeassist_lsp.http_api.safety import MAX_COMPLETION_BODY_BYTES

    assert MAX_COMPLETION_BODY_BYTES > (MAX_IMAGE_BYTES + 2) // 3 * 4
