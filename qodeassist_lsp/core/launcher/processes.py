"""Operating-system helpers for the processes a launcher starts: signals and identity.

Kept apart from ``supervisor.py`` (the launcher's state machine) because these are the
platform-specific parts: process groups and ``/proc`` start times on POSIX.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

KILL: int = getattr(signal, "SIGKILL", signal.SIGTERM)
"""The strongest stop signal the platform has."""


def signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    """Send ``signum`` to the process group led by ``process`` (the process on Windows)."""
    # The unreaped leader keeps its pid and process group id reserved, so this cannot hit a
    # reused pid.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":
            process.kill() if signum == KILL else process.terminate()
        else:
            os.killpg(process.pid, signum)


def signal_pid(pid: int, signum: int) -> None:
    """Send ``signum`` to the process group of ``pid`` (a detached server we recorded)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":
            os.kill(pid, signum)
        else:
            os.killpg(pid, signum)


def proc_stat(pid: int) -> tuple[str, str] | None:
    """Return the state and kernel start time of ``pid`` from ``/proc`` (Linux only)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except (OSError, IndexError):
        return None
    return (fields[0], fields[19]) if len(fields) > 19 else None


def start_marker(pid: int) -> str | None:
    """Return the start time of ``pid``: it tells it from a later process given its pid."""
    stat = proc_stat(pid)
    return stat[1] if stat is not None else None


def pid_matches(pid: int, marker: str | None) -> bool:
    """Whether ``pid`` still runs and is the process whose start time was ``marker``."""
    if sys.platform == "win32":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if marker is None:
        return True
    stat = proc_stat(pid)
    return stat is not None and stat[1] == marker and stat[0] != "Z"
