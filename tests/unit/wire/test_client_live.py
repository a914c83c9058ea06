"""WireClient against a real HTTP/1.1 server on 127.0.0.1 that serves recorded bytes chunked.

Shows that framing survives real sockets and that cancelling a stream closes the upstream
connection promptly (the server sees EOF on its socket).
"""

import asyncio
import random
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from qodeassist_lsp.wire.client import WireClient, make_http_client
from qodeassist_lsp.wire.events import MessageStop, TextDelta
from qodeassist_lsp.wire.protocols import WireProtocol


@dataclass
class ReplayServer:
    """Serves ``body`` in random chunks, then (if ``hold``) keeps the connection open."""

    body: bytes
    hold: bool = False
    port: int = 0
    disconnected: asyncio.Future[float] | None = None
    requests: list[bytes] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            self.requests.append(await reader.readexactly(length))
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            rng, i = random.Random(5), 0
            while i < len(self.body):
                piece = self.body[i : i + rng.randint(1, 512)]
                i += len(piece)
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                await asyncio.sleep(0)
            if self.hold:
                # Stay silent until the client goes away; EOF on the socket means it closed.
                await reader.read(1)
                if self.disconnected is not None and not self.disconnected.done():
                    self.disconnected.set_result(loop.time())
                return
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            writer.close()


@asynccontextmanager
async def serving(server: ReplayServer) -> AsyncIterator[str]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        listener.close()
        await listener.wait_closed()


async def test_recorded_stream_over_a_real_socket(kit) -> None:
    data = kit.bytes("openai_chat/stream_text_with_usage.sse")
    server = ReplayServer(data)
    async with serving(server) as base, make_http_client() as http:
        client = WireClient(http, WireProtocol.OPENAI_CHAT)
        events = [
            e async for b in client.batches(f"{base}/v1/chat/completions", {}, {"n": 1}) for e in b
        ]
    assert events == kit.run(kit.maker_for("openai_chat"), [data])
    assert events[-1] == MessageStop("end_turn", "stop")
    assert server.requests == [b'{"n":1}']


async def test_cancelling_the_stream_closes_the_upstream_connection_quickly(kit) -> None:
    data = kit.bytes("anthropic/stream_web_search_citations.sse")
    # Serve everything up to the first text delta, then keep the connection open.
    partial = data[: data.index(b"event: content_block_stop", data.index(b'"text_delta"'))]
    loop = asyncio.get_running_loop()
    server = ReplayServer(partial, hold=True, disconnected=loop.create_future())
    first_text = asyncio.Event()

    async def consume(client: WireClient, url: str) -> None:
        async for batch in client.batches(url, {}, {"stream": True}):
            if any(isinstance(event, TextDelta) for event in batch):
                first_text.set()

    async with serving(server) as base, make_http_client() as http:
        client = WireClient(http, WireProtocol.ANTHROPIC)
        task = asyncio.create_task(consume(client, f"{base}/v1/messages"))
        await asyncio.wait_for(first_text.wait(), 5)
        cancelled_at = loop.time()
        task.cancel()
        closed_at = await asyncio.wait_for(server.disconnected, 1)
        with pytest.raises(asyncio.CancelledError):
            await task
    assert closed_at - cancelled_at < 0.1


SSE = (
    b'data: {"choices":[{"text":"Hel","index":0}]}\n\n'
    b'data: {"choices":[{"text":"lo","index":0,"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """Read one request (head and Content-Length body); None at end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    match = re.search(rb"(?i)content-length: *(\d+)", head)
    return head + await reader.readexactly(int(match.group(1)) if match else 0)


async def test_a_stream_ending_in_the_buffer_or_after_a_pause_keeps_its_connection() -> None:
    connections = 0
    late_end, hung_up = asyncio.Event(), asyncio.Event()

    async def end_later(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
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
        writer.close()
        await writer.wait_closed()
        hung_up.set()

    listener = await asyncio.start_server(end_later, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/v1/completions"
    try:
        async with make_http_client() as http:
            wire = WireClient(http, WireProtocol.OPENAI_CHAT)
            for _ in range(3):
                events = [e async for b in wire.batches(url, {}, {"prompt": "x"}) for e in b]
                assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"
        await asyncio.wait_for(hung_up.wait(), 5)  # the client's close reached the server
    finally:
        listener.close()
        await listener.wait_closed()
    assert late_end.is_set() and connections == 1


async def test_the_request_carries_host_length_user_agent_and_the_given_headers() -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await read_request(reader) or b"")
        writer.write(STREAM_HEAD + chunked(SSE))
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    listener = await asyncio.start_server(record, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with make_http_client() as http:
            wire = WireClient(http, WireProtocol.OPENAI_CHAT)
            url = f"http://127.0.0.1:{port}/v1/completions"
            events = [e async for b in wire.batches(url, {"X-Api-Key": "k"}, {"p": 1}) for e in b]
    finally:
        listener.close()
        await listener.wait_closed()
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = [line.lower() for line in head.split(b"\r\n")]
    assert lines[0] == b"post /v1/completions http/1.1"
    assert f"host: 127.0.0.1:{port}".encode() in lines
    assert b"content-length: 7" in lines and body == b'{"p":1}'
    assert b"x-api-key: k" in lines
    assert any(line.startswith(b"user-agent: qodeassist-lsp/") for line in lines)
    assert events[-1] == MessageStop("end_turn", "stop")
