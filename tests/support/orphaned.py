"""Run a server whose launcher dies while the test still holds the server's socket.

A headless editor's language server outlived its CI job: its stdin, a socket, stayed open in
another process, so no end of input came. `run_orphaned` reproduces that for any of our stdio
doors: a launcher process starts the server on a socket pair whose other end the test holds,
the test talks to the server (``initialize``), the launcher is killed, and the server's stderr
is read until every writer closed it, which is when the server has exited.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

DEADLINE_S = 20.0
"""The watch probes every 2 s; the rest is slack for a loaded machine."""

_LAUNCHER = """
import subprocess, sys, time
server = subprocess.Popen([sys.executable, "-m", "qodeassist_lsp", *sys.argv[2:]])
open(sys.argv[1], "w").write(str(server.pid))
time.sleep(60)
"""


@dataclass(frozen=True)
class Orphaned:
    """What the server wrote to stderr until it exited, and its launcher's pid."""

    launcher_pid: int
    stderr: str


def read_to_end(stream: IO[bytes], deadline_s: float = DEADLINE_S) -> bytes:
    """Read ``stream`` until every writer closed it; fail after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    data = b""
    while True:
        ready, _, _ = select.select([stream], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise AssertionError(f"still open after {deadline_s:g} s: {data[-3000:]!r}")
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            return data
        data += chunk


def run_orphaned(
    arguments: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    talk: Callable[[socket.socket], None],
) -> Orphaned:
    """Start ``qodeassist_lsp <arguments>`` through a launcher, ``talk``, kill the launcher."""
    pid_file = cwd / ".server.pid"
    ours, theirs = socket.socketpair()
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(pid_file), *arguments],
        stdin=theirs.fileno(),
        stdout=theirs.fileno(),
        stderr=subprocess.PIPE,  # the server's too: it ends when the server has exited
        env=dict(env),
        cwd=cwd,
    )
    theirs.close()
    try:
        talk(ours)
        launcher.kill()
        launcher.wait()
        assert launcher.stderr is not None
        stderr = read_to_end(launcher.stderr)
    finally:
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
        launcher.kill()
        launcher.wait()
        if launcher.stderr is not None:
            launcher.stderr.close()
        ours.close()
    return Orphaned(launcher.pid, stderr.decode(errors="replace"))
