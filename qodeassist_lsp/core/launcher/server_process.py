"""A server process a launcher started: its identity, captured output, and how it is stopped.

Attached servers are children (``process`` set): they are waited on and their output is kept in
a ``Scrollback`` for error messages. Detached ones are not our children: only their pid and its
start-time marker identify them, so they are signalled only while the marker still matches.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass

from qodeassist_lsp.core.launcher.processes import KILL, pid_matches, signal_group, signal_pid

SCROLLBACK_BYTES = 1024 * 1024
_READER_DRAIN_S = 1.0


class Scrollback:
    """The last ``limit`` bytes a server printed."""

    def __init__(self, limit: int = SCROLLBACK_BYTES) -> None:
        self._limit = limit
        self._data = bytearray()

    def append(self, chunk: bytes) -> None:
        """Add ``chunk``, dropping the oldest bytes beyond the limit."""
        self._data += chunk
        if len(self._data) > self._limit:
            del self._data[: len(self._data) - self._limit]

    def tail(self, chars: int) -> str:
        """Return the last ``chars`` characters, stripped."""
        text = self._data.decode("utf-8", errors="replace").strip()
        return text[-chars:] if len(text) > chars else text


@dataclass(slots=True)
class Owned:
    """A server this launcher started."""

    pid: int
    detached: bool
    marker: str | None = None
    process: asyncio.subprocess.Process | None = None
    waiter: asyncio.Task[int] | None = None
    reader: asyncio.Task[None] | None = None

    @property
    def exited(self) -> bool:
        """Whether the server is gone (a detached one: its pid no longer matches)."""
        if self.process is not None:
            return self.process.returncode is not None
        return not pid_matches(self.pid, self.marker)

    async def reap(self) -> None:
        """Wait for an exited attached server and read the rest of its output."""
        if self.waiter is not None:
            await asyncio.wait({self.waiter})
        if self.reader is not None:
            done, _ = await asyncio.wait({self.reader}, timeout=_READER_DRAIN_S)
            if not done:
                # A grandchild that left the process group still holds the pipe open.
                self.reader.cancel()
                await asyncio.wait({self.reader})

    async def terminate(self, grace_s: float) -> None:
        """SIGTERM the server, then kill it if it is still running after ``grace_s`` seconds."""
        if self.process is not None:
            if self.process.returncode is None:
                signal_group(self.process, signal.SIGTERM)
                assert self.waiter is not None
                await asyncio.wait({self.waiter}, timeout=grace_s)
                if self.process.returncode is None:
                    signal_group(self.process, KILL)
            await self.reap()
        elif sys.platform == "win32":
            signal_pid(self.pid, signal.SIGTERM)
        elif pid_matches(self.pid, self.marker):
            signal_pid(self.pid, signal.SIGTERM)
            # Not our child, so there is nothing to wait on: poll for it to go away.
            for _ in range(max(1, int(grace_s / 0.1))):
                if not pid_matches(self.pid, self.marker):
                    break
                await asyncio.sleep(0.1)
            if pid_matches(self.pid, self.marker):
                signal_pid(self.pid, KILL)

    def signal_now(self, signum: int) -> None:
        """Signal a running attached server synchronously (process exit)."""
        if self.process is not None:
            with contextlib.suppress(Exception):
                if self.process.returncode is None:
                    signal_group(self.process, signum)
