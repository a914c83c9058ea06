"""The disk side of file edits: read a file's bytes and decode them as text.

Files are written with ``config.atomic.write_atomic`` (all or nothing, permissions kept).
"""

from __future__ import annotations

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
