"""Serving LSP on stdin/stdout through the event loop's own pipe transports.

pygls's stdio mode reads each header line and each body in a worker thread and writes
with blocking ``flush()`` calls, so every message costs several thread hand-offs (measured
at several hundred microseconds per completion request, about as much as the request's own
work). When stdin and stdout are pipes or sockets, as every editor starts a language server,
this module reads and writes them with asyncio's non-blocking pipe transports instead and
feeds pygls's own message loop. Anything else (a terminal, a file, Windows, stdout shared
with stderr) falls back to pygls's ``start_io`` unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from typing import BinaryIO

from pygls.io_ import run_async
from pygls.server import JsonRPCServer

log = logging.getLogger("qodeassist.lsp")


class PipeReader:
    """The reader pygls's message loop expects, over an asyncio stream (b"" at the end)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        """Read from ``stream``."""
        self._stream = stream

    async def readline(self) -> bytes:
        """Return the next header line, or b"" at the end of input."""
        try:
            return await self._stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError:
            return b""  # a "header" longer than any real one: the input is not LSP

    async def readexactly(self, n: int) -> bytes:
        """Return the next ``n`` bytes, or b"" if the input ends first."""
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


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


def serve_stdio(server: JsonRPCServer) -> None:
    """Run ``server`` on stdin/stdout until the client exits or closes the input."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if not pipes_usable(stdin, stdout, getattr(sys.stderr, "buffer", None)):
        server.start_io()
        return
    stop = threading.Event()
    server._stop_event = stop  # pygls's shutdown() sets it to end the message loop
    try:
        asyncio.run(_serve(server, stop, stdin, stdout))
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


async def _serve(
    server: JsonRPCServer, stop: threading.Event, stdin: BinaryIO, stdout: BinaryIO
) -> None:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, stdout)
    server.protocol.set_writer(PipeWriter(transport))
    await run_async(
        stop_event=stop,
        reader=PipeReader(stream),
        protocol=server.protocol,
        logger=log,
        error_handler=server.report_server_error,
    )
