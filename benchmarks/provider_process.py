"""The benchmark's loopback provider, in a process of its own.

`tests.support.replay_server.ReplayServer` runs in a thread of whichever process starts it.
Started in the benchmark process it would share one GIL with the client that times the
server: whenever both are runnable one of them waits (up to CPython's 5 ms switch interval),
and that wait would be charged to the server. `ProviderProcess` starts the same
`ReplayServer` in a child process (this file run as a script: nothing is inherited, and no
main module is re-imported) and drives it over a socket pair wrapped in
`multiprocessing.connection.Connection`: the parent scripts `Reply` objects (pickled), and reads
back, per upstream request, when it was received and when its response finished. Both are
``time.monotonic()`` readings; CLOCK_MONOTONIC is system-wide on Linux, so they compare with
the parent's own clock. The child's main thread sleeps in ``recv`` between commands, so it
costs nothing while a request is timed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.replay_server import ReplayServer, Reply


class Upstream(NamedTuple):
    """When one request reached the provider and when its response finished (monotonic s).

    The provider's time starts when the first bytes of the request reached its socket (the
    kernel's receive stamp, `tests.support.arrival_stamps`; where there is none, when they
    were read), not once the provider has woken up, read and parsed them: its wake-up after
    idling and its own (Python, here) work are the provider's time, not the server's.
    """

    arrived_at: float
    finished_at: float | None

    @property
    def provider_time(self) -> float:
        """Seconds the provider spent on the request (0 when it never finished)."""
        return (self.finished_at or self.arrived_at) - self.arrived_at


# ---------------------------------------------------------------------------- child side
def _reset(replay: ReplayServer) -> None:
    replay.reset()


def _script(replay: ReplayServer, path: str, replies: list[Reply]) -> None:
    replay.script(path, replies)


def _count(replay: ReplayServer) -> int:
    return len(replay.requests)


def _upstream(replay: ReplayServer, index: int, timeout: float) -> tuple[float, float | None]:
    request = replay.wait_for_requests(index + 1, timeout)[index]
    request.wait_finished(timeout)
    return request.arrived_at or request.received_at, request.response_finished_at


def _errors(replay: ReplayServer) -> list[str]:
    unmatched = [f"unmatched {r.method} {r.target}" for r in replay.unmatched]
    return [repr(e) for e in replay.errors] + unmatched


_OPS: dict[str, Callable[..., Any]] = {
    "reset": _reset,
    "script": _script,
    "count": _count,
    "upstream": _upstream,
    "errors": _errors,
}


def _serve(conn: Connection) -> None:
    """Child process: run a ReplayServer and answer commands until told to stop."""
    with ReplayServer() as replay:
        conn.send(replay.url)
        while True:
            try:
                op, args = conn.recv()
            except (EOFError, OSError):  # the parent is gone
                return
            if op == "stop":
                conn.send(("ok", None))
                return
            try:
                result = _OPS[op](replay, *args)
            except Exception as exc:
                conn.send(("error", f"{op}: {type(exc).__name__}: {exc}"))
            else:
                conn.send(("ok", result))


# ---------------------------------------------------------------------------- parent side
class ProviderProcess:
    """A `ReplayServer` in a child process, scripted and inspected from this one."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.url = ""
        self._conn: Connection | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> ProviderProcess:
        """Start the child and wait until its server listens."""
        ours, theirs = socket.socketpair()
        with ours, theirs:
            self._process = subprocess.Popen(
                [sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()]
            )
            self._conn = Connection(os.dup(ours.fileno()))
        if not self._conn.poll(self.timeout):
            self.stop()
            raise RuntimeError("the provider process did not start")
        self.url = self._conn.recv()
        return self

    def stop(self) -> None:
        """Stop the server and the child (kill it if it does not leave)."""
        if self._conn is not None:
            with contextlib.suppress(RuntimeError, EOFError, OSError, TimeoutError):
                self._call("stop")
            self._conn.close()
            self._conn = None
        if self._process is not None:
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None

    def __enter__(self) -> ProviderProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _call(self, op: str, *args: Any) -> Any:
        if self._conn is None:
            raise RuntimeError("the provider process is not running")
        self._conn.send((op, args))
        if not self._conn.poll(self.timeout):
            raise TimeoutError(f"the provider process did not answer {op!r}")
        status, result = self._conn.recv()
        if status != "ok":
            raise RuntimeError(result)
        return result

    def reset(self) -> None:
        """Forget scripted replies and recorded requests."""
        self._call("reset")

    def script(self, path: str, replies: Reply | Iterable[Reply]) -> None:
        """Queue ``replies`` for requests to ``path`` (as `ReplayServer.script`)."""
        items = [replies] if isinstance(replies, Reply) else list(replies)
        self._call("script", path, items)

    def count(self) -> int:
        """How many requests the provider has received since the last reset."""
        return int(self._call("count"))

    def upstream(self, index: int, timeout: float = 5.0) -> Upstream:
        """Timing of request ``index`` (waits for it to arrive and its response to finish)."""
        return Upstream(*self._call("upstream", index, timeout))

    def errors(self) -> list[str]:
        """Server errors and unmatched requests so far."""
        return list(self._call("errors"))


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])))
