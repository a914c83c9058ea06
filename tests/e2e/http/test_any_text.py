"""Text that is not Latin-1 through every door of ``serve --http``: Cyrillic, CJK, right-to-left,
emoji, combining marks and NUL in messages, chat ids, path parameters and headers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import quote, unquote

import httpx
import openai
import pytest

from tests.e2e.http.conftest import HttpServer, start_http, stop
from tests.e2e.http.test_openai_api import CHAT_AGENT, HELLO, client_of
from tests.support.replay_server import ReplayServer
from tests.support.workspace import Workspace

TEXTS = {
    "cyrillic": "Привет, как дела?",
    "cjk": "日本語で答えてください、世界",
    "rtl": "שלום עולם — مرحبا بالعالم",
    "emoji": "👋🏽 hi 🧑‍💻🇺🇦",
    "combining": "e\u0301 n\u0303 Z\u0337\u0322a\u0336l\u0335g\u0338o\u0334",
    "nul": "before\x00after",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for the module; each test scripts its own replies and counts its own chats."""
    with ReplayServer() as replay:
        ws = Workspace(tmp_path_factory.mktemp("text"), replay.url, log_level="INFO")
        running = start_http(ws, replay)
        try:
            yield running
        finally:
            stop(running)


def chat_ids(server: HttpServer) -> set[str]:
    with server.client() as http:
        listed = http.get("/v1/qodeassist/chats")
        assert listed.status_code == 200, listed.text
        return {chat["chatId"] for chat in listed.json()}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_first_message_in_any_script_starts_one_chat(
    server: HttpServer, name: str, stream: bool
) -> None:
    text = TEXTS[name]
    server.replay.script("/v1/messages", [HELLO])
    before, calls = chat_ids(server), len(server.replay.requests)
    client = client_of(server)
    raw = client.chat.completions.with_raw_response.create(
        model=CHAT_AGENT, messages=[{"role": "user", "content": text}], stream=stream
    )
    header = raw.headers["x-qodeassist-chat-id"]
    assert header.isascii()
    chat_id = unquote(header)
    if stream:
        answer = "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
    else:
        parsed = raw.parse()
        answer = parsed.choices[0].message.content or ""
        assert parsed.model_extra["qodeassist"]["chatId"] == chat_id  # type: ignore[index]
    assert answer == "Hello"
    assert chat_ids(server) - before == {chat_id}  # one chat, no orphans
    assert len(server.replay.requests) == calls + 1  # the provider was asked once
    sent = server.replay.requests[-1].json["messages"][-1]
    assert text in str(sent["content"]) or text in [b.get("text") for b in sent["content"]]
    with server.client() as http:  # the id from the header opens the chat
        stored = http.get(f"/v1/qodeassist/chats/{quote(chat_id, safe='')}")
        assert stored.status_code == 200, stored.text
        assert stored.json()["chatId"] == chat_id


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_ids_and_names_in_any_script_are_clean_refusals(server: HttpServer, name: str) -> None:
    odd = TEXTS[name]
    path = quote(odd, safe="")
    calls = len(server.replay.requests)
    with server.client() as http:
        answers = [
            http.get(f"/v1/qodeassist/chats/{path}"),
            http.delete(f"/v1/qodeassist/chats/{path}"),
            http.post(f"/v1/qodeassist/edits/{path}", json={"chatId": odd, "action": "apply"}),
            http.post(f"/v1/qodeassist/permissions/{path}", json={"answer": odd}),
            http.post(
                "/v1/chat/completions",
                json={"model": odd, "messages": [{"role": "user", "content": odd}]},
            ),
            http.post(
                "/v1/chat/completions",
                json={
                    "model": CHAT_AGENT,
                    "messages": [{"role": "user", "content": odd}],
                    "qodeassist": {"chatId": odd},
                },
            ),
            http.get(f"/v1/{path}"),
        ]
        for answer in answers:
            assert 400 <= answer.status_code < 500, (answer.request.url, answer.text)
            error = answer.json()["error"]
            assert error["message"] and error["type"] and error["code"], answer.text
        cancel = http.post(f"/v1/qodeassist/chats/{path}/cancel")
        assert cancel.status_code in (200, 404), cancel.text
        assert http.get("/health").status_code == 200  # still serving
    assert len(server.replay.requests) == calls


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_headers_in_any_script_are_refused_not_crashed(server: HttpServer, name: str) -> None:
    raw = TEXTS[name].encode()
    if b"\0" in raw:  # no client sends it; the HTTP parser refuses it before any route
        for header in (b"Authorization: Bearer ", b"Host: ", b"Origin: http://"):
            assert send_raw(server, b"GET /health HTTP/1.1\r\n" + header + raw + b"\r\n")
        assert client_of(server).models.list().data  # still serving
        return
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = http.get("/health", headers={"Authorization": b"Bearer " + raw})
        assert token.status_code == 401
        assert token.json()["error"]["type"] == "authentication_error"
        auth = {"Authorization": f"Bearer {server.token}"}
        host = http.get("/health", headers={**auth, "Host": raw})
        assert host.status_code == 403 and host.json()["error"]["code"] == "forbidden"
        origin = http.get("/health", headers={**auth, "Origin": b"http://" + raw})
        assert origin.status_code == 403 and origin.json()["error"]["message"]


def test_an_old_chat_with_a_non_ascii_id_answers_with_a_safe_header(
    workspace: Workspace, replay: ReplayServer
) -> None:
    """History files named before ids were ASCII-only still continue, header and all."""
    old_id = "Привет_日本_😀_2026-01-01_10-00"
    replay.script("/v1/messages", [HELLO, HELLO])
    server = start_http(workspace, replay)
    try:
        first = client_of(server).chat.completions.create(
            model=CHAT_AGENT, messages=[{"role": "user", "content": "seed"}]
        )
        seeded = first.model_extra["qodeassist"]["chatId"]  # type: ignore[index]
        files = list(workspace.root.rglob(f"{seeded}.json"))
        assert len(files) == 1, files
        files[0].rename(files[0].with_name(f"{old_id}.json"))
        raw = client_of(server).chat.completions.with_raw_response.create(
            model=CHAT_AGENT,
            messages=[{"role": "user", "content": "again"}],
            extra_body={"qodeassist": {"chatId": old_id}},
        )
        assert unquote(raw.headers["x-qodeassist-chat-id"]) == old_id
        assert raw.parse().choices[0].message.content == "Hello"
    finally:
        stop(server)


def send_raw(server: HttpServer, head: bytes) -> bool:
    """Send a request head as is; whether the answer is a 4xx."""
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        if b"\r\nHost:" not in head:
            head += b"Host: 127.0.0.1\r\n"
        sock.sendall(head + b"Connection: close\r\n\r\n")
        reply = sock.recv(4096)
    return reply.startswith(b"HTTP/1.1 4")


def test_a_nul_in_the_request_line_is_refused(server: HttpServer) -> None:
    assert send_raw(server, b"GET /v1/\x00 HTTP/1.1\r\n")
    assert client_of(server).models.list().data  # still serving


def test_the_openai_client_reads_a_refusal_in_any_script(server: HttpServer) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client_of(server).chat.completions.create(
            model=TEXTS["cjk"], messages=[{"role": "user", "content": TEXTS["rtl"]}]
        )
    assert TEXTS["cjk"] in caught.value.message
