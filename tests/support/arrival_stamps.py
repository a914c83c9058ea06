"""When a request's bytes reached the replay server's socket, from the kernel's own clock.

The benchmarks subtract the provider's time from each round trip. That time starts when the
request reaches the provider. Stamping it once the provider's Python code has read the bytes
would start it late: after the provider's process has woken up (on this VM about 0.1 ms after
idling), run its event loop and resumed the reading task (another 0.2 ms, measured). That
delay is the provider's, but it would be billed to the server under test. On Linux the
kernel stamps every received packet when ``SO_TIMESTAMPNS`` is on, and ``recvmsg`` returns
the stamp, so the provider's time can start when the bytes arrived.

`StampingListener` is a listening socket whose ``accept`` returns `StampedSocket` objects.
asyncio's selector loop reads an accepted socket with ``sock.recv``. `StampedSocket.recv`
uses ``recvmsg`` instead and keeps, for every read, its arrival time and size. The reader
later asks `StampedSocket.arrival` when the first byte of the data it took arrived. Elsewhere
(another OS, no support), `arrival` returns None and the caller stamps the time itself.
"""

from __future__ import annotations

import socket
import sys
import time
import weakref
from collections import deque
from typing import Any

__all__ = ["StampedSocket", "StampingListener", "kernel_stamps_supported"]

_SO_TIMESTAMPNS = 35
"""Linux's SO_TIMESTAMPNS (socket.h); Python's socket module does not name it."""
_TIMESPEC = 16
_ANCILLARY_SPACE = socket.CMSG_SPACE(_TIMESPEC) if hasattr(socket, "CMSG_SPACE") else 0


def kernel_stamps_supported() -> bool:
    """Whether this platform can stamp received bytes (Linux with ``recvmsg``)."""
    return sys.platform == "linux" and _ANCILLARY_SPACE > 0


class StampedSocket(socket.socket):
    """An accepted connection that notes when the bytes of each read reached the socket."""

    def enable(self) -> None:
        """Turn kernel timestamps on (silently off where the kernel refuses)."""
        self._arrivals: deque[list[Any]] = deque()
        try:
            self.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
            self._stamping = True
        except OSError:
            self._stamping = False

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        """Read like ``socket.recv``, keeping the arrival time of what was read."""
        if not getattr(self, "_stamping", False):
            return super().recv(bufsize, flags)
        data, ancillary, _flags, _address = self.recvmsg(bufsize, _ANCILLARY_SPACE, flags)
        if data:
            arrived = _arrival_of(ancillary)
            if arrived is not None:
                self._arrivals.append([arrived, len(data)])
        return data

    def arrival(self, taken: int) -> float | None:
        """Consume ``taken`` bytes; return when the first of them arrived (time.monotonic).

        None when no stamp covers them (timestamps off or unsupported).
        """
        arrivals = getattr(self, "_arrivals", None)
        if not arrivals:
            return None
        first = float(arrivals[0][0])
        while taken > 0 and arrivals:
            entry = arrivals[0]
            used = min(taken, entry[1])
            entry[1] -= used
            taken -= used
            if entry[1] == 0:
                arrivals.popleft()
        return first


def _arrival_of(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(payload) >= _TIMESPEC:
            seconds = int.from_bytes(payload[:8], sys.byteorder, signed=True)
            nanoseconds = int.from_bytes(payload[8:16], sys.byteorder, signed=True)
            # The stamp is wall-clock time; the benchmarks compare monotonic readings.
            return seconds + nanoseconds / 1e9 - (time.time() - time.monotonic())
    return None


class StampingListener(socket.socket):
    """A listening socket whose accepted connections are `StampedSocket` objects."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Create the socket (``socket.socket``'s arguments)."""
        super().__init__(*args, **kwargs)
        self.accepted: weakref.WeakValueDictionary[int, StampedSocket] = (
            weakref.WeakValueDictionary()
        )
        """Open connections by file descriptor (how a transport's socket is found again)."""

    def accept(self) -> tuple[socket.socket, Any]:
        """Accept a connection as a `StampedSocket`, timestamps on."""
        # What socket.socket.accept does, with the class of the new socket changed.
        fd, address = self._accept()  # type: ignore[attr-defined]
        connection = StampedSocket(self.family, self.type, self.proto, fileno=fd)
        if socket.getdefaulttimeout() is None and self.gettimeout():
            connection.setblocking(True)
        connection.enable()
        self.accepted[fd] = connection
        return connection, address
