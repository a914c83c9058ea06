"""`PlainHTTPTransport`: HTTP/1.1 to ``http://`` providers on asyncio protocols and httptools.

Local providers (the embedded model, Ollama, llama.cpp, LM Studio) are where a completion's
latency is decided by the client rather than the network, and there httpx's default stack
(httpcore's pool over anyio) costs about a millisecond of CPU per request, measured: most of
the server's own time per completion. This transport does the I/O directly: one
`asyncio.Protocol` per TCP connection, parsed as bytes arrive by httptools (llhttp, the parser
of Node.js, in C), and a small keep-alive pool per host. It serves httpx's client as a mounted
transport (same API, timeouts and exceptions), and `WireClient` directly (`open`), without
building httpx request and response objects for a provider call; measured, the streamed
request costs a third of what httpcore's did, and half of what this transport cost on h11.

Only plain HTTP/1.1 goes through here; ``https://`` stays on httpcore, which brings TLS,
HTTP/2 and proxies where the network dominates anyway. A reused keep-alive connection that
the server had already closed is retried once on a fresh connection, as browsers do; a
response that is not read to its end closes its connection, so a cancelled completion is
seen upstream as a closed socket at once. The response to a HEAD request is its head alone,
whatever its Content-Length says.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import cast

import httptools
import httpx

_MAX_IDLE_PER_HOST = 10
_PAUSE_AT = 256 * 1024  # unread body bytes at which the socket stops being read
_INVALID_FIELD = re.compile(rb"[\r\n\0]")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NO_BODY_STATUSES = (204, 304)
_SET_HERE = (b"host", b"content-length", b"transfer-encoding")  # the body is sent whole

RawHeaders = Sequence[tuple[bytes, bytes]]
"""Header fields as they go on the wire: (name, value) byte pairs."""


class _NoResponse(Exception):
    """The connection ended before any response byte: safe to retry on a fresh connection."""


def request_head(method: str, url: httpx.URL, headers: RawHeaders, length: int) -> bytes:
    """Build the request line and header block for ``headers`` plus Host and Content-Length.

    Names must be tokens and values free of CR, LF and NUL (no header injection); a Host or
    Content-Length in ``headers`` is replaced by the one ``url`` and ``length`` give.
    """
    lines = [b"%s %s HTTP/1.1\r\nHost: %s\r\n" % (method.encode(), url.raw_path, _host(url))]
    for name, value in headers:
        if not _TOKEN.fullmatch(name) or _INVALID_FIELD.search(value):
            raise httpx.LocalProtocolError(f"invalid header {name!r}")
        if name.lower() not in _SET_HERE:
            lines.append(b"%s: %s\r\n" % (name, value.strip()))
    if length or method not in ("GET", "DELETE"):
        lines.append(b"Content-Length: %d\r\n" % length)
    lines.append(b"\r\n")
    return b"".join(lines)


def _host(url: httpx.URL) -> bytes:
    host = url.raw_host
    if b":" in host:  # an IPv6 literal
        host = b"[%s]" % host
    return host if url.port is None else b"%s:%d" % (host, url.port)


class _Connection(asyncio.Protocol):
    """One TCP connection: its socket, and the response being parsed off it."""

    def __init__(self, key: tuple[str, int]) -> None:
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.idle_since = 0.0
        self.lost = False
        self.head_only = False
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._begin()

    def _begin(self) -> None:
        """Forget the last response: nothing received, nothing parsed."""
        self.received = False  # any byte since the request was sent
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = False
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.complete = False
        self.keep_alive = False
        self.failure: str | None = None
        self._informational = False
        self._framed = False  # the body has a length or is chunked (else it ends at EOF)

    def expect_response(self, *, head_only: bool = False) -> None:
        """Parse what arrives next as the response to a request about to be sent."""
        self._begin()
        self.head_only = head_only
        self._parser = httptools.HttpResponseParser(self)

    def usable(self, now: float, expiry: float) -> bool:
        """Whether this idle connection may carry another request."""
        transport = self.transport
        return (
            now - self.idle_since < expiry
            and not self.lost
            and transport is not None
            and not transport.is_closing()
        )

    def close(self) -> None:
        """Close the socket (a FIN once buffered bytes are flushed)."""
        self._parser = None
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------------ asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport."""
        # A stream transport (uvloop's are not subclasses of asyncio's, so no isinstance).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        """Parse ``data`` at once; body pieces queue up for the reader."""
        self.received = True
        parser = self._parser
        if parser is None or self.complete:  # bytes nobody asked for: the connection is spent
            self.keep_alive = False
            self.close()
        else:
            try:
                parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                self.failure = "the server switched protocols"
            except httptools.HttpParserError as exc:
                self.failure = f"the server's response is not valid HTTP/1.1 ({exc})"
            if self.failure is not None:
                self.close()
            elif self.buffered > _PAUSE_AT and self.transport is not None:
                self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        """Close our side too (no half-open connections)."""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """End the response: at EOF when its body runs to EOF, else cut off."""
        self.lost = True
        if self.head_done and not self.complete and not self._framed and self.failure is None:
            self.complete = True
            self.keep_alive = False
        self._wake()
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def pause_writing(self) -> None:
        """Make senders wait for `resume_writing`: the socket buffer is full."""
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        """Let senders go on: the socket buffer has room again."""
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # ---------------------------------------------------------------- httptools callbacks
    def on_status(self, status: bytes) -> None:
        """Collect the reason phrase (it may arrive in pieces)."""
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect one header field."""
        self.headers.append((name, value))
        lowered = name.lower()
        if lowered == b"content-length" or (
            lowered == b"transfer-encoding" and b"chunked" in value.lower()
        ):
            self._framed = True

    def on_headers_complete(self) -> None:
        """Take the finished head (an informational 1xx one is skipped: the real one follows)."""
        assert self._parser is not None
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            self._informational = True
            self.reason = b""
            self.headers = []
            self._framed = False
            return
        self.status = status
        self.head_done = True
        if status in _NO_BODY_STATUSES:
            self._framed = True
        if self.head_only:  # llhttp would wait for the body a HEAD never gets
            self.keep_alive = self._parser.should_keep_alive()
            self.complete = True

    def on_body(self, body: bytes) -> None:
        """Queue a piece of the body."""
        if not self.complete:
            self.chunks.append(body)
            self.buffered += len(body)

    def on_message_complete(self) -> None:
        """Mark the response ended (unless it was an informational one)."""
        if self._informational:
            self._informational = False
            return
        if not self.complete:
            assert self._parser is not None
            self.keep_alive = self._parser.should_keep_alive()  # reset once this returns
            self.complete = True

    # --------------------------------------------------------------------------- reading
    def take(self) -> bytes:
        """All body bytes queued so far, as one piece."""
        chunks = self.chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        if self.buffered > _PAUSE_AT and self.transport is not None and not self.lost:
            self.transport.resume_reading()
        self.buffered = 0
        return data

    async def wait(self, limit: float | None) -> None:
        """Wait until more arrives, the connection ends, or ``limit`` s pass (TimeoutError)."""
        if self.lost or self.failure is not None:
            return
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            if limit is None:  # the caller bounds the read itself: no second timer per read
                await waiter
            else:
                async with asyncio.timeout(limit):
                    await waiter
        finally:
            self._waiter = None

    async def drained(self, limit: float | None) -> None:
        """Wait until the socket takes more (only while it is full)."""
        if self._drained is not None:
            async with asyncio.timeout(limit):
                await self._drained

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class PlainResponse:
    """A response whose body is still streaming off its connection."""

    def __init__(
        self,
        connection: _Connection,
        body: PlainResponseBody,
        request: httpx.Request | None,
    ) -> None:
        self.status_code = connection.status
        self.reason_phrase = bytes(connection.reason)
        self.raw_headers = connection.headers
        self.stream = body
        self.encoded = any(name.lower() == b"content-encoding" for name, _ in self.raw_headers)
        """Whether the body has a content coding (httpx decodes it: see `as_httpx`)."""
        self._request = request
        self._headers: httpx.Headers | None = None

    @property
    def headers(self) -> httpx.Headers:
        """The header fields (built on first use)."""
        if self._headers is None:
            self._headers = httpx.Headers(self.raw_headers)
        return self._headers

    @property
    def is_success(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status_code < 300

    def as_httpx(self) -> httpx.Response:
        """Return the same response as an ``httpx.Response`` (its body is this stream)."""
        return httpx.Response(
            self.status_code,
            request=self._request,
            headers=self.raw_headers,
            stream=self.stream,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": self.reason_phrase},
        )

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """Iterate the body bytes, decoded if they carry a content coding."""
        return self.as_httpx().aiter_bytes() if self.encoded else aiter(self.stream)

    async def aread(self) -> bytes:
        """Read the whole body, decoded."""
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        """Give the connection back (or close it if the body was not read to its end)."""
        await self.stream.aclose()


class PlainHTTPTransport(httpx.AsyncBaseTransport):
    """Plain HTTP/1.1 for httpx and `WireClient`, with per-host keep-alive."""

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
        body = await request.aread()
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        response = await self.open(
            request.method, request.url, request.headers.raw, body, timeouts, request=request
        )
        return response.as_httpx()

    async def open(
        self,
        method: str,
        url: httpx.URL,
        headers: RawHeaders,
        body: bytes | None,
        timeouts: Mapping[str, float | None],
        *,
        request: httpx.Request | None = None,
    ) -> PlainResponse:
        """Send a request and return its response once the head has arrived.

        ``timeouts`` holds httpx's "connect", "write" and "read" limits in seconds (None or
        absent: no limit). Failures raise httpx's exceptions.
        """
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"PlainHTTPTransport serves http:// only, not {url.scheme}://", request=request
            )
        if self._closed:
            raise httpx.ConnectError("the HTTP client is closed", request=request)
        data = request_head(method, url, headers, len(body or b"")) + (body or b"")
        key = (url.host, url.port or 80)
        read = timeouts.get("read")
        while True:
            connection = self._take_idle(key)
            reused = connection is not None
            if connection is None:
                connection = await self._connect(key, request, timeouts.get("connect"))
            try:
                connection.expect_response(head_only=method == "HEAD")
                await _send(connection, data, timeouts.get("write"), request)
                await _receive_head(connection, read, request)
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
            return PlainResponse(
                connection, PlainResponseBody(self, connection, request, read), request
            )

    async def aclose(self) -> None:
        """Close every idle connection; responses still streaming close on their own."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def release(self, connection: _Connection) -> None:
        """Return ``connection`` to the pool after a fully read response, else close it."""
        idle = self._idle.setdefault(connection.key, [])
        reusable = connection.complete and connection.keep_alive and not self._closed
        if not reusable or connection.failure is not None or len(idle) >= self._max_idle:
            connection.close()
            return
        connection._parser = None  # bytes arriving while idle end the connection
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
        self, key: tuple[str, int], request: httpx.Request | None, limit: float | None
    ) -> _Connection:
        host, port = key
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(limit):
                _, connection = await loop.create_connection(lambda: _Connection(key), host, port)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout("connection timed out", request=request) from exc
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return connection


async def _send(
    connection: _Connection, data: bytes, limit: float | None, request: httpx.Request | None
) -> None:
    transport = connection.transport
    if connection.lost or transport is None or transport.is_closing():
        raise _NoResponse("the connection is closed")
    transport.write(data)
    # A request the socket took whole needs no wait (nor a timer); a lost connection then
    # shows as the end of stream when the head is read, and is retried there.
    try:
        await connection.drained(limit)
    except TimeoutError as exc:
        raise httpx.WriteTimeout("the request could not be sent in time", request=request) from exc


async def _receive_head(
    connection: _Connection, limit: float | None, request: httpx.Request | None
) -> None:
    while not connection.head_done:
        if connection.failure is not None:
            raise httpx.RemoteProtocolError(connection.failure, request=request)
        if connection.lost:
            if not connection.received:
                raise _NoResponse("end of stream")
            raise httpx.RemoteProtocolError(
                "the server closed the connection in the middle of the response head",
                request=request,
            )
        try:
            await connection.wait(limit)
        except TimeoutError as exc:
            raise httpx.ReadTimeout("no data arrived in time", request=request) from exc


class PlainResponseBody(httpx.AsyncByteStream):
    """The body of one response, read from its connection as the caller iterates."""

    def __init__(
        self,
        transport: PlainHTTPTransport,
        connection: _Connection,
        request: httpx.Request | None,
        timeout: float | None,
    ) -> None:
        self._transport = transport
        self._connection: _Connection | None = connection
        self._request = request
        self._timeout = timeout

    @property
    def ready(self) -> bool:
        """Whether the next step of the iteration needs no waiting (bytes or the end are here)."""
        connection = self._connection
        return connection is None or bool(connection.chunks) or connection.complete

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """Yield body bytes as they arrive (content decoding is httpx's job)."""
        connection = self._connection
        if connection is None:
            return
        while True:
            if connection.chunks:
                yield connection.take()
            elif connection.complete:
                return
            elif connection.failure is not None:
                raise httpx.RemoteProtocolError(connection.failure, request=self._request)
            elif connection.lost:
                raise httpx.RemoteProtocolError(
                    "the server closed the connection in the middle of the response",
                    request=self._request,
                )
            else:
                try:
                    await connection.wait(self._timeout)
                except TimeoutError as exc:
                    raise httpx.ReadTimeout(
                        "no data arrived in time", request=self._request
                    ) from exc

    def finish_buffered(self, limit: int) -> bool:
        """Skip what is left of the body if it has all arrived already; return whether it had.

        Up to ``limit`` bytes are skipped. False when more must be awaited or the rest is
        longer; the caller then drains the rest by reading it.
        """
        connection = self._connection
        if connection is None or not connection.complete or connection.buffered > limit:
            return False
        connection.take()
        return True

    async def aclose(self) -> None:
        """Give the connection back for reuse, or close it if the body was not read out."""
        connection, self._connection = self._connection, None
        if connection is not None:
            if connection.chunks:  # not read to its end
                connection.close()
            else:
                self._transport.release(connection)


def raw_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """``headers`` as wire byte pairs (values in UTF-8, as httpx would send them)."""
    try:
        return [(name.encode("ascii"), value.encode()) for name, value in headers]
    except UnicodeEncodeError as exc:
        raise httpx.LocalProtocolError(f"a header name is not ASCII: {exc.object!r}") from exc
