"""Kernel receive stamps on the replay server's sockets (benchmarks start provider time there)."""

from __future__ import annotations

import socket
import time

import pytest

from tests.support.arrival_stamps import StampedSocket, StampingListener, kernel_stamps_supported

pytestmark = pytest.mark.skipif(not kernel_stamps_supported(), reason="Linux only")


def _pair() -> tuple[socket.socket, StampedSocket, StampingListener]:
    """A connected pair whose accepted end stamps its reads (checked before it is returned)."""
    listener = StampingListener(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname())
    accepted, _ = listener.accept()
    assert isinstance(accepted, StampedSocket)
    # Linux turns receive stamping on for the whole stack in deferred work, so the first
    # packets after the first socket asks for it may come unstamped.
    for _ in range(100):
        client.sendall(b"w")
        assert accepted.recv(1) == b"w"
        if accepted.arrival(1) is not None:
            break
        time.sleep(0.01)
    else:
        pytest.fail("the kernel never stamped a received packet")
    return client, accepted, listener


def test_a_read_is_stamped_when_its_bytes_arrived_not_when_they_were_read() -> None:
    client, accepted, listener = _pair()
    with client, accepted, listener:
        sent = time.monotonic()
        client.sendall(b"first")
        time.sleep(0.05)  # the bytes wait in the socket before anyone reads them
        read_at = time.monotonic()
        assert accepted.recv(100) == b"first"
        arrived = accepted.arrival(5)
        assert arrived is not None
        assert sent - 0.002 <= arrived < read_at - 0.03
        assert listener.accepted[accepted.fileno()] is accepted


def test_bytes_taken_later_keep_the_arrival_of_their_first_byte() -> None:
    client, accepted, listener = _pair()
    with client, accepted, listener:
        client.sendall(b"abc")
        time.sleep(0.03)
        assert accepted.recv(100) == b"abc"
        client.sendall(b"defg")
        time.sleep(0.03)
        assert accepted.recv(100) == b"defg"
        first = accepted.arrival(2)  # "ab"
        second = accepted.arrival(3)  # "cde": starts in the first read
        third = accepted.arrival(2)  # "fg"
        assert first is not None and second is not None and third is not None
        assert first == second
        assert third > first + 0.02
        assert accepted.arrival(1) is None  # nothing left unaccounted
