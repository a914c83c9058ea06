"""The HTTP API's bearer token: generated once, owner-only in the data root, rotatable.

The file is ``<data root>/http-token`` (``$QODEASSIST_HTTP_TOKEN`` overrides it). A running
server re-reads the file when it changes, so ``serve --http-rotate-token`` locks out the old
token at once. Creation and the owner-only write are the MCP server's (`mcp.server`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

from qodeassist_lsp.mcp.server import server_token, write_token

TOKEN_FILE: Final = "http-token"
TOKEN_ENV: Final = "QODEASSIST_HTTP_TOKEN"


class HttpToken:
    """The current token, read again whenever its file changes."""

    def __init__(self, data_root: Path) -> None:
        """Load (or create) the token of ``data_root``."""
        self.path = data_root / TOKEN_FILE
        self._token, self.source = server_token(data_root, TOKEN_FILE, TOKEN_ENV)
        self._from_file = self.source == str(self.path)
        self._stamp = self._stat()

    def _stat(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_mtime_ns, stat.st_size)

    def current(self) -> str:
        """Return the token in force (the file's newest content)."""
        if self._from_file:
            stamp = self._stat()
            if stamp is not None and stamp != self._stamp:
                with contextlib.suppress(OSError):
                    text = self.path.read_text(encoding="utf-8").strip()
                    if text:
                        self._token = text
                self._stamp = stamp
        return self._token


def rotate_token(data_root: Path) -> tuple[str, Path]:
    """Replace the token file of ``data_root`` with a new token; return it and the file."""
    path = data_root / TOKEN_FILE
    return write_token(path), path
