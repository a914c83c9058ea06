"""A process's stdin as an ``asyncio.StreamReader``, whatever stdin is (both stdio doors use it).

The event loop's pipe transport (``connect_read_pipe``) takes a pipe or socket, as an editor
starts a server or agent, and then reads without a thread. It refuses a file (``ValueError``),
and epoll refuses ``/dev/null`` (the loop logs a ``PermissionError`` and the read never ends:
``acp < /dev/null`` and ``serve --stdio --http < /dev/null`` hung). A terminal it accepts, but
sets non-blocking, which stderr shares. So any stdin that is not a pipe or socket is read by a
thread of blocking reads feeding the reader: a file or ``/dev/null`` reaches its end at once, a
terminal gives a line at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import threading
from typing import IO, Any

log = logging.getLogger("qodeassist.stdin")

_CHUNK = 1 << 16
"""Most bytes one read of a non-pipe stdin takes."""


def pipe_like(source: int | IO[Any]) -> bool:
    """Whether ``source`` (a descriptor or file) is a pipe or socket the event loop can watch."""
    try:
        mode = os.fstat(source if isinstance(source, int) else source.fileno()).st_mode
    except (OSError, ValueError):  # closed, or a stream with no descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def open_reader(stdin: IO[Any], limit: int) -> asyncio.StreamReader:
    """Return a reader of ``stdin`` (lines up to ``limit`` bytes): the loop's pipe, or a thread."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    if pipe_like(stdin):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    else:
        read_in_thread(stdin.fileno(), reader, loop)
    return reader


def read_in_thread(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """Feed ``reader`` with what blocking reads of ``fd`` return, then its end, from a thread."""

    def pump() -> None:
        try:
            while chunk := os.read(fd, _CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError as exc:  # a directory, a terminal hung up: the input ends here
            log.warning("stdin cannot be read any further: %s", exc)
        except RuntimeError:  # the loop is closed: the server is gone and nobody reads
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(reader.feed_eof)

    # A daemon: a terminal's read may block until the process ends, which must not wait for it.
    threading.Thread(target=pump, name="qa-stdin", daemon=True).start()
