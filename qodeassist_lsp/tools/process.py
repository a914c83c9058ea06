"""Running a program for a tool: no shell, a time limit, an output cap, the whole group killed.

The program runs in a process group (session) of its own, so a timeout or a cancelled chat kills
everything it started, not just the first process. stdout and stderr are merged; output beyond
`OUTPUT_CAP` bytes is counted and dropped while the program keeps running (so a flood cannot
block it on a full pipe, nor fill the server's memory), keeping the head or the tail.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

from qodeassist_lsp.core.tools import TOOL_OUTPUT_CAP
from qodeassist_lsp.tools.base import ToolInputError
from qodeassist_lsp.tools.program_result import Finished

OUTPUT_CAP: Final = TOOL_OUTPUT_CAP
"""Bytes of output a tool result keeps (the cap of every tool's output, MCP tools' too)."""
_KILL_GRACE_S: Final = 2.0
_CHUNK: Final = 65536

__all__ = ["OUTPUT_CAP", "Finished", "run_program"]


class _Capped:
    def __init__(self, keep: Literal["head", "tail"]) -> None:
        self.keep = keep
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data.extend(chunk)
        extra = len(self.data) - OUTPUT_CAP
        if extra > 0:
            self.dropped += extra
            if self.keep == "head":
                del self.data[OUTPUT_CAP:]
            else:
                del self.data[:extra]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def run_program(
    argv: Sequence[str],
    cwd: Path,
    timeout_s: float,
    *,
    keep: Literal["head", "tail"] = "head",
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run ``argv`` in ``cwd`` and return how it ended; kill its group on timeout or cancel."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **env} if env else None,
            start_new_session=sys.platform != "win32",
        )
    except FileNotFoundError:
        raise ToolInputError(f"{argv[0]}: command not found") from None
    except PermissionError:
        raise ToolInputError(f"{argv[0]}: not executable") from None
    output = _Capped(keep)
    try:
        await asyncio.wait_for(_drain(process, output), timeout_s)
    except TimeoutError:
        await _kill(process)
        return Finished(None, output.text(), output.dropped, timed_out=True)
    except asyncio.CancelledError:
        await _kill(process)
        raise
    return Finished(process.returncode, output.text(), output.dropped)


async def _drain(process: asyncio.subprocess.Process, output: _Capped) -> None:
    assert process.stdout is not None
    while chunk := await process.stdout.read(_CHUNK):
        output.add(chunk)
    await process.wait()


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill ``process`` and its group: TERM, then KILL after a grace period."""
    _signal_group(process, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), _KILL_GRACE_S)
    _signal_group(process, getattr(signal, "SIGKILL", signal.SIGTERM))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), _KILL_GRACE_S)
    if process.stdout is not None:  # read to the end, so the pipe and its transport close
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.stdout.read(), _KILL_GRACE_S)


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, sig)
