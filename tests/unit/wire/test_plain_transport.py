"""PlainHTTPTransport against real HTTP/1.1 servers on 127.0.0.1.

Each test runs a tiny asyncio server that answers with exact bytes, so framing (chunked,
Content-Length, close-delimited, 1xx), keep-alive reuse, a server that drops idle
connections, cancellation, timeouts and cut-off bodies are all observed on real sockets.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from qodeassist_lsp.wire.client import WireClient
from qodeassist_lsp.wire.events import MessageStop, TextDelta
from qodeassist_lsp.wire.httpclient import make_http_client
from qodeassist_lsp.wire.plain_transport import PlainHTTPTransport
from qodeassist_lsp.wire.protocols import WireProtocol

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

SSE = (
    b'data: {"choices":[{"text":"Hel","index":0}]}\n\n'
    b'data: {"choices":[{"text":"lo","index":0,"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def chunked(*pieces: bytes) -> bytes:
    """Frame ``pieces`` with chunked transfer encoding, terminator included."""
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """Read one request (head and Content-Length body); None at end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head + await reader.readexactly(length)


class Server:
    """A loopback server whose connections are handled by ``handler``; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.closed = asyncio.Event()
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        finally:
            writer.close()
            self.closed.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/completions"


@asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[Server]:
    server = Server(handler)
    listener = await asyncio.start_server(server._serve, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()


def keep_alive(reply: bytes) -> Handler:
    """Answer every request on the connection with ``reply``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            writer.write(reply)
            await writer.drain()

    return handle


def answer_once(reply: bytes, *, then: str = "close") -> Handler:
    """Answer one request, then close the connection (or hold it silently open)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(reply)
        await writer.drain()
        if then == "hold":
            await reader.read(1)  # returns at EOF: the client closed its side

    return handle


@asynccontextmanager
async def plain(
    handler: Handler, **options: Any
) -> AsyncIterator[tuple[Server, httpx.AsyncClient]]:
    """A server running ``handler`` and an httpx client on a `PlainHTTPTransport`."""
    async with (
        serving(handler) as server,
        httpx.AsyncClient(transport=PlainHTTPTransport(), **options) as http,
    ):
        yield server, http


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


async def get_text(client: httpx.AsyncClient, url: str) -> str:
    async with client.stream("POST", url, content=b'{"prompt":"x"}') as response:
        return (await response.aread()).decode()


async def test_client_uses_it_for_plain_http_and_streams_a_completion() -> None:
    stream = keep_alive(STREAM_HEAD + chunked(SSE[:30], SSE[30:]))
    async with serving(stream) as server, make_http_client() as http:
        assert isinstance(http._transport_for_url(httpx.URL(server.url)), PlainHTTPTransport)
        assert not isinstance(
            http._transport_for_url(httpx.URL("https://api.example.com/")), PlainHTTPTransport
        )
        wire = WireClient(http, WireProtocol.OPENAI_CHAT)
        events = [e async for e in wire.stream(server.url, {}, {"prompt": "x"})]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"
    assert isinstance(events[-1], MessageStop)


async def test_a_stream_ending_in_the_buffer_or_after_a_pause_keeps_its_connection() -> None:
    late_end = asyncio.Event()

    async def end_later(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            if not late_end.is_set():
                writer.write(STREAM_HEAD + chunked(SSE)[:-5])  # all but the terminator
                await writer.drain()
                await asyncio.sleep(0.05)  # the end arrives after the parser has finished
                writer.write(b"0\r\n\r\n")
                late_end.set()
            else:
                writer.write(STREAM_HEAD + chunked(SSE))  # the end in the same packet
            await writer.drain()

    async with serving(end_later) as server, make_http_client() as http:
        wire = WireClient(http, WireProtocol.OPENAI_CHAT)
        for _ in range(3):
            events = [e async for e in wire.stream(server.url, {}, {"prompt": "x"})]
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"
    assert late_end.is_set() and server.connections == 1


async def test_an_http_proxy_in_the_environment_keeps_plain_http_on_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    async with make_http_client() as http:
        transport = http._transport_for_url(httpx.URL("http://127.0.0.1:1/"))
        assert not isinstance(transport, PlainHTTPTransport)


async def test_sequential_requests_share_one_keep_alive_connection() -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with plain(keep_alive(reply)) as (server, http):
        for _ in range(5):
            assert await get_text(http, server.url) == "ok"
    assert server.connections == 1


async def test_a_server_that_dropped_the_idle_connection_gets_a_fresh_one() -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with plain(answer_once(reply)) as (server, http):
        assert await get_text(http, server.url) == "ok"
        await server.closed.wait()
        assert await get_text(http, server.url) == "ok"
    assert server.connections == 2


async def test_a_reused_connection_closed_without_an_answer_is_retried_once_fresh() -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    async def one_then_hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(reply)
        await writer.drain()
        await read_request(reader)  # the second request on this connection gets no answer

    async with plain(one_then_hang_up) as (server, http):
        assert await get_text(http, server.url) == "ok"
        assert await get_text(http, server.url) == "ok"
    assert server.connections == 2


async def test_close_delimited_and_informational_responses() -> None:
    reply = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil eof"
    async with plain(answer_once(reply)) as (server, http):
        response = await http.post(server.url, content=b"{}")
    assert response.status_code == 200
    assert response.http_version == "HTTP/1.1"
    assert response.content == b"until eof"


async def test_content_encoding_is_decoded_by_httpx() -> None:
    body = gzip.compress(b'{"error":{"message":"nope"}}')
    head = b"HTTP/1.1 401 Unauthorized\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
    async with plain(keep_alive(head % len(body) + body)) as (server, http):
        response = await http.post(server.url, content=b"{}")
    assert response.status_code == 401
    assert response.reason_phrase == "Unauthorized"
    assert response.content == b'{"error":{"message":"nope"}}'


async def test_closing_a_response_early_closes_its_connection_upstream() -> None:
    async with plain(answer_once(STREAM_HEAD + b"5\r\nfirst\r\n", then="hold")) as (server, http):
        async with http.stream("POST", server.url, content=b"{}") as response:
            async for chunk in response.aiter_bytes():
                assert chunk == b"first"
                break
        await asyncio.wait_for(server.closed.wait(), 2)


async def test_cancelling_a_read_closes_the_connection_upstream() -> None:
    async with plain(answer_once(STREAM_HEAD, then="hold")) as (server, http):

        async def read_all() -> None:
            async with http.stream("POST", server.url, content=b"{}") as response:
                await response.aread()

        task = asyncio.create_task(read_all())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.closed.wait(), 2)


async def test_a_body_cut_off_midway_is_a_protocol_error() -> None:
    async with plain(answer_once(STREAM_HEAD + b"5\r\nfirst\r\n")) as (server, http):
        with pytest.raises(httpx.RemoteProtocolError):
            await get_text(http, server.url)


async def test_a_fresh_connection_closed_without_an_answer_is_a_protocol_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async with plain(hang_up) as (server, http):
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            await get_text(http, server.url)


async def test_silence_past_the_read_timeout_is_a_read_timeout() -> None:
    hold = answer_once(b"", then="hold")
    async with plain(hold, timeout=httpx.Timeout(5.0, read=0.1)) as (server, http):
        with pytest.raises(httpx.ReadTimeout):
            await get_text(http, server.url)


async def test_nothing_listening_is_a_connect_error() -> None:
    listener = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    listener.close()
    await listener.wait_closed()
    async with httpx.AsyncClient(transport=PlainHTTPTransport()) as http:
        with pytest.raises(httpx.ConnectError):
            await get_text(http, f"http://127.0.0.1:{port}/")


async def test_https_is_refused_and_a_closed_transport_connects_no_more() -> None:
    transport = PlainHTTPTransport()
    async with httpx.AsyncClient(transport=transport) as http:
        with pytest.raises(httpx.UnsupportedProtocol):
            await http.get("https://127.0.0.1:1/")
    with pytest.raises(httpx.ConnectError, match="closed"):
        await transport.handle_async_request(httpx.Request("GET", "http://127.0.0.1:1/"))


async def test_a_large_body_is_read_whole_with_the_socket_paused_in_between() -> None:
    body = bytes(range(256)) * 8192  # 2 MiB: reading pauses at 256 KiB unread
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    async with plain(keep_alive(reply)) as (server, http):
        async with http.stream("POST", server.url, content=b"{}") as response:
            received = bytearray()
            async for chunk in response.aiter_raw():
                received += chunk
                await asyncio.sleep(0)  # a slow reader
        assert bytes(received) == body
        assert (await http.post(server.url, content=b"{}")).content == body  # reused
    assert server.connections == 1


async def test_invalid_responses_and_bytes_nobody_asked_for() -> None:
    async with plain(answer_once(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n")) as (
        server,
        http,
    ):
        with pytest.raises(httpx.RemoteProtocolError, match=r"not valid HTTP/1\.1"):
            await get_text(http, server.url)

    async def then_junk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(b"junk")  # after the response, on the idle connection

    async with plain(then_junk) as (server, http):
        assert await get_text(http, server.url) == "ok"
        await asyncio.sleep(0.2)
        assert await get_text(http, server.url) == "ok"  # on a fresh connection
    assert server.connections == 2


async def test_header_injection_is_refused_before_anything_is_sent() -> None:
    async with plain(keep_alive(b"HTTP/1.1 204 No Content\r\n\r\n")) as (server, http):
        with pytest.raises(httpx.LocalProtocolError):
            await http.post(server.url, headers={"X-Key": "a\r\nEvil: 1"}, content=b"{}")
        assert (await http.post(server.url, content=b"{}")).status_code == 204
        assert (await http.head(server.url)).status_code == 204
    assert server.connections == 1


async def test_a_head_response_is_its_head_alone_and_keeps_the_connection() -> None:
    # A Content-Length on a HEAD response describes the body a GET would get: none follows.
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
    async with plain(keep_alive(head)) as (server, http):
        for _ in range(2):
            response = await asyncio.wait_for(http.head(server.url), 5)
            assert response.status_code == 200 and response.content == b""
    assert server.connections == 1


async def test_the_request_head_carries_host_length_and_the_given_headers() -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_request(reader)
        assert request is not None
        seen.append(request)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    async with serving(record) as server, make_http_client() as http:
        wire = WireClient(http, WireProtocol.OPENAI_CHAT)
        events = [e async for e in wire.stream(server.url, {"X-Api-Key": "k"}, {"p": 1})]
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/completions HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}".encode() in lines
    assert b"Content-Length: 7" in lines and body == b'{"p":1}'
    assert b"X-Api-Key: k" in lines
    assert any(line.startswith(b"User-Agent: qodeassist-lsp/") for line in lines)
    assert events  # an empty 200 body is a cut stream, reported as an event
