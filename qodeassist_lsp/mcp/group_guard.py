"""Run a stdio MCP server so that nothing it started outlives it (POSIX; standard library only).

The SDK starts a stdio server in a session of its own and stops it by closing its stdin; only
a server that does not exit within the grace period gets its process group killed. A server
that exits politely on stdin's end therefore leaves every helper it started running for ever.
So the hub starts each stdio server through this guard (``python -I group_guard.py COMMAND
ARG...``; the SDK's session leader is the guard): the guard runs the server in a process
group of its own, with the guard's stdin, stdout and stderr, and waits. When the server exits
(for whatever reason: the hub closed its stdin, the language server died, the server
crashed), the guard stops the server's whole group — SIGTERM, then SIGKILL to what is left
after `GRACE_S` — and exits with the server's exit code. A SIGTERM, SIGINT or SIGHUP sent to
the guard (the SDK's own kill escalation) is passed on to the server's group the same way.
Processes that leave the group on purpose (daemons calling ``setsid``) escape, as from any
process-group kill. On Windows the SDK's job object already stops the whole tree; the guard is
not used there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from types import FrameType

GRACE_S = 1.0
"""How long the server's group gets after SIGTERM before SIGKILL."""
_POLL_S = 0.02


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(group: int, reap: Callable[[], object] = lambda: None) -> None:
    """SIGTERM the process group ``group``; SIGKILL whatever is left after `GRACE_S`.

    ``reap`` collects the exit of the guard's own child (a zombie still counts as a member).
    """
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    deadline = time.monotonic() + GRACE_S
    while _group_alive(group):
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
            return
        time.sleep(_POLL_S)
        reap()


def main(argv: list[str]) -> int:
    """Run ``argv`` in its own process group; stop the group when it exits; return its code."""
    if not argv:
        print("usage: group_guard.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    try:
        server = subprocess.Popen(argv, process_group=0)
    except OSError as exc:
        print(f"cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    # Only the server holds the client's pipes from now on: its exit closes them.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)

    def pass_on(signum: int, _frame: FrameType | None) -> None:
        stop_group(server.pid, server.poll)
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, pass_on)
    code = server.wait()
    stop_group(server.pid)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
