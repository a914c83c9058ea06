"""A loopback LLM provider that replays recorded response bodies over real HTTP/1.1.

End-to-end tests point provider instances at `ReplayServer.url` and script what each request
gets back::

    with ReplayServer() as server:
        server.script("/v1/messages", ["anthropic/stream_thinking_then_tool_use.sse",
                                       Reply("anthropic/stream_text_hello.sse", split=7)])
        server.route("/v1/models", Reply("anthropic/models_list.json"))
        ...                                 # run the CLI or a Session against server.url
        second = server.requests[1].json    # the exact body the client sent

The server runs in a background thread with its own event loop, so a CLI subprocess and an
in-process asyncio test can both talk to it. Bodies are sent with real framing: chunked
transfer encoding (or ``Content-Length`` for error bodies), the recorded content type, an
optional split into pieces with a delay between them, and optionally held open without an
end so cancellation can be observed. Every request is recorded (method, path, query,
headers, raw and parsed body) together with when its connection closed, so a test can assert
that a cancel closed the upstream connection promptly.

A completion request that carries word healing's GBNF grammar (``root ::= "<word>" [^\x00]*``,
the bundled llama.cpp agents' ``ctx.healed_word``) gets that word first, as llama.cpp's
constrained sampling writes it: a scripted completion is what the model writes after the text
the user typed, healed or not.

Fixture names are relative to ``tests/fixtures/wire/`` (the recorded streams vendored in the
repository, see its ``SOURCES.md``), or to ``$QODEASSIST_WIRE_FIXTURES``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from tests.support.arrival_stamps import StampedSocket, StampingListener, kernel_stamps_supported

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(
    os.environ.get("QODEASSIST_WIRE_FIXTURES") or REPO_ROOT / "tests" / "fixtures" / "wire"
)

CONTENT_TYPES: dict[str, str] = {
    ".sse": "text/event-stream; charset=utf-8",
    ".ndjson": "application/x-ndjson",
    ".json": "application/json; charset=utf-8",
    ".json5": "application/json; charset=utf-8",
}

# Where each provider family serves its model list, and the recorded list for it.
MODEL_LISTS: dict[str, tuple[str, str]] = {
    "anthropic/models_list.json": ("GET", "/v1/models"),
    "openai_chat/models_list_openapi_example.json": ("GET", "/v1/models"),
    "gemini/models_list.json": ("GET", "/v1beta/models"),
    "mistral/models_list_example.json": ("GET", "/v1/models"),
    "ollama/tags_docs.json": ("GET", "/api/tags"),
}

Split = Literal["events", "lines"] | int | None

_MAX_HEAD = 64 * 1024
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def fixture_path(name: str) -> Path:
    """The file of fixture ``name`` (``"anthropic/stream_text_hello.sse"``)."""
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(
            f"missing wire fixture {path} (tests/fixtures/wire holds the recorded streams; "
            "QODEASSIST_WIRE_FIXTURES names another folder)"
        )
    return path


def fixture_bytes(name: str) -> bytes:
    """The recorded bytes of fixture ``name``."""
    return fixture_path(name).read_bytes()


def split_body(data: bytes, split: Split, kind: str = ".sse") -> list[bytes]:
    """Cut ``data`` into the pieces written one by one.

    ``None`` sends the body whole; an int cuts it into pieces of that many bytes; ``"lines"``
    cuts after every newline; ``"events"`` cuts after every SSE event (blank line) for
    ``.sse`` bodies and after every line otherwise (NDJSON objects, JSON array elements).
    Every piece is non-empty and the pieces always join back to ``data``.
    """
    if not data:
        return []
    if split is None:
        return [data]
    if isinstance(split, int):
        if split < 1:
            raise ValueError("split size must be positive")
        return [data[i : i + split] for i in range(0, len(data), split)]
    if split == "events" and kind == ".sse":
        cuts = [m.end() for m in _EVENT_END.finditer(data)]
    elif split in ("events", "lines"):
        cuts = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    else:
        raise ValueError(f"unknown split {split!r}")
    pieces, start = [], 0
    for cut in [*cuts, len(data)]:
        if cut > start:
            pieces.append(data[start:cut])
            start = cut
    return pieces


@dataclass(frozen=True)
class Reply:
    """One scripted response.

    ``fixture`` names a recorded body (its extension picks the content type); ``body`` gives
    raw bytes instead. ``split``/``delay`` shape the timing (``delay`` seconds before every
    piece after the first; ``first_byte_delay`` before the status line). ``hold_open`` sends
    the pieces and then keeps the connection open, unfinished, until the client goes away;
    ``truncate`` closes the socket without the terminating chunk. ``chunked`` defaults to
    chunked transfer for 2xx replies and ``Content-Length`` otherwise. ``repeat`` serves the
    same reply to that many consecutive requests (for client retries).
    """

    fixture: str | None = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    split: Split = None
    delay: float = 0.0
    first_byte_delay: float = 0.0
    hold_open: bool = False
    truncate: bool = False
    body: bytes | None = None
    content_type: str | None = None
    chunked: bool | None = None
    repeat: int = 1

    def __post_init__(self) -> None:
        if self.fixture is not None and self.body is not None:
            raise ValueError("a Reply takes fixture= or body=, not both")
        if self.fixture is None and self.body is None and not self.hold_open:
            raise ValueError("a Reply needs fixture= or body= (or hold_open=True)")
        if self.repeat < 1:
            raise ValueError("repeat must be at least 1")
        if self.fixture is not None:
            fixture_path(self.fixture)  # fail at scripting time, not mid-test

    @classmethod
    def json(cls, payload: object, status: int = 200, **kwargs: Any) -> Reply:
        """A compact JSON body."""
        data = json.dumps(payload, separators=(",", ":")).encode()
        return cls(body=data, status=status, content_type=CONTENT_TYPES[".json"], **kwargs)

    @property
    def kind(self) -> str:
        """The body's extension (``.sse``, ``.ndjson``, ``.json``), for splitting and typing."""
        if self.fixture is not None:
            return Path(self.fixture).suffix
        ctype = (self.content_type or "").split(";")[0].strip()
        return {
            "text/event-stream": ".sse",
            "application/x-ndjson": ".ndjson",
            "application/json": ".json",
        }.get(ctype, "")

    def data(self) -> bytes:
        """The body bytes."""
        if self.fixture is not None:
            return fixture_bytes(self.fixture)
        return self.body or b""

    def media_type(self) -> str:
        """The ``Content-Type`` header value."""
        if self.content_type is not None:
            return self.content_type
        return CONTENT_TYPES.get(self.kind, "application/octet-stream")

    def pieces(self) -> list[bytes]:
        """The body cut as `split` says."""
        return split_body(self.data(), self.split, self.kind)

    def is_chunked(self) -> bool:
        """Whether the body goes out with chunked transfer encoding."""
        if self.chunked is not None:
            return self.chunked
        return 200 <= self.status < 300 or self.hold_open


_HEALING_GRAMMAR = re.compile(r'root ::= ("(?:[^"\\]|\\.)*") \[\^\\x00\]\*')


def _with_healed_word(request: RecordedRequest, reply: Reply) -> Reply:
    """``reply`` led by the word a word-healing ``grammar`` makes the model write first."""
    if reply.status != 200 or reply.kind != ".sse" or not reply.data():
        return reply
    try:
        grammar = request.json.get("grammar") if isinstance(request.json, dict) else None
    except ValueError:
        return reply
    matched = _HEALING_GRAMMAR.fullmatch(grammar) if isinstance(grammar, str) else None
    if matched is None:
        return reply
    word = json.loads(matched.group(1))
    native = request.path.endswith(("/completion", "/infill"))  # llama.cpp's own stream
    chunk = (
        {"content": word, "stop": False} if native else {"choices": [{"index": 0, "text": word}]}
    )
    lead = f"data: {json.dumps(chunk)}\n\n".encode()
    return replace(reply, fixture=None, body=lead + reply.data())


def as_reply(reply: Reply | str) -> Reply:
    """Accept a fixture name where a `Reply` is expected."""
    return reply if isinstance(reply, Reply) else Reply(reply)


@dataclass(eq=False)
class RecordedRequest:
    """One request as the server received it, and what happened to its connection."""

    index: int
    method: str
    target: str
    path: str
    raw_query: str
    query: dict[str, list[str]]
    header_list: list[tuple[str, str]]
    body: bytes
    received_at: float
    """When the request had been read and parsed (time.monotonic)."""
    connection_id: int
    arrived_at: float = 0.0
    """When its first bytes reached the socket: where the provider's own time starts.

    The kernel's receive stamp on Linux (see `arrival_stamps`), else when they were read.
    """
    reply: Reply | None = None
    response_started_at: float | None = None
    response_finished_at: float | None = None
    disconnected_at: float | None = None
    pieces_sent: int = 0
    holding: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)

    @property
    def headers(self) -> dict[str, str]:
        """Headers by lower-cased name (the last value wins)."""
        return {name.lower(): value for name, value in self.header_list}

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or None when it is empty or not JSON."""
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def echo(self) -> str:
        """Everything the client sent, as text, minus the credentials (auth headers, ``key=``)."""
        target = _KEY_PARAM.sub(r"\1", self.target)
        lines = [f"{self.method} {target}"]
        lines += [f"{k}: {v}" for k, v in self.header_list if k.lower() not in SECRET_HEADERS]
        lines.append(self.body.decode("utf-8", "replace"))
        return "\n".join(lines)

    def wait_disconnected(self, timeout: float = 5.0) -> bool:
        """Block until the client closed this request's connection mid-response."""
        return self.disconnected.wait(timeout)

    async def wait_disconnected_async(self, within: float = 5.0) -> bool:
        """`wait_disconnected` for async tests (polls; never blocks the test's loop)."""
        return await _poll(self.disconnected, within)

    def wait_holding(self, timeout: float = 5.0) -> bool:
        """Block until a ``hold_open`` reply sent all its bytes and is waiting."""
        return self.holding.wait(timeout)

    async def wait_holding_async(self, within: float = 5.0) -> bool:
        """`wait_holding` for async tests."""
        return await _poll(self.holding, within)

    def wait_finished(self, timeout: float = 5.0) -> bool:
        """Block until the whole response was sent."""
        return self.finished.wait(timeout)


SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
_KEY_PARAM = re.compile(r"([?&]key=)[^&#]*")


async def _poll(event: threading.Event, within: float) -> bool:
    deadline = time.monotonic() + within
    while not event.is_set():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.002)
    return True


@dataclass
class _Route:
    method: str | None
    replies: list[Reply]
    persistent: bool = False
    served: int = 0


class _Connection:
    """One accepted socket: a reader task that buffers bytes and notices the peer leaving."""

    def __init__(
        self,
        ident: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        stamped: StampedSocket | None = None,
    ) -> None:
        self.ident = ident
        self.reader = reader
        self.writer = writer
        self.stamped = stamped
        """The socket with kernel arrival stamps (Linux), else None."""
        self.buffer = bytearray()
        self.data_at = 0.0
        self.arrived = asyncio.Event()
        self.closed = asyncio.Event()
        self.closed_at: float | None = None
        self.current: RecordedRequest | None = None
        self.pump = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                arrived = self.stamped.arrival(len(data)) if self.stamped is not None else None
                if not self.buffer:
                    self.data_at = arrived or time.monotonic()
                self.buffer += data
                self.arrived.set()
        except (ConnectionError, OSError):
            pass
        finally:
            self.mark_closed(by_client=True)

    def mark_closed(self, *, by_client: bool) -> None:
        """Note that the socket is gone; a client leaving mid-response marks the request."""
        if self.closed.is_set():
            return
        self.closed_at = time.monotonic()
        self.closed.set()
        self.arrived.set()
        request = self.current
        if by_client and request is not None and not request.finished.is_set():
            request.disconnected_at = self.closed_at
            request.disconnected.set()

    async def read_until(self, marker: bytes, limit: int) -> bytes | None:
        while True:
            index = self.buffer.find(marker)
            if index >= 0:
                end = index + len(marker)
                data = bytes(self.buffer[:end])
                del self.buffer[:end]
                return data
            if len(self.buffer) > limit or self.closed.is_set():
                return None
            self.arrived.clear()
            await self.arrived.wait()

    async def read_exactly(self, size: int) -> bytes | None:
        while len(self.buffer) < size:
            if self.closed.is_set():
                return None
            self.arrived.clear()
            await self.arrived.wait()
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def send(self, data: bytes) -> bool:
        if self.closed.is_set() or self.writer.is_closing():
            return False
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.mark_closed(by_client=True)
            return False
        return True

    def shut(self) -> None:
        """Start closing the socket now (idempotent); a waiting handler notices and ends."""
        self.mark_closed(by_client=False)
        if not self.writer.is_closing():
            self.writer.close()

    async def close(self) -> None:
        """Close the socket and stop reading."""
        self.shut()
        self.pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
            await self.writer.wait_closed()
        with contextlib.suppress(asyncio.CancelledError):
            await self.pump


class ReplayServer:
    """An HTTP/1.1 server on 127.0.0.1 that answers from scripted `Reply` objects.

    Use it as a context manager (or call `start` and `stop`). Thread-safe: scripting and the
    recorded requests may be used from any thread while the server runs.
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.requests: list[RecordedRequest] = []
        self.unmatched: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self._routes: dict[str, _Route] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._listener: StampingListener | None = None
        self._ready = threading.Event()
        self._connections: dict[int, _Connection] = {}
        self._handlers: set[asyncio.Task[None]] = set()
        self._next_connection = 0
        self.connections_opened = 0
        self.connections_closed = 0

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if not self.port:
            raise RuntimeError("the replay server is not running")
        return f"http://{self.host}:{self.port}"

    def start(self) -> ReplayServer:
        """Start the server thread and wait until it listens."""
        if self._thread is not None:
            raise RuntimeError("already started")
        self._thread = threading.Thread(target=self._run, name="replay-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the replay server did not start")
        if self.errors:
            raise RuntimeError("the replay server failed to start") from self.errors[0]
        return self

    def stop(self) -> None:
        """Close every connection and the listening socket, then join the thread."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopping.set)
        thread.join(10)
        if thread.is_alive():
            raise RuntimeError("the replay server thread did not stop")
        self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # reported through self.errors
            self.errors.append(exc)
        finally:
            self._ready.set()
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _main(self) -> None:
        self._stopping = asyncio.Event()
        if kernel_stamps_supported():
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only for such sockets.
            listener = StampingListener(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            self._listener = listener
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, 0))
            listener.listen(128)
            server = await asyncio.start_server(self._accept, sock=listener, limit=_MAX_HEAD)
        else:
            server = await asyncio.start_server(self._accept, self.host, 0, limit=_MAX_HEAD)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for connection in list(self._connections.values()):
                connection.shut()
            handlers = list(self._handlers)
            if handlers:
                _done, stuck = await asyncio.wait(handlers, timeout=5)
                for handler in stuck:
                    handler.cancel()
                await asyncio.gather(*stuck, return_exceptions=True)
            await server.wait_closed()

    # ------------------------------------------------------------------ scripting
    def script(
        self, path: str, replies: Reply | str | Iterable[Reply | str], *, method: str | None = None
    ) -> None:
        """Queue ``replies`` for requests to ``path`` (exact, else the longest matching prefix).

        Each request pops the next reply (a reply with ``repeat=n`` answers n requests).
        Scripting the same path again appends to its queue.
        """
        items = [replies] if isinstance(replies, Reply | str) else list(replies)
        expanded = [r for item in items for r in [as_reply(item)] * as_reply(item).repeat]
        with self._lock:
            route = self._routes.get(path)
            if route is None or route.persistent:
                self._routes[path] = _Route(method and method.upper(), expanded)
            else:
                route.replies.extend(expanded)

    def route(self, path: str, reply: Reply | str, *, method: str | None = "GET") -> None:
        """Answer every request to exactly ``path`` with ``reply`` (model lists and the like)."""
        with self._lock:
            self._routes[path] = _Route(method and method.upper(), [as_reply(reply)], True)

    def serve_model_lists(self, *names: str) -> None:
        """Route each model-list fixture in ``names`` at its provider's usual GET path."""
        for name in names:
            method, path = MODEL_LISTS[name]
            self.route(path, Reply(name), method=method)

    def pending(self) -> dict[str, int]:
        """Scripted replies not yet served, by path (persistent routes excluded)."""
        with self._lock:
            return {p: len(r.replies) for p, r in self._routes.items() if not r.persistent}

    def assert_all_served(self) -> None:
        """Fail if a scripted reply was never requested or a request matched nothing."""
        left = {p: n for p, n in self.pending().items() if n}
        assert not left, f"scripted replies never requested: {left}"
        assert not self.unmatched, "unmatched requests: " + ", ".join(
            f"{r.method} {r.target}" for r in self.unmatched
        )

    def _take(self, method: str, path: str) -> Reply | None:
        with self._lock:
            candidates = [
                (key, route)
                for key, route in self._routes.items()
                if (key == path or (path.startswith(key) and not route.persistent))
                and (route.method is None or route.method == method)
                and route.replies
            ]
            if not candidates:
                return None
            exact = [c for c in candidates if c[0] == path]
            _key, route = exact[0] if exact else max(candidates, key=lambda c: len(c[0]))
            route.served += 1
            return route.replies[0] if route.persistent else route.replies.pop(0)

    # ------------------------------------------------------------------ inspection
    @property
    def last(self) -> RecordedRequest:
        """The most recent request."""
        with self._lock:
            if not self.requests:
                raise AssertionError("the replay server received no request")
            return self.requests[-1]

    def last_to(self, path: str) -> RecordedRequest:
        """The most recent request to ``path`` (a server may also warm its cache elsewhere)."""
        with self._lock:
            for request in reversed(self.requests):
                if request.path == path:
                    return request
            raise AssertionError(f"no request to {path}; got {[r.path for r in self.requests]}")

    @property
    def disconnected_at(self) -> float | None:
        """When the client closed the latest request's connection mid-response (monotonic)."""
        with self._lock:
            return self.requests[-1].disconnected_at if self.requests else None

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until ``count`` requests arrived; return them."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"expected {count} requests, got {len(self.requests)} within {timeout} s"
                )
            time.sleep(0.002)
        with self._lock:
            return list(self.requests)

    async def wait_for_requests_async(
        self, count: int, within: float = 10.0
    ) -> list[RecordedRequest]:
        """`wait_for_requests` for async tests."""
        deadline = time.monotonic() + within
        while len(self.requests) < count:
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"expected {count} requests, got {len(self.requests)} within {within} s"
                )
            await asyncio.sleep(0.002)
        with self._lock:
            return list(self.requests)

    def reset(self) -> None:
        """Forget routes and recorded requests."""
        with self._lock:
            self._routes.clear()
            self.requests.clear()
            self.unmatched.clear()

    @property
    def open_connections(self) -> int:
        """Connections currently open."""
        return self.connections_opened - self.connections_closed

    # ------------------------------------------------------------------ serving
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._next_connection += 1
        stamped = None
        transport_socket = writer.get_extra_info("socket")
        if self._listener is not None and transport_socket is not None:
            stamped = self._listener.accepted.get(transport_socket.fileno())
        connection = _Connection(self._next_connection, reader, writer, stamped)
        self._connections[connection.ident] = connection
        self.connections_opened += 1
        try:
            while await self._serve_one(connection):
                pass
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # surfaced to the test through self.errors
            self.errors.append(exc)
        finally:
            connection.shut()
            self._connections.pop(connection.ident, None)
            self.connections_closed += 1
            self._handlers.discard(task)
            await connection.close()

    async def _serve_one(self, connection: _Connection) -> bool:
        """Read and answer one request; return whether the connection stays open."""
        head = await connection.read_until(b"\r\n\r\n", _MAX_HEAD)
        if head is None:
            return False
        arrived_at = connection.data_at
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, _version = lines[0].split(" ", 2)
        except ValueError:
            await connection.send(_simple_response(400, b"bad request line"))
            return False
        header_list = []
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                header_list.append((name.strip(), value.strip()))
        headers = {k.lower(): v for k, v in header_list}
        body = await self._read_body(connection, headers)
        if body is None:
            return False
        parts = urlsplit(target)
        with self._lock:
            request = RecordedRequest(
                index=len(self.requests),
                method=method.upper(),
                target=target,
                path=parts.path,
                raw_query=parts.query,
                query=parse_qs(parts.query, keep_blank_values=True),
                header_list=header_list,
                body=body,
                received_at=time.monotonic(),
                connection_id=connection.ident,
                arrived_at=arrived_at,
            )
            self.requests.append(request)
        connection.current = request
        keep_alive = headers.get("connection", "").lower() != "close"
        reply = self._take(request.method, request.path)
        if reply is None:
            with self._lock:
                self.unmatched.append(request)
            message = f"replay server: nothing scripted for {request.method} {request.path}"
            reply = Reply.json({"error": {"message": message, "type": "not_found"}}, 404)
        reply = _with_healed_word(request, reply)
        request.reply = reply
        completed = await self._respond(connection, request, reply, keep_alive)
        connection.current = None
        return completed and keep_alive and not reply.truncate

    async def _read_body(self, connection: _Connection, headers: dict[str, str]) -> bytes | None:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = bytearray()
            while True:
                size_line = await connection.read_until(b"\r\n", _MAX_HEAD)
                if size_line is None:
                    return None
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                chunk = await connection.read_exactly(size + 2)
                if chunk is None:
                    return None
                if size == 0:
                    return bytes(body)  # (trailers are not supported)
                body += chunk[:-2]
        length = int(headers.get("content-length", "0") or 0)
        return await connection.read_exactly(length) if length else b""

    async def _respond(
        self, connection: _Connection, request: RecordedRequest, reply: Reply, keep_alive: bool
    ) -> bool:
        """Send ``reply``; return False when the connection ended before the reply did."""
        if reply.first_byte_delay and not await _sleep_unless(
            connection.closed, reply.first_byte_delay
        ):
            return False
        pieces = reply.pieces()
        chunked = reply.is_chunked()
        reason = _reason(reply.status)
        head = [f"HTTP/1.1 {reply.status} {reason}", f"Content-Type: {reply.media_type()}"]
        if chunked:
            head.append("Transfer-Encoding: chunked")
        else:
            head.append(f"Content-Length: {sum(map(len, pieces))}")
        head.append("Connection: " + ("keep-alive" if keep_alive else "close"))
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        request.response_started_at = time.monotonic()
        if not await connection.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1")):
            return False
        ends = not (reply.hold_open or reply.truncate)
        for number, piece in enumerate(pieces):
            if number and reply.delay and not await _sleep_unless(connection.closed, reply.delay):
                return False
            frame = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
            if ends and not chunked and number == len(pieces) - 1:
                _mark_finished(request)  # before the last bytes, so a client never outruns it
            if not await connection.send(frame):
                return False
            request.pieces_sent += 1
        if reply.hold_open:
            request.holding.set()
            # Keep the response unfinished until the client leaves or the server stops.
            await connection.closed.wait()
            return False
        if reply.truncate:
            await connection.close()
            return False
        if chunked:
            _mark_finished(request)
            if not await connection.send(b"0\r\n\r\n"):
                return False
        elif not pieces:
            _mark_finished(request)
        return True


def _mark_finished(request: RecordedRequest) -> None:
    request.response_finished_at = time.monotonic()
    request.finished.set()


def _reason(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _simple_response(status: int, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status} {_reason(status)}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


async def _sleep_unless(closed: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds``; return False early if ``closed`` gets set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(closed.wait(), seconds)
    return not closed.is_set()


def replies(*names: str, **options: Any) -> Sequence[Reply]:
    """`Reply` objects for fixture ``names`` sharing ``options`` (``split=``, ``delay=``…)."""
    return [Reply(name, **options) for name in names]
