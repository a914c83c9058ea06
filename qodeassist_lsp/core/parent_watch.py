"""Ending the server when the editor that started it is gone (LSP ``InitializeParams.processId``).

The specification: "If the parent process is not alive then the server should exit (see exit
notification) its process." Closing stdin usually ends a server first, but not always: a
headless Neovim's language server, its stdin a socket another process still held, sat in
``epoll_wait`` for half an hour after its editor was gone. `ParentWatch` probes the editor every
`WATCH_INTERVAL_S` (``os.kill(pid, 0)`` on POSIX: a signal check, nothing is sent), and, when no
``processId`` is given, watches for this process being re-parented (our parent exited).

A ``processId`` that is not a process here at ``initialize`` is not watched: an editor on the
host starting the server in a container (another pid namespace) sends a pid the server cannot
see, and servers that took that for "the editor is gone" exited seconds after every start
(denoland/deno#22012). Pure asyncio, no pygls: the language server's ``initialize`` starts it
and ``shutdown`` stops it; the ACP agent (`cli/acp_cmd.py`), whose ``initialize`` names no
process, watches its parent for as long as it serves.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

log = logging.getLogger("qodeassist.server")

WATCH_INTERVAL_S = 2.0
"""How often the editor is probed: a system call, and the server ends within this of it."""

Probe = Callable[[int], bool]
"""Whether a process id names a live process."""


def process_alive(pid: int) -> bool:
    """Whether ``pid`` names a process that has not exited (any doubt counts as alive)."""
    if sys.platform == "win32":
        return _windows_process_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, another user's; anything else: doubt
        return True
    try:  # Linux: an exited process its parent has not reaped yet is a zombie, not alive
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _windows_process_alive(pid: int) -> bool:
    # os.kill(pid, 0) on Windows is TerminateProcess(pid, 0): it would kill the editor. The
    # standard library's ctypes opens the process for waiting and asks whether it has ended.
    if sys.platform == "win32":
        import ctypes

        synchronize, query_limited, wait_timeout, no_such_process = 0x00100000, 0x1000, 0x102, 87
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.OpenProcess.restype = ctypes.c_void_p
        handle = kernel32.OpenProcess(synchronize | query_limited, False, pid)
        if not handle:  # access denied and the rest: it exists, or we cannot tell
            return ctypes.get_last_error() != no_such_process
        try:
            return bool(kernel32.WaitForSingleObject(ctypes.c_void_p(handle), 0) == wait_timeout)
        finally:
            kernel32.CloseHandle(ctypes.c_void_p(handle))
    return True


class ParentWatch:
    """Calls ``on_gone`` once when the editor's process (or, without one, our parent) exits.

    A pid the system gives a new process after the editor exited reads as the editor still
    alive: the server then lives until its input ends, as it did before this watch (an accepted
    risk; pids are reused only after wrapping around). A watched process that is alive never
    ends the server.
    """

    def __init__(
        self,
        on_gone: Callable[[str], Awaitable[None]],
        *,
        alive: Probe = process_alive,
        parent: Callable[[], int] = os.getppid,
        wait: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self._on_gone = on_gone
        self._alive = alive
        self._parent = parent
        self._wait = wait or (lambda: asyncio.sleep(WATCH_INTERVAL_S))
        self._task: asyncio.Task[None] | None = None
        self.watching = ""
        """What is watched, for the log ("": nothing)."""

    def start(self, process_id: int | None) -> None:
        """Start watching the editor ``process_id`` (None: our parent) on the running loop.

        ``on_gone`` will get what was watched: ``watching``.
        """
        if self._task is not None:
            return
        gone = self._check_for(process_id)
        if gone is not None:
            self._task = asyncio.create_task(self._run(gone), name="qa-parent-watch")

    def _check_for(self, process_id: int | None) -> Callable[[], str | None] | None:
        """Return the check of what to watch: it names the process when it has gone."""
        if process_id is not None and process_id > 0 and process_id != os.getpid():
            if self._alive(process_id):
                self.watching = f"the editor's process {process_id}"
                return lambda: None if self._alive(process_id) else self.watching
            log.info(
                "the editor's processId %d is not a process here (another pid namespace?); "
                "not watching it",
                process_id,
            )
        if sys.platform == "win32":
            return None  # Windows keeps the first parent's id: re-parenting cannot be seen
        first = self._parent()
        if first <= 1:  # started by init, or as pid 1 of a container: no parent to lose
            return None
        self.watching = f"the parent process {first}"
        return lambda: None if self._parent() == first else self.watching

    async def _run(self, gone: Callable[[], str | None]) -> None:
        while True:
            await self._wait()
            try:
                which = gone()
            except Exception:  # a probe that breaks must not end the server: keep serving
                log.exception("checking the editor's process failed")
                continue
            if which is not None:
                break
        self._task = None  # from here on `stop` leaves the ending alone
        log.warning("%s has exited; shutting down", which)
        await self._on_gone(which)

    async def stop(self) -> None:
        """Stop watching (``shutdown``: the editor ends the server itself)."""
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
