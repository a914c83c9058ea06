"""The loopback replay server: framing, timing, scripting, recording and disconnect detection."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time

import httpx
import pytest

from tests.support.replay_server import (
    FIXTURES,
    MODEL_LISTS,
    RecordedRequest,
    ReplayServer,
    Reply,
    fixture_bytes,
    split_body,
)


@pytest.fixture
def server():
    with ReplayServer() as running:
        yield running
    assert running.open_connections == 0
    assert not running.errors, running.errors


@pytest.fixture
def client():
    with httpx.Client(timeout=5) as http:
        yield http


def raw_exchange(server: ReplayServer, request: bytes) -> bytes:
    """Send ``request`` on a plain socket and read until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


# --------------------------------------------------------------------------- lifecycle
def test_start_stop_leaves_no_thread_or_connection() -> None:
    before = {t.ident for t in threading.enumerate()}
    server = ReplayServer().start()
    assert server.url.startswith("http://127.0.0.1:") and server.port > 0
    server.script("/x", Reply(body=b"ok", content_type="text/plain"))
    assert httpx.post(server.url + "/x").text == "ok"
    server.stop()
    assert {t.ident for t in threading.enumerate()} <= before
    assert server.open_connections == 0 and server.connections_opened == 1
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/x", timeout=1)
    server.stop()  # idempotent


def test_url_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = ReplayServer().url


def test_missing_fixture_fails_when_scripting() -> None:
    with pytest.raises(FileNotFoundError, match=r"no/such\.sse"):
        Reply("no/such.sse")
    with pytest.raises(ValueError, match="fixture= or body="):
        Reply()
    with pytest.raises(ValueError, match="not both"):
        Reply("anthropic/stream_text_hello.sse", body=b"x")


# --------------------------------------------------------------------------- framing
@pytest.mark.parametrize(
    ("name", "media"),
    [
        ("anthropic/stream_text_hello.sse", "text/event-stream"),
        ("ollama/chat_stream_excerpt_sk.ndjson", "application/x-ndjson"),
        ("gemini/array_text_with_thoughts.json", "application/json"),
    ],
)
def test_fixture_streams_chunked_with_its_content_type(server, client, name, media) -> None:
    server.script("/stream", Reply(name, split="events"))
    response = client.post(server.url + "/stream", json={"stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == media
    assert response.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in response.headers
    assert response.content == fixture_bytes(name)


def test_chunk_framing_on_the_wire(server) -> None:
    server.script(
        "/s",
        Reply(body=b"data: a\n\ndata: b\n\n", content_type="text/event-stream", split="events"),
    )
    raw = raw_exchange(
        server, b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Transfer-Encoding: chunked" in head and b"Connection: close" in head
    assert body == b"9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n"


def test_pieces_arrive_separately_with_the_delay(server, client) -> None:
    name = "anthropic/stream_text_hello.sse"
    expected = split_body(fixture_bytes(name), "events", ".sse")
    assert len(expected) > 5
    server.script("/s", Reply(name, split="events", delay=0.03))
    arrivals: list[tuple[float, bytes]] = []
    with client.stream("POST", server.url + "/s") as response:
        for piece in response.iter_raw():
            arrivals.append((time.monotonic(), piece))
    assert b"".join(p for _, p in arrivals) == fixture_bytes(name)
    # Each read returns what has arrived; on a busy machine two pieces can land in one read,
    # but never in the middle of a piece.
    boundaries = set(itertools.accumulate(len(p) for p in expected))
    assert set(itertools.accumulate(len(p) for _, p in arrivals)) <= boundaries
    assert len(arrivals) >= len(expected) // 2
    assert arrivals[-1][0] - arrivals[0][0] >= 0.03 * (len(expected) - 1) * 0.9
    assert server.last.pieces_sent == len(expected) and server.last.finished.is_set()


def test_fixed_size_split_and_first_byte_delay(server, client) -> None:
    name = "openai_chat/stream_logprobs.sse"
    server.script("/s", Reply(name, split=7, first_byte_delay=0.2))
    started = time.monotonic()
    response = client.post(server.url + "/s")
    assert time.monotonic() - started >= 0.2
    assert response.content == fixture_bytes(name)
    assert server.last.pieces_sent == -(-len(fixture_bytes(name)) // 7)


@pytest.mark.parametrize(
    ("data", "split", "kind", "pieces"),
    [
        (
            b"data: a\r\n\r\ndata: b\r\n\r\n",
            "events",
            ".sse",
            [b"data: a\r\n\r\n", b"data: b\r\n\r\n"],
        ),
        (b"event: x\ndata: 1\n\ndata: 2", "events", ".sse", [b"event: x\ndata: 1\n\n", b"data: 2"]),
        (b'{"a":1}\n{"b":2}\n', "events", ".ndjson", [b'{"a":1}\n', b'{"b":2}\n']),
        (b'{"a":1}\n{"b":2}', "lines", ".ndjson", [b'{"a":1}\n', b'{"b":2}']),
        (b"abcdefg", 3, ".sse", [b"abc", b"def", b"g"]),
        (b"abc", None, ".sse", [b"abc"]),
        (b"", "events", ".sse", []),
    ],
)
def test_split_body(data, split, kind, pieces) -> None:
    assert split_body(data, split, kind) == pieces


def test_every_fixture_splits_back_to_its_bytes() -> None:
    for path in FIXTURES.rglob("*"):
        if path.is_file() and path.name != "SOURCES.md":
            data = path.read_bytes()
            for split in ("events", "lines", 7, None):
                assert b"".join(split_body(data, split, path.suffix)) == data, (path, split)


def test_error_status_with_headers_and_content_length(server, client) -> None:
    name = "anthropic/error_http_529_overloaded.json"
    server.script(
        "/v1/messages",
        Reply(name, status=529, headers={"x-should-retry": "true", "Retry-After": "3"}),
    )
    response = client.post(server.url + "/v1/messages", json={})
    assert response.status_code == 529 and response.reason_phrase == "Overloaded"
    assert response.headers["retry-after"] == "3" and response.headers["x-should-retry"] == "true"
    assert response.headers["content-length"] == str(len(fixture_bytes(name)))
    assert response.headers["content-type"].startswith("application/json")
    assert response.content == fixture_bytes(name)


def test_raw_body_and_json_reply(server, client) -> None:
    server.script("/a", Reply(body=b'{"x"', content_type="application/json", chunked=True))
    server.script("/b", Reply.json({"ok": True}, status=201))
    a = client.post(server.url + "/a")
    assert a.content == b'{"x"' and a.headers["transfer-encoding"] == "chunked"
    b = client.post(server.url + "/b")
    assert b.status_code == 201 and b.json() == {"ok": True}


# --------------------------------------------------------------------------- scripting
def test_each_request_pops_the_next_reply_in_order(server, client) -> None:
    server.script(
        "/v1/messages",
        ["anthropic/stream_thinking_then_tool_use.sse", "anthropic/stream_text_hello.sse"],
    )
    first = client.post(server.url + "/v1/messages", json={"n": 1})
    second = client.post(server.url + "/v1/messages", json={"n": 2})
    assert first.content == fixture_bytes("anthropic/stream_thinking_then_tool_use.sse")
    assert second.content == fixture_bytes("anthropic/stream_text_hello.sse")
    assert server.pending() == {"/v1/messages": 0}
    server.assert_all_served()
    third = client.post(server.url + "/v1/messages", json={"n": 3})
    assert third.status_code == 404 and "nothing scripted" in third.json()["error"]["message"]
    assert [r.json["n"] for r in server.unmatched] == [3]
    with pytest.raises(AssertionError, match="unmatched requests: POST /v1/messages"):
        server.assert_all_served()


def test_prefix_match_method_filter_repeat_and_persistent_routes(server, client) -> None:
    server.script("/v1beta/models/", Reply("gemini/sse_text.sse", repeat=2), method="POST")
    server.script(
        "/v1beta/models/special:streamGenerateContent", "gemini/sse_function_call_single_chunk.sse"
    )
    server.serve_model_lists("gemini/models_list.json")
    url = server.url + "/v1beta/models/"
    assert client.post(url + "special:streamGenerateContent").content == fixture_bytes(
        "gemini/sse_function_call_single_chunk.sse"
    )
    for _ in range(2):
        assert client.post(url + "gemini-2.0-flash:streamGenerateContent?alt=sse").content == (
            fixture_bytes("gemini/sse_text.sse")
        )
    for _ in range(3):  # persistent GET route
        assert client.get(server.url + "/v1beta/models").content == fixture_bytes(
            "gemini/models_list.json"
        )
    assert client.get(url + "x:streamGenerateContent").status_code == 404  # POST-only
    assert server.pending() == {
        "/v1beta/models/": 0,
        "/v1beta/models/special:streamGenerateContent": 0,
    }


def test_scripting_again_appends(server, client) -> None:
    server.script("/p", Reply(body=b"1", content_type="text/plain"))
    server.script("/p", [Reply(body=b"2", content_type="text/plain")])
    assert [client.post(server.url + "/p").text for _ in range(2)] == ["1", "2"]


@pytest.mark.parametrize("name", sorted(MODEL_LISTS))
def test_model_list_routes(server, client, name) -> None:
    server.serve_model_lists(name)
    _method, path = MODEL_LISTS[name]
    response = client.get(server.url + path, params={"limit": 1000})
    assert response.status_code == 200 and response.content == fixture_bytes(name)
    assert response.headers["content-type"].startswith("application/json")
    assert server.last.query == {"limit": ["1000"]}


# --------------------------------------------------------------------------- recording
def test_requests_are_recorded_exactly(server, client) -> None:
    server.script("/v1/chat/completions", ["openai_chat/stream_text_with_usage.sse"])
    body = {"model": "m", "messages": [{"role": "user", "content": "héllo"}], "stream": True}
    client.post(
        server.url + "/v1/chat/completions?api-version=1&x=a&x=b",
        json=body,
        headers={"Authorization": "Bearer planted-secret-123", "X-Custom": "v"},
    )
    [request] = server.requests
    assert isinstance(request, RecordedRequest)
    assert (request.index, request.method, request.path) == (0, "POST", "/v1/chat/completions")
    assert request.raw_query == "api-version=1&x=a&x=b"
    assert request.query == {"api-version": ["1"], "x": ["a", "b"]}
    assert request.headers["authorization"] == "Bearer planted-secret-123"
    assert request.headers["x-custom"] == "v"
    assert request.json == body
    assert json.loads(request.body) == body
    assert request.reply == Reply("openai_chat/stream_text_with_usage.sse")
    # The echo leaves credential headers out, so it can be grepped for leaked secrets.
    assert "planted-secret-123" not in request.echo and "héllo" in request.echo
    assert request.response_finished_at >= request.response_started_at >= request.received_at
    assert 0 < request.arrived_at <= request.received_at
    assert not request.disconnected.is_set() and request.disconnected_at is None


def test_echo_leaves_out_query_keys(server, client) -> None:
    server.script("/v1beta/models/", Reply(body=b"{}", content_type="application/json"))
    client.post(
        server.url + "/v1beta/models/m:streamGenerateContent?alt=sse&key=planted-secret-123",
        json={"contents": []},
        headers={"x-goog-api-key": "planted-secret-123"},
    )
    echo = server.last.echo
    assert "planted-secret-123" not in echo
    assert echo.startswith("POST /v1beta/models/m:streamGenerateContent?alt=sse&key=\n")
    assert server.last.query["key"] == ["planted-secret-123"]


def test_chunked_request_body_and_non_json_body(server, client) -> None:
    server.script("/up", Reply(body=b"ok", content_type="text/plain", repeat=2))

    def parts():
        yield b'{"a":'
        yield b"1}"

    client.post(server.url + "/up", content=parts())
    client.post(server.url + "/up", content=b"not json")
    first, second = server.requests
    assert first.headers["transfer-encoding"] == "chunked" and first.json == {"a": 1}
    assert second.body == b"not json" and second.json is None


def test_keep_alive_reuses_the_connection(server, client) -> None:
    server.script("/k", Reply(body=b"x", content_type="text/plain", repeat=3))
    for _ in range(3):
        client.post(server.url + "/k")
    assert len({r.connection_id for r in server.requests}) == 1
    assert server.connections_opened == 1


def test_wait_for_requests_times_out_with_a_clear_message(server) -> None:
    with pytest.raises(AssertionError, match="expected 1 requests, got 0"):
        server.wait_for_requests(1, timeout=0.05)


# --------------------------------------------------------------------------- disconnects
def test_hold_open_then_client_close_is_seen_within_100ms(server, client) -> None:
    name = "anthropic/stream_text_hello.sse"
    server.script("/v1/messages", Reply(name, split="events", hold_open=True))
    with client.stream("POST", server.url + "/v1/messages") as response:
        pieces = response.iter_raw()  # kept referenced: dropping it closes the connection
        received = b""
        while received != fixture_bytes(name):
            received += next(pieces)
        request = server.last
        assert request.wait_holding(2)
        assert not request.disconnected.is_set()
        time.sleep(0.1)
        assert not request.disconnected.is_set()  # held, not finished
        closed_at = time.monotonic()
    assert request.wait_disconnected(1)
    assert request.disconnected_at - closed_at < 0.1
    assert server.disconnected_at == request.disconnected_at
    assert not request.finished.is_set()


async def test_cancelling_an_async_stream_closes_the_connection(server) -> None:
    server.script(
        "/v1/chat/completions",
        Reply("openai_chat/stream_text_with_usage.sse", split="events", hold_open=True),
    )
    got_data = asyncio.Event()

    async def consume(http: httpx.AsyncClient) -> None:
        async with http.stream("POST", server.url + "/v1/chat/completions", json={}) as response:
            async for _ in response.aiter_raw():
                got_data.set()

    async with httpx.AsyncClient(timeout=5) as http:
        task = asyncio.create_task(consume(http))
        await asyncio.wait_for(got_data.wait(), 5)
        [request] = await server.wait_for_requests_async(1)
        assert await request.wait_holding_async(2)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await request.wait_disconnected_async(1)
    assert request.disconnected_at - cancelled_at < 0.1


def test_disconnect_during_a_slow_stream_stops_sending(server, client) -> None:
    server.script("/s", Reply("anthropic/stream_web_search_citations.sse", split=64, delay=0.01))
    with client.stream("POST", server.url + "/s") as response:
        next(response.iter_raw())
    request = server.last
    assert request.wait_disconnected(1)
    sent = request.pieces_sent
    time.sleep(0.05)
    assert (
        request.pieces_sent
        == sent
        < len(fixture_bytes("anthropic/stream_web_search_citations.sse")) // 64
    )


def test_truncated_reply_is_not_a_client_disconnect(server, client) -> None:
    server.script("/t", Reply("anthropic/stream_text_hello.sse", split=100, truncate=True))
    with pytest.raises(httpx.RemoteProtocolError):
        client.post(server.url + "/t")
    request = server.last
    assert not request.finished.is_set() and not request.disconnected.is_set()


def test_stop_while_holding_ends_the_client_stream(client) -> None:
    server = ReplayServer().start()
    server.script("/h", Reply(hold_open=True))
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with client.stream("POST", server.url + "/h") as response:
                response.read()
        except httpx.HTTPError as exc:
            errors.append(exc)

    reader = threading.Thread(target=hold)
    reader.start()
    assert server.wait_for_requests(1)[0].wait_holding(2)
    started = time.monotonic()
    server.stop()
    reader.join(5)
    assert time.monotonic() - started < 2
    assert len(errors) == 1 and isinstance(errors[0], httpx.RemoteProtocolError)
    assert not server.last.disconnected.is_set()  # the server, not the client, hung up
