"""Serving LSP on stdin/stdout with pygls's own message loop, fed from the event loop's pipe.

pygls's ``start_io`` reads stdin in a worker thread, three thread round trips per message, which
more than doubled the server's time per completion (docs/performance.md). When stdin
is a pipe or socket, as editors start a language server, `serve_stdio` hands pygls's public
``run_async`` an ``asyncio.StreamReader`` on the event loop's pipe instead: pygls's framing,
decoding and dispatch, no thread. A terminal or a file goes through ``start_io``, unless a
companion (``--http``) shares the event loop: then `wire.stdin.open_reader` reads it with a thread
of its own feeding that reader (the loop's pipe transport refuses a file and hung on
``/dev/null``). When the editor is gone (`parent_watch`), the server ends that reader's input, as
the editor closing stdin would: the loop and a companion end in order, with exit code 1.
``exit`` closes stdout while a companion still stops: what is sent then is dropped (`StdoutSink`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import BinaryIO

from pygls.io_ import run_async

from qodeassist_lsp.lsp.server import QodeAssistServer
from qodeassist_lsp.wire.stdin import open_reader, pipe_like

log = logging.getLogger("qodeassist.lsp")

_LINE_LIMIT = 1 << 20
"""Longest header line the reader accepts (a header is a few dozen bytes)."""


def without_httpx_cli() -> None:
    """Keep ``import httpx`` in this process from importing httpx's command-line client.

    With rich, click and pygments installed (the test extra brings them; many environments have
    them), ``httpx/__init__`` imports ``httpx._main`` and all three: about 3 MB of resident
    memory and 25 ms that no request uses (encode/httpx#3547 moves it out). A ``None`` in
    ``sys.modules`` makes that import fail as httpx expects when they are missing; only
    ``httpx.main`` changes (it says what to install), and the ``httpx`` command, a process of its
    own, is untouched. Called before the configuration's first load imports httpx.
    """
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


class StdoutSink:
    """pygls's writer of stdout that drops what is sent once ``exit`` has closed it."""

    def __init__(self, stdout: BinaryIO) -> None:
        """Write whole messages to ``stdout``."""
        self._stdout = stdout

    def write(self, data: bytes) -> None:
        """Write and flush ``data``; nothing once stdout is closed."""
        # ``exit`` closes stdout, and the loop runs on while a companion stops: a notification
        # then (a configuration load ending, say) failed, and reporting that failure to the
        # client failed again, a cascade of tracebacks on stderr.
        if self._stdout.closed:
            return
        self._stdout.write(data)
        self._stdout.flush()

    def close(self) -> None:
        """Close stdout (pygls's ``exit`` handler)."""
        self._stdout.close()


Companion = Callable[[], Awaitable[None]]
"""Another server run in the same event loop for as long as LSP is served (``--http``)."""


def serve_stdio(
    server: QodeAssistServer,
    stdin: BinaryIO,
    stdout: BinaryIO,
    companion: Companion | None = None,
) -> None:
    """Serve ``server`` on ``stdin``/``stdout`` until the input ends or ``exit`` arrives."""
    without_httpx_cli()
    if not pipe_like(stdin) and companion is None:
        server.start_io(stdin, stdout)
        return
    try:
        asyncio.run(_serve(server, stdin, stdout, companion))
    except (KeyboardInterrupt, SystemExit):  # pygls's ``exit`` handler ends the process so
        pass
    except ConnectionError:  # a broken pipe, or a socket the client reset (closed unread)
        log.error("the client closed the connection; shutting down")
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated


async def _serve(
    server: QodeAssistServer, stdin: BinaryIO, stdout: BinaryIO, companion: Companion | None
) -> None:
    beside = asyncio.ensure_future(companion()) if companion is not None else None
    try:
        await _serve_lsp(server, stdin, stdout)
    finally:
        if beside is not None:
            beside.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beside


async def _serve_lsp(server: QodeAssistServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    reader = await open_reader(stdin, _LINE_LIMIT)
    server.end_input = reader.feed_eof  # the editor is gone: end as its closing stdin would
    server.protocol.set_writer(StdoutSink(stdout))
    try:
        await run_async(
            stop_event=threading.Event(),
            reader=reader,
            protocol=server.protocol,
            logger=log,
            error_handler=server.report_server_error,
        )
    except asyncio.IncompleteReadError:
        log.info("the input ended inside a message; shutting down")
