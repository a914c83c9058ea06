"""Path confinement: the one resolver every file access on behalf of a request goes through.

A path (absolute, or relative to a base folder) is resolved with every symlink followed; the real
path must lie inside one of the allowed roots — the workspace folders plus the folders the user
listed in ``general.allowed_roots`` (a user-only setting: a project's own settings cannot widen
it). Anything else is refused with ``OutsideAllowedRoots``, whose message names the path, where
it really leads and the setting to change. Reads and writes accept regular files only: a FIFO
would block the server, a device never ends, so both are refused as what they are
(``NotARegularFile``), not reported as missing. The same resolver confines other trees with
their own wording (a chat's content folder, the system prompt's folders).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.wire.errors import QodeAssistError

ALLOWED_ROOTS_SETTING = "general.allowed_roots"
"""The settings key (user-level only) that lists extra folders requests may read."""

_HOW_TO_ALLOW = (
    "; to allow it, add its folder to `allowed_roots` in [general] of your user settings "
    "(<config>/settings.toml or the editor's settings — a project's settings cannot)"
)


class PathRefused(QodeAssistError, PermissionError):
    """A file access the confinement rule refuses; ``str()`` says which path and why."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(errno.EACCES, message, str(path))
        self.path = Path(path)
        self.message = message

    def __str__(self) -> str:
        return self.message


class OutsideAllowedRoots(PathRefused):
    """The path (with symlinks followed) lies outside every allowed root."""


class NotARegularFile(PathRefused):
    """The path is a FIFO, a device, a socket or a directory where a file was needed."""


def real_path(path: Path | str, base: Path | None = None) -> Path:
    """Return ``path`` made absolute (against ``base``) with ``~`` and every symlink resolved."""
    candidate = Path(path).expanduser()
    if not candidate.is_absolute() and base is not None:
        candidate = base / candidate
    return Path(os.path.realpath(candidate))


def kind_of(mode: int) -> str | None:
    """Return what a non-regular file is (``"a FIFO"``, ``"a device"`` …), ``None`` for a file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _inside(path: Path, root: Path) -> bool:
    return os.path.normcase(path).startswith(os.path.normcase(root).rstrip(os.sep) + os.sep) or (
        os.path.normcase(path) == os.path.normcase(root)
    )


@dataclass(frozen=True)
class Confinement:
    """The roots requests may reach and how a refusal is worded."""

    roots: tuple[Path, ...]
    """Real (symlink-free) absolute paths."""
    scope: str = "the workspace folders"
    """How the roots are named in a refusal."""
    advice: str = _HOW_TO_ALLOW
    """What a refusal tells the user to do (names the setting)."""

    @classmethod
    def of(cls, folders: Iterable[Path | str], allowed: Iterable[Path | str] = ()) -> Confinement:
        """Return the confinement of the workspace ``folders`` plus the user's ``allowed`` roots."""
        roots: list[Path] = []
        for root in [*folders, *allowed]:
            real = real_path(root)
            if real not in roots:
                roots.append(real)
        return cls(tuple(roots))

    def contains(self, path: Path | str, base: Path | None = None) -> bool:
        """Whether ``path`` (symlinks followed) lies inside a root."""
        real = real_path(path, base)
        return any(_inside(real, root) for root in self.roots)

    def resolve(self, path: Path | str, base: Path | None = None) -> Path:
        """Return the real path of ``path``; raise ``OutsideAllowedRoots`` outside every root."""
        real = real_path(path, base)
        if any(_inside(real, root) for root in self.roots):
            return real
        given = Path(path).expanduser()
        shown = given if given.is_absolute() or base is None else base / given
        leads = "" if os.path.abspath(shown) == str(real) else f" (it leads to {real})"
        where = self.scope if self.roots else f"{self.scope} (none is open)"
        raise OutsideAllowedRoots(path, f"{shown}{leads} is outside {where}{self.advice}")

    def for_read(self, path: Path | str, base: Path | None = None) -> Path:
        """Return the real path of a regular file to read (``FileNotFoundError`` when missing)."""
        real = self.resolve(path, base)
        try:
            mode = real.stat().st_mode
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, f"{path}: no such file", str(path)) from None
        _refuse_special(path, mode)
        return real

    def for_write(self, path: Path | str, base: Path | None = None) -> Path:
        """Return the real path of a file to create or replace (an existing one must be regular)."""
        real = self.resolve(path, base)
        try:
            mode = real.stat().st_mode
        except FileNotFoundError:
            return real
        _refuse_special(path, mode)
        return real


def _refuse_special(path: Path | str, mode: int) -> None:
    kind = kind_of(mode)
    if kind is not None:
        raise NotARegularFile(path, f"{path} is {kind}, not a regular file")
