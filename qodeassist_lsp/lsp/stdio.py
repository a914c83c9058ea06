"""Serving LSP on stdin/stdout through the event loop's own pipe transports.

pygls's stdio mode reads each header line and each body in a worker thread and writes
with blocking ``flush()`` calls, so every message costs several thread hand-offs (measured
at several hundred microseconds per completion request, about as much as the request's own
work). When stdin and stdout are pipes or sockets, as every editor starts a language server,
this module reads and writes them with asyncio's non-blocking pipe transports instead and
hands each message to pygls as soon as its bytes are in (`MessageReader`). Anything else (a
terminal, a file, Windows, stdout shared with stderr) falls back to pygls's ``start_io``.

The loop is uvloop's when it is installed (a dependency on Linux and macOS): its event loop,
pipes and sockets are C (libuv), which took about a tenth off the server's overhead per
completion, measured against the standard loop in alternating runs.
``QODEASSIST_EVENT_LOOP=asyncio`` selects the standard loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol
from pygls.server import JsonRPCServer

log = logging.getLogger("qodeassist.lsp")

_MAX_HEADER_BYTES = 64 * 1024
"""Input this long without the end of a header block is not LSP: it is dropped."""


class MessageReader(asyncio.Protocol):
    """Frames LSP messages as stdin's bytes arrive and hands each one to pygls at once.

    pygls's own loop awaits a header line, another line and the body, three coroutine
    resumptions and an event-loop pass per message; framing in ``data_received`` dispatches a
    message in the same callback that read it. Decoding and dispatch are pygls's, as in its
    ``run_async``: the protocol's ``structure_message`` on the decoded message, then
    ``handle_message``, and a message that fails is logged and reported, never fatal.
    """

    def __init__(
        self,
        protocol: JsonRPCProtocol,
        stop: threading.Event,
        error_handler: Callable[[Exception, type[JsonRpcException]], Any] | None = None,
    ) -> None:
        """Dispatch to ``protocol`` until the input ends or ``stop`` is set."""
        self._protocol = protocol
        self._stop = stop
        self._error_handler = error_handler
        self._buffer = bytearray()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done when the input has ended (or the server was stopped)."""
        self.exit_code: int | None = None
        """The code the ``exit`` notification asked for (0 after ``shutdown``, else 1)."""

    def data_received(self, data: bytes) -> None:
        """Buffer ``data`` and dispatch every complete message in it."""
        buffer = self._buffer
        buffer += data
        while not self._stop.is_set() and not self.closed.done():
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > _MAX_HEADER_BYTES:
                    log.error("discarding %d bytes of input without an LSP header", len(buffer))
                    buffer.clear()
                return
            length = _content_length(buffer[:end])
            if length is None:  # not a message header: skip it, as pygls's reader does
                log.error("ignoring an LSP header block without Content-Length")
                del buffer[: end + 4]
                continue
            start = end + 4
            if len(buffer) < start + length:
                return
            body = bytes(buffer[start : start + length])
            del buffer[: start + length]
            self._dispatch(body)
        self._finish()

    def eof_received(self) -> bool:
        """End the session: the client closed stdin."""
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """End the session: the pipe is gone."""
        self._finish()

    def _dispatch(self, body: bytes) -> None:
        try:
            # Only the message itself is structured: pygls's object_hook would also call into
            # the protocol for every nested object of the params.
            message = json.loads(body)
            if isinstance(message, dict):
                message = self._protocol.structure_message(message)
            self._protocol.handle_message(message)
        except SystemExit as exc:  # pygls's ``exit`` handler: the session is over
            self.exit_code = exc.code if isinstance(exc.code, int) else 1
            self._finish()
        except Exception as exc:
            log.exception("Unable to handle message")
            if self._error_handler is not None:
                self._error_handler(exc, JsonRpcException)

    def _finish(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _content_length(header: bytes | bytearray) -> int | None:
    """Return the Content-Length of an LSP header block, or None if it has no valid one."""
    for line in bytes(header).split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
            return length if length >= 0 else None
    return None


class PipeWriter:
    """The writer pygls sends with: non-blocking writes on the stdout pipe transport."""

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        """Write to ``transport``."""
        self._transport = transport

    def write(self, data: bytes) -> None:
        """Queue ``data``; the event loop writes it as the pipe accepts it."""
        self._transport.write(data)

    def close(self) -> None:
        """Close the pipe once what is queued has been written."""
        self._transport.close()


def pipes_usable(stdin: BinaryIO, stdout: BinaryIO, stderr: BinaryIO | None = None) -> bool:
    """Whether stdin and stdout can be served through non-blocking pipe transports."""
    if sys.platform == "win32":
        return False
    try:
        modes = [os.fstat(stream.fileno()) for stream in (stdin, stdout)]
        other = os.fstat(stderr.fileno()) if stderr is not None else None
    except (OSError, ValueError, AttributeError):
        return False
    if not all(stat.S_ISFIFO(m.st_mode) or stat.S_ISSOCK(m.st_mode) for m in modes):
        return False
    # Non-blocking mode belongs to the open file, so a stderr sharing stdout's would get it too.
    return other is None or (other.st_dev, other.st_ino) != (modes[1].st_dev, modes[1].st_ino)


def serve_stdio(server: JsonRPCServer) -> int:
    """Run ``server`` on stdin/stdout until the client exits or closes the input.

    Return the process exit code: what ``exit`` asked for, else 0.
    """
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if not pipes_usable(stdin, stdout, getattr(sys.stderr, "buffer", None)):
        server.start_io()
        return 0
    stop = threading.Event()
    server._stop_event = stop  # pygls's shutdown() sets it to end the message loop
    code: int | None = 0
    try:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            code = runner.run(_serve(server, stop, stdin, stdout))
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
    return code or 0


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """Return uvloop's loop factory when it is installed and not turned off, else None."""
    if os.environ.get("QODEASSIST_EVENT_LOOP", "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _serve(
    server: JsonRPCServer, stop: threading.Event, stdin: BinaryIO, stdout: BinaryIO
) -> int | None:
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, stdout)
    server.protocol.set_writer(PipeWriter(transport))
    reader = MessageReader(server.protocol, stop, server.report_server_error)
    await loop.connect_read_pipe(lambda: reader, stdin)
    await reader.closed
    return reader.exit_code
