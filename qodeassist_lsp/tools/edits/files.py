"""The disk side of file edits: read a file's bytes, decode them as text, write atomically.

A file is written through a temporary file in its own folder, flushed and renamed over the
original, so a crash or a full disk leaves the old bytes or the new ones, never a mix. The
original's permission bits are kept.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from qodeassist_lsp.tools.edits.blocks import EditRefused

MAX_EDIT_BYTES = 2 * 1024 * 1024
"""Largest file the edit tools change (edit blocks over a bigger file are a mistake)."""


def read_bytes(path: Path) -> bytes | None:
    """Return the bytes of ``path``, or None when there is no such file."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def decode(data: bytes, name: str) -> str:
    """Return ``data`` as text, refusing binary, non-UTF-8 and oversized files."""
    if len(data) > MAX_EDIT_BYTES:
        raise EditRefused(
            f"{name} is {len(data) // 1024} KiB; the edit tools change files up to "
            f"{MAX_EDIT_BYTES // 1024 // 1024} MiB"
        )
    if b"\0" in data:
        raise EditRefused(f"{name} is a binary file; the edit tools change text files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EditRefused(
            f"{name} is not valid UTF-8 (byte {exc.start}); the edit tools change UTF-8 text only"
        ) from None


def write_atomic(path: Path, data: bytes | None) -> None:
    """Make ``path`` hold exactly ``data`` (None: remove it), creating parent folders."""
    if data is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
