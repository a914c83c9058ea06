"""`PlainHTTPTransport`: httpx requests to ``http://`` providers on asyncio streams and h11.

Local providers (the embedded model, Ollama, llama.cpp, LM Studio) are where a completion's
latency is decided by the client rather than the network, and there httpx's default stack
(httpcore's pool over anyio) costs about a millisecond of CPU per request, measured: most of
the server's own time per completion. This transport keeps httpx's API, timeouts and
exceptions, and does the I/O directly: asyncio streams, h11 (the HTTP/1.1 state machine
httpcore itself uses) for framing, and a small keep-alive pool per host. Measured against the
same loopback server, a streamed request costs about half of what it did.

Only plain HTTP/1.1 goes through here; ``https://`` stays on httpcore, which brings TLS,
HTTP/2 and proxies where the network dominates anyway. A reused keep-alive connection that
the server had already closed is retried once on a fresh connection, as browsers do; a
response that is not read to its end closes its connection, so a cancelled completion is
seen upstream as a closed socket at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import h11
import httpx

_READ_SIZE = 64 * 1024
_MAX_IDLE_PER_HOST = 10


class _NoResponse(Exception):
    """The connection ended before any response byte: safe to retry on a fresh connection."""


@dataclass(eq=False, slots=True)
class _Connection:
    """One TCP connection and its HTTP/1.1 state."""

    key: tuple[str, int]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    state: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    idle_since: float = 0.0

    def usable(self, now: float, expiry: float) -> bool:
        """Whether this idle connection may carry another request."""
        return (
            now - self.idle_since < expiry
            and not self.reader.at_eof()
            and not self.writer.transport.is_closing()
        )

    def close(self) -> None:
        """Close the socket (a FIN once buffered bytes are flushed)."""
        self.writer.close()

    async def receive(self, request: httpx.Request, limit: float | None) -> bytes:
        """Read what has arrived within ``limit`` s, failures raised as httpx exceptions."""
        try:
            if limit is None:  # the caller bounds the read itself: no second timer per read
                return await self.reader.read(_READ_SIZE)
            async with asyncio.timeout(limit):
                return await self.reader.read(_READ_SIZE)
        except TimeoutError as exc:
            raise httpx.ReadTimeout("no data arrived in time", request=request) from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc

    def next_event(self, request: httpx.Request) -> Any:
        """Return the next h11 event, raising h11's protocol errors as httpx's."""
        try:
            return self.state.next_event()
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc


class PlainHTTPTransport(httpx.AsyncBaseTransport):
    """Plain HTTP/1.1 for httpx on asyncio streams, with per-host keep-alive."""

    def __init__(
        self,
        *,
        keepalive_expiry: float = 30.0,
        max_idle_per_host: int = _MAX_IDLE_PER_HOST,
    ) -> None:
        """Keep up to ``max_idle_per_host`` idle connections for ``keepalive_expiry`` s."""
        self._expiry = keepalive_expiry
        self._max_idle = max_idle_per_host
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and return the response with its body still streaming."""
        if request.url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"PlainHTTPTransport serves http:// only, not {request.url.scheme}://",
                request=request,
            )
        if self._closed:
            raise httpx.ConnectError("the HTTP client is closed", request=request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        body = await request.aread()
        key = (request.url.host, request.url.port or 80)
        while True:
            connection = self._take_idle(key)
            reused = connection is not None
            if connection is None:
                connection = await self._connect(key, request, timeouts.get("connect"))
            try:
                await self._send(connection, request, body, timeouts.get("write"))
                head = await self._receive_head(connection, request, timeouts.get("read"))
            except _NoResponse as exc:
                connection.close()
                if reused:
                    continue  # the server had closed the idle connection; try a fresh one
                raise httpx.RemoteProtocolError(
                    "the server disconnected without sending a response", request=request
                ) from exc
            except BaseException:
                connection.close()
                raise
            return httpx.Response(
                head.status_code,
                request=request,
                headers=head.headers.raw_items(),
                stream=PlainResponseBody(self, connection, request, timeouts.get("read")),
                extensions={"http_version": b"HTTP/1.1", "reason_phrase": bytes(head.reason)},
            )

    async def aclose(self) -> None:
        """Close every idle connection; responses still streaming close on their own."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def release(self, connection: _Connection, *, complete: bool) -> None:
        """Return ``connection`` to the pool after a fully read response, else close it."""
        state = connection.state
        reusable = (
            complete
            and not self._closed
            and state.our_state is h11.DONE
            and state.their_state is h11.DONE
        )
        idle = self._idle.setdefault(connection.key, [])
        if not reusable or len(idle) >= self._max_idle:
            connection.close()
            return
        state.start_next_cycle()
        connection.idle_since = time.monotonic()
        idle.append(connection)

    def _take_idle(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()  # the most recently used is the warmest
            if connection.usable(now, self._expiry):
                return connection
            connection.close()
        return None

    async def _connect(
        self, key: tuple[str, int], request: httpx.Request, limit: float | None
    ) -> _Connection:
        host, port = key
        try:
            async with asyncio.timeout(limit):
                reader, writer = await asyncio.open_connection(host, port, limit=_READ_SIZE)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout("connection timed out", request=request) from exc
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return _Connection(key, reader, writer)

    async def _send(
        self,
        connection: _Connection,
        request: httpx.Request,
        body: bytes,
        limit: float | None,
    ) -> None:
        state = connection.state
        try:
            data = state.send(
                h11.Request(
                    method=request.method,
                    target=request.url.raw_path,
                    headers=list(request.headers.raw),
                )
            )
            if body:
                data += state.send(h11.Data(data=body)) or b""
            data += state.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc), request=request) from exc
        writer = connection.writer
        try:
            writer.write(data or b"")
            # A request the socket took whole needs no wait (nor a timer); a lost connection
            # then shows as the end of stream when the head is read, and is retried there.
            if writer.transport.get_write_buffer_size():
                async with asyncio.timeout(limit):
                    await writer.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout(
                "the request could not be sent in time", request=request
            ) from exc
        except OSError as exc:
            raise _NoResponse(str(exc)) from exc

    async def _receive_head(
        self, connection: _Connection, request: httpx.Request, limit: float | None
    ) -> h11.Response:
        state = connection.state
        started = False
        while True:
            event = connection.next_event(request)
            if event is h11.NEED_DATA:
                try:
                    data = await connection.receive(request, limit)
                except httpx.ReadError as exc:
                    if started:
                        raise
                    raise _NoResponse(str(exc)) from exc
                if not data and not started:
                    raise _NoResponse("end of stream")
                started = started or bool(data)
                state.receive_data(data)
            elif isinstance(event, h11.Response):
                return event
            elif isinstance(event, h11.ConnectionClosed):
                raise _NoResponse("connection closed")
            # An informational (1xx) response: the real one follows.


class PlainResponseBody(httpx.AsyncByteStream):
    """The body of one response, read from its connection as the caller iterates."""

    def __init__(
        self,
        transport: PlainHTTPTransport,
        connection: _Connection,
        request: httpx.Request,
        timeout: float | None,
    ) -> None:
        self._transport = transport
        self._connection: _Connection | None = connection
        self._request = request
        self._timeout = timeout
        self._complete = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """Yield body bytes as they arrive (content decoding is httpx's job)."""
        connection = self._connection
        if connection is None:
            return
        while True:
            event = connection.next_event(self._request)
            if event is h11.NEED_DATA:
                connection.state.receive_data(
                    await connection.receive(self._request, self._timeout)
                )
            elif isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._complete = True
                return
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError(
                    "the server closed the connection in the middle of the response",
                    request=self._request,
                )

    def finish_buffered(self, limit: int) -> bool:
        """Skip what is left of the body if it has all arrived already; return whether it had.

        Up to ``limit`` bytes are skipped. False when more must be awaited, the rest is longer
        or it cannot be parsed; the caller then drains the rest by reading it.
        """
        connection = self._connection
        if connection is None:
            return self._complete
        skipped = 0
        try:
            while skipped <= limit:
                event = connection.next_event(self._request)
                if isinstance(event, h11.Data):
                    skipped += len(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    self._complete = True
                    return True
                else:
                    return False
        except httpx.HTTPError:
            return False
        return False

    async def aclose(self) -> None:
        """Give the connection back for reuse, or close it if the body was not read out."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._transport.release(connection, complete=self._complete)
