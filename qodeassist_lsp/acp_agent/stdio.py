"""`open_stdio`: the agent's stdin and stdout as asyncio streams, whatever they are.

The ACP SDK's ``acp.stdio.stdio_streams`` hands both to the event loop's pipe transports. Those
take pipes and sockets, as an editor starts the agent, but refuse a file (``ValueError``), and
epoll refuses ``/dev/null``: the loop logs a ``PermissionError`` and the read never ends, so
``qodeassist-lsp acp < /dev/null`` hung. A terminal they accept, but set non-blocking, which
stderr shares. So when both are pipes or sockets the SDK's streams are used as they are. Else
stdin is read by `wire.stdin.open_reader` (a pipe or socket still through the loop's transport,
any other stdin by a thread: a file or ``/dev/null`` reaches its end at once, a terminal gives a
line at a time, as ``serve --stdio --http`` reads it too); stdout gets blocking writes, a whole
message at a time (a pipe then is a script's, as in ``acp < requests.jsonl | jq``: it may make
the loop wait, and its reader gone ends the output with one log line, not the SDK's
tracebacks). On Windows the SDK already reads stdin with a thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import sys

from acp.stdio import stdio_streams

from qodeassist_lsp.wire.stdin import open_reader, pipe_like

log = logging.getLogger("qodeassist.acp")


async def open_stdio(limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Return a reader of stdin (lines up to ``limit`` bytes) and a writer of stdout."""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if sys.platform == "win32" or (pipe_like(stdin) and pipe_like(stdout)):
        return await stdio_streams(limit=limit)
    loop = asyncio.get_running_loop()
    reader = await open_reader(sys.stdin, limit)
    # The protocol of asyncio's own streams, for ``drain``, which never waits: nothing is buffered.
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    return reader, asyncio.StreamWriter(BlockingWriter(stdout), protocol, None, loop)


class BlockingWriter(asyncio.WriteTransport):
    """Writes each message at once with blocking writes (stdout not an editor's pipe)."""

    def __init__(self, fd: int) -> None:
        """Write to ``fd``, which stays in blocking mode."""
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Write all of ``data``; after a failed write, drop everything, as a pipe would."""
        view = memoryview(data)
        while view and not self._closing:
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:  # a pipe another process made non-blocking: wait for room
                select.select([], [self._fd], [])
            except OSError as exc:
                log.warning("stdout cannot be written any more: %s", exc)
                self._closing = True

    def can_write_eof(self) -> bool:
        """No: stdout stays open until the process ends."""
        return False

    def get_write_buffer_size(self) -> int:
        """Nothing is ever buffered."""
        return 0

    def is_closing(self) -> bool:
        """Whether `close` was called or a write failed."""
        return self._closing

    def close(self) -> None:
        """Write nothing more (stdout itself stays open)."""
        self._closing = True

    def abort(self) -> None:
        """Close: nothing is buffered to drop."""
        self.close()
