"""A minimal JSON-RPC-over-stdio LSP client for the benchmarks.

`lsp_bench.py` times LSP round trips and charges them to the server, so the client must cost
next to nothing: no pygls, no cattrs (un)structuring, no reader thread. This one speaks the
wire format directly on asyncio subprocess pipes: ``Content-Length`` framing, ``json``, plain
dicts for params and results, and one future per request id. Round trips are timed at the
pipe: from just before a request's bytes are written to just after its answer's bytes are
read (`last_round_trip`), so parsing the answer and waking the awaiting coroutine, the
client's own work, are not charged to the server. Requests the server sends to the
client (``workspace/configuration``, ``client/registerCapability``,
``window/workDoneProgress/create``…) are answered at once, so the server never waits on the
client; notifications from the server are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping, Sequence
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

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._arrived: dict[int, float] = {}
        self.last_round_trip = 0.0
        """Seconds from writing the last request to reading its answer off the pipe."""
        self._reader = asyncio.create_task(self._read_loop())

    @classmethod
    async def spawn(cls, argv: Sequence[str], env: Mapping[str, str] | None = None) -> RpcClient:
        """Start ``argv`` with piped stdin/stdout (stderr is inherited)."""
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
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
        self._stdin.write(frame)
        return sent

    async def request(self, method: str, params: Any = None, within: float = 60.0) -> Any:
        """Send a request and return its result; raise `RpcError` on an error response.

        A server that has not answered after ``within`` seconds raises `TimeoutError` (a hung
        server fails the benchmark instead of stalling it).
        """
        if self._reader.done():
            raise ConnectionError("the server's stdout is closed")
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        sent = self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            async with asyncio.timeout(within):
                await self._stdin.drain()
                result = await future
                self.last_round_trip = self._arrived.pop(ident, sent) - sent
                return result
        except TimeoutError:
            raise TimeoutError(f"no answer to {method} within {within} s") from None
        finally:
            self._pending.pop(ident, None)
            self._arrived.pop(ident, None)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (buffered by the pipe transport; never waits)."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    # ------------------------------------------------------------------ receiving
    async def _read_loop(self) -> None:
        error: BaseException = ConnectionError("the server closed its stdout")
        try:
            while True:
                head = await self._stdout.readuntil(_HEADER_END)
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await self._stdout.readexactly(length)
                arrived = time.monotonic()
                self._dispatch(json.loads(body), arrived)
        except Exception as exc:  # EOF, a broken pipe or a malformed frame
            error = exc
        except asyncio.CancelledError:
            error = ConnectionError("the client was closed")
            raise
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)

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
        with contextlib.suppress(RpcError, ConnectionError, TimeoutError):
            await self.request("shutdown", within=within)
            self.notify("exit")
            await self._stdin.drain()
        with contextlib.suppress(ConnectionError, OSError):
            self._stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), within)
        except TimeoutError:
            self.process.kill()
            code = await self.process.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        return code


def _answer(method: str, message: dict[str, Any]) -> Any:
    """The result for a request the server sent: a null per configuration item, else null."""
    if method == "workspace/configuration":
        items = (message.get("params") or {}).get("items") or []
        return [None] * len(items)
    if method == "workspace/applyEdit":
        return {"applied": False}
    return None  # registerCapability, workDoneProgress/create, showMessageRequest…
