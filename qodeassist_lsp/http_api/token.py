"""The HTTP API's bearer token: generated once, owner-only in the data root, rotatable.

The file is ``<data root>/http-token`` (``$QODEASSIST_HTTP_TOKEN`` overrides it). A running
server re-reads the file when it changes, so ``serve --http-rotate-token`` locks out the old
token at once. Creation and the owner-only write are the MCP server's (`mcp.server`). A file
others may read or write is tightened to 0600 on load; one that cannot be (another user owns
it) is refused (`TokenFileUnsafe`): whoever else can read it could use the API.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path
from typing import Final

from qodeassist_lsp.mcp.server import server_token, write_token
from qodeassist_lsp.wire.errors import QodeAssistError

log = logging.getLogger("qodeassist.http")

TOKEN_FILE: Final = "http-token"
TOKEN_ENV: Final = "QODEASSIST_HTTP_TOKEN"


class TokenFileUnsafe(QodeAssistError):
    """The token file is open to other users and cannot be made owner-only."""


class TokenFromEnvironment(QodeAssistError):
    """``$QODEASSIST_HTTP_TOKEN`` sets the token, so rotating the file would change nothing."""


def secure_file(path: Path) -> int | None:
    """Make ``path`` owner-only; return the loose mode it had (None: it was already 0600).

    Raise `TokenFileUnsafe` when it belongs to another user or its mode cannot be changed.
    """
    if os.name != "posix":
        return None  # Windows: the data root's ACL guards it
    info = path.stat()
    loose = stat.S_IMODE(info.st_mode) & 0o077
    if info.st_uid != os.geteuid():
        raise TokenFileUnsafe(
            f"{path} belongs to another user (uid {info.st_uid}); remove it (a new token is "
            "generated) or give it to this user"
        )
    if not loose:
        return None
    try:
        os.chmod(path, 0o600)
    except OSError as exc:
        raise TokenFileUnsafe(
            f"{path} is readable or writable by others (mode {stat.S_IMODE(info.st_mode):04o}) "
            f"and could not be made 0600 ({exc.strerror}); fix its mode or remove it"
        ) from None
    return stat.S_IMODE(info.st_mode)


class HttpToken:
    """The current token, read again whenever its file changes."""

    def __init__(self, data_root: Path) -> None:
        """Load (or create) the token of ``data_root``; tighten a loose file's mode."""
        self.path = data_root / TOKEN_FILE
        self._token, self.source = server_token(data_root, TOKEN_FILE, TOKEN_ENV)
        self._from_file = self.source == str(self.path)
        self.tightened = secure_file(self.path) if self._from_file else None
        """The loose mode the file had at start (None: it was owner-only)."""
        self._stamp = self._stat()

    def _stat(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat()
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def current(self) -> str:
        """Return the token in force (the file's newest content, once it is owner-only)."""
        if self._from_file:
            stamp = self._stat()
            if stamp is not None and stamp != self._stamp:
                self._stamp = stamp
                try:
                    secure_file(self.path)
                    text = self.path.read_text(encoding="utf-8").strip()
                except TokenFileUnsafe as exc:
                    log.warning("the changed token file is not used: %s", exc)
                    return self._token
                except OSError:
                    return self._token
                if text:
                    self._token = text
        return self._token


def rotate_token(data_root: Path) -> tuple[str, Path]:
    """Replace the token file of ``data_root`` with a new token; return it and the file.

    Raise `TokenFromEnvironment` while ``$QODEASSIST_HTTP_TOKEN`` is set: the server would
    go on using that.
    """
    if os.environ.get(TOKEN_ENV, "").strip():
        raise TokenFromEnvironment(
            f"cannot rotate the token: ${TOKEN_ENV} is set, and a server uses it instead of "
            f"{data_root / TOKEN_FILE}; change or unset ${TOKEN_ENV} instead"
        )
    path = data_root / TOKEN_FILE
    with contextlib.suppress(FileNotFoundError):
        secure_file(path)  # another user's file is refused, not overwritten
    return write_token(path), path
