"""``folder_lock``: an exclusive advisory lock on a folder that leaves no file behind.

Writers that read, change and rename a file in a folder (``settings.toml``, chat histories)
hold this lock around the whole read-modify-write, so concurrent writers (other processes,
other threads) lose nothing. Readers need no lock: the writes are atomic renames.

Why the folder and not a ``.lock`` file: a lock file beside the data is clutter that stays
for ever (filelock keeps it on release on purpose), and deleting it on release is the classic
unlink race — a waiter that opened the old file goes on to lock an inode nobody else will
see, while a newcomer creates and locks a fresh file, and both believe they hold the lock.
The folder itself is never deleted while it is in use, so locking an open descriptor of the
folder (filelock's ``lock_descriptor``: ``flock`` on Unix) has no such race and creates no
file. The lock goes with the descriptor, so a killed writer never leaves it held.

Where a folder cannot be opened or ``flock``-ed (Windows; some network file systems) the
lock falls back to filelock's ``FileLock`` on one hidden ``.qodeassist.lock`` file in the
folder: one file per folder, shared by every writer there, never deleted.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout, lock_descriptor, unlock_descriptor

from qodeassist_lsp.wire.errors import QodeAssistError

FALLBACK_NAME = ".qodeassist.lock"
"""The lock file used only where a folder descriptor cannot be locked."""
POLL_S = 0.01


class FolderLockTimeout(QodeAssistError, TimeoutError):
    """Another writer held the folder's lock for longer than the caller would wait."""


@contextlib.contextmanager
def folder_lock(folder: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the exclusive lock of ``folder`` (created if missing) for the ``with`` body.

    ``timeout`` seconds (``None``: wait for ever) later `FolderLockTimeout` is raised.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd = _open_folder(folder)
    if fd is None:
        with _fallback(folder, timeout):
            yield
        return
    try:
        _lock(fd, folder, timeout)
        try:
            yield
        finally:
            unlock_descriptor(fd)
    finally:
        os.close(fd)


def _open_folder(folder: Path) -> int | None:
    if os.name == "nt":
        return None
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        lock_descriptor(fd, blocking=False)
    except OSError:  # flock does not work here (e.g. NFS): use the lock file
        os.close(fd)
        return None
    # The probe's lock (if it won) is dropped: `_lock` takes it again under the timeout.
    unlock_descriptor(fd)
    return fd


def _lock(fd: int, folder: Path, timeout: float | None) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while not lock_descriptor(fd, blocking=False):
        if deadline is not None and time.monotonic() >= deadline:
            raise FolderLockTimeout(_busy(folder, timeout))
        time.sleep(POLL_S)


@contextlib.contextmanager
def _fallback(folder: Path, timeout: float | None) -> Iterator[None]:
    lock = FileLock(folder / FALLBACK_NAME, timeout=-1 if timeout is None else timeout)
    try:
        lock.acquire()
    except Timeout:
        raise FolderLockTimeout(_busy(folder, timeout)) from None
    try:
        yield
    finally:
        lock.release()


def _busy(folder: Path, timeout: float | None) -> str:
    return (
        f"{folder}: another writer has held its lock for over {timeout:g} s; "
        "try again when it has finished"
    )
