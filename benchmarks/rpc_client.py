"""A minimal JSON-RPC-over-stdio LSP client for the benchmarks.

`lsp_bench.py` times LSP round trips and charges them to the server, so the client must cost
next to nothing: no pygls, no cattrs (un)structuring. This one speaks the wire format
directly: ``Content-Length`` framing, ``json``, plain dicts for params and results, and one
future per request id. Round trips are timed at the pipe: from just before a request's bytes
are written to the moment the read that brought its answer's bytes returned
(`last_round_trip`). That read is done by a thread of its own, blocked in ``os.read`` on the
server's stdout, which stamps the time before handing the bytes to the event loop. Waking the
client's event loop, framing and parsing the answer and resuming the awaiting coroutine (about
0.25 ms after idling, measured) are the client's own work and are not charged to the server;
only the kernel's wake-up of the reading thread is (a pipe has no receive timestamp). Requests
the server sends to the client (``workspace/configuration``, ``client/registerCapability``,
``window/workDoneProgress/create``…) are answered at once, so the server never waits on the
client; notifications from the server are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_HEADER_END = b"\r\n\r\n"


class RpcError(Exception):
    """An error response (``code`` and ``message`` as the server sent them)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class RpcClient:
    """One server subprocess and the JSON-RPC conversation with it."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._loop = asyncio.get_running_loop()
        self._stdin = process.stdin
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._arrived: dict[int, float] = {}
        self._buffer = bytearray()
        self._stdout_closed = False
        self.last_round_trip = 0.0
        """Seconds from writing the last request to reading its answer off the pipe."""
        self._reader = threading.Thread(
            target=self._read_pipe, args=(process.stdout.fileno(),), daemon=True
        )
        self._reader.start()

    @classmethod
    async def spawn(cls, argv: Sequence[str], env: Mapping[str, str] | None = None) -> RpcClient:
        """Start ``argv`` with piped stdin/stdout (stderr is inherited)."""
        process = await asyncio.to_thread(
            subprocess.Popen,
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            bufsize=0,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    # ------------------------------------------------------------------ sending
    def _send(self, message: dict[str, Any]) -> float:
        body = json.dumps(message, separators=(",", ":")).encode()
        frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        sent = time.monotonic()
        # A blocking write: the reader thread keeps draining the server's output meanwhile.
        self._stdin.write(frame)
        return sent

    async def request(self, method: str, params: Any = None, within: float = 60.0) -> Any:
        """Send a request and return its result; raise `RpcError` on an error response.

        A server that has not answered after ``within`` seconds raises `TimeoutError` (a hung
        server fails the benchmark instead of stalling it).
        """
        if self._stdout_closed:
            raise ConnectionError("the server's stdout is closed")
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[Any] = self._loop.create_future()
        self._pending[ident] = future
        sent = self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            async with asyncio.timeout(within):
                result = await future
                self.last_round_trip = self._arrived.pop(ident, sent) - sent
                return result
        except TimeoutError:
            raise TimeoutError(f"no answer to {method} within {within} s") from None
        finally:
            self._pending.pop(ident, None)
            self._arrived.pop(ident, None)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (never waits for an answer)."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    # ------------------------------------------------------------------ receiving
    def _read_pipe(self, fd: int) -> None:
        """Reader thread: block on the pipe and stamp each read the moment it returns."""
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            arrived = time.monotonic()
            try:
                self._loop.call_soon_threadsafe(self._take, data, arrived)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                return
            if not data:
                return

    def _take(self, data: bytes, arrived: float) -> None:
        """Frame what was read; each complete message is dispatched with its read's time."""
        if not data:
            self._stdout_closed = True
            error = ConnectionError("the server closed its stdout")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            return
        buffer = self._buffer
        buffer += data
        while True:
            end = buffer.find(_HEADER_END)
            if end < 0:
                return
            length = 0
            for line in bytes(buffer[:end]).split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            start = end + len(_HEADER_END)
            if len(buffer) < start + length:
                return
            body = bytes(buffer[start : start + length])
            del buffer[: start + length]
            self._dispatch(json.loads(body), arrived)

    def _dispatch(self, message: dict[str, Any], arrived: float) -> None:
        ident = message.get("id")
        method = message.get("method")
        if method is not None:
            if ident is not None:  # a server -> client request: answer now
                self._send({"jsonrpc": "2.0", "id": ident, "result": _answer(method, message)})
            return  # a notification
        if not isinstance(ident, int):
            return
        future = self._pending.get(ident)
        if future is None or future.done():
            return
        self._arrived[ident] = arrived
        if "error" in message:
            error = message["error"] or {}
            future.set_exception(
                RpcError(error.get("code", 0), error.get("message", ""), error.get("data"))
            )
        else:
            future.set_result(message.get("result"))

    # ------------------------------------------------------------------ lifecycle
    async def shutdown(self, within: float = 10.0) -> int:
        """``shutdown`` then ``exit``; wait ``within`` s for the process, then kill it."""
        with contextlib.suppress(RpcError, ConnectionError, TimeoutError, OSError):
            await self.request("shutdown", within=within)
            self.notify("exit")
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            code = await asyncio.to_thread(self.process.wait, within)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = await asyncio.to_thread(self.process.wait)
        await asyncio.to_thread(self._reader.join, 5)
        return code


def _answer(method: str, message: dict[str, Any]) -> Any:
    """The result for a request the server sent: a null per configuration item, else null."""
    if method == "workspace/configuration":
        items = (message.get("params") or {}).get("items") or []
        return [None] * len(items)
    if method == "workspace/applyEdit":
        return {"applied": False}
    return None  # registerCapability, workDoneProgress/create, showMessageRequest…


async def start_ready_server(home: Path) -> RpcClient:
    """Start the real server on ``home`` (config, data, project) and wait until it is ready."""
    env = {
        **os.environ,
        "QODEASSIST_CONFIG_DIR": str(home / "config"),
        "QODEASSIST_DATA_DIR": str(home / "data"),
        "QODEASSIST_LOG_LEVEL": os.environ.get("QA_PROBE_LOG", "ERROR"),
    }
    client = await RpcClient.spawn([sys.executable, "-m", "qodeassist_lsp"], env)
    root = (home / "project").as_uri()
    await client.request("initialize", {"processId": None, "rootUri": root, "capabilities": {}})
    client.notify("initialized", {})
    for _ in range(500):
        status = await client.request("qodeassist/status", {})
        if isinstance(status, dict) and status.get("state") == "ready":
            break
        await asyncio.sleep(0.02)
    return client
