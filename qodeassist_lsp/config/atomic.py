"""Writing a file atomically: a temporary file beside it, flushed and renamed over the old one.

A crash, a full disk or a refused write mid-way leaves the old bytes or the new ones, never a
mix; the new file keeps the old one's permission bits. The settings and memory files, the chat
histories, checkpoints and the edit tools' files are all written here.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | None, new_mode: int | None = None) -> None:
    """Make ``path`` hold exactly ``data`` (None: remove it), creating parent folders.

    A new file gets ``new_mode``, by default the temporary file's private 0600.
    """
    if data is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = new_mode
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


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, line ends as given) to ``path``; a new file gets mode 0644."""
    write_atomic(path, text.encode("utf-8"), 0o644)
