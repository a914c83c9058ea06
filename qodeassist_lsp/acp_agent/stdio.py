"""`open_stdio`: the agent's stdin and stdout as asyncio streams, whatever they are.

The ACP SDK's ``acp.stdio.stdio_streams`` hands both to the event loop's pipe transports. Those
take pipes and sockets, as an editor starts the agent, but refuse a file (``ValueError``), and
epoll refuses ``/dev/null``: the loop logs a ``PermissionError`` and the read never ends, so
``qodeassist-lsp acp < /dev/null`` hung. A terminal they accept, but set non-blocking, which
stderr shares. So when both are pipes or sockets the SDK's streams are used as they are. Else a
stdin pipe or socket still goes through the loop's transport, and any other stdin is read by a
thread (a file or ``/dev/null`` reaches its end at once, a terminal gives a line at a time);
stdout gets blocking writes, a whole message at a time (a pipe then is a script's, as in
``acp < requests.jsonl | jq``: it may make the loop wait, and its reader gone ends the output
with one log line, not the SDK's tracebacks). On Windows the SDK already reads stdin with a
thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import stat
import sys
import threading

from acp.stdio import stdio_streams

log = logging.getLogger("qodeassist.acp")

_CHUNK = 1 << 16
"""Most bytes one read of a non-pipe stdin takes."""


def pipe_like(fd: int) -> bool:
    """Whether ``fd`` is a pipe or socket the event loop can watch (not a file or terminal)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def open_stdio(limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Return a reader of stdin (lines up to ``limit`` bytes) and a writer of stdout."""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if sys.platform == "win32" or (pipe_like(stdin) and pipe_like(stdout)):
        return await stdio_streams(limit=limit)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    if pipe_like(stdin):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        _read_in_thread(stdin, reader, loop)
    # The protocol of asyncio's own streams, for ``drain``, which never waits: nothing is buffered.
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    return reader, asyncio.StreamWriter(BlockingWriter(stdout), protocol, None, loop)


def _read_in_thread(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """Feed ``reader`` with what blocking reads of ``fd`` return, then its end."""

    def pump() -> None:
        try:
            while chunk := os.read(fd, _CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError as exc:  # a directory, a terminal hung up: the input ends here
            log.warning("stdin cannot be read any further: %s", exc)
        except RuntimeError:  # the loop is closed: the agent is gone and nobody reads
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="qa-acp-stdin", daemon=True).start()


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
