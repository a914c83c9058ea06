"""What file tools may reach: the workspace folders, through the one path resolver.

Every path a tool touches goes through ``ToolWorkspace.resolve``: relative paths are taken from
the first workspace folder, symlinks are followed, and ``config.confinement.Confinement`` refuses
anything outside the workspace folders and the user's ``general.allowed_roots``. Paths excluded
by ``.qodeassistignore`` (or ``.gitignore``) are refused as such, and left out of listings and
searches. The ignore rules, the editor's open buffers, an editor that reads files (ACP) and a
runner for programs (an ACP client's terminal) come in through protocols, since the
tool kit may not import the ``context`` package; the LSP layer implements them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from qodeassist_lsp.config.confinement import Confinement, NotARegularFile, PathRefused
from qodeassist_lsp.tools.program_result import Finished

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
"""Version-control folders: never listed, searched or read by the kit's walks."""


class IgnoreRules(Protocol):
    """Says which paths the user excluded from what tools may see."""

    def ignored_by(self, path: Path) -> str | None:
        """Return the ignore file that excludes ``path`` (absolute), or None."""
        ...


class OpenBuffers(Protocol):
    """The editor's open documents: their unsaved text wins over the file on disk."""

    def text_of(self, path: Path) -> str | None:
        """Return the buffer text of ``path`` if it is open, else None."""
        ...


class EditorFiles(Protocol):
    """An editor that reads files for the tools (an ACP client with ``fs.readTextFile``)."""

    async def read_text(self, path: Path) -> str | None:
        """Return the editor's text of ``path`` (unsaved changes included), None: read disk."""
        ...


class ProgramRunner(Protocol):
    """Runs an execute tool's program somewhere else (an ACP client's terminal)."""

    async def __call__(
        self,
        argv: Sequence[str],
        cwd: Path,
        timeout_s: float,
        *,
        env: Mapping[str, str] | None = None,
    ) -> Finished:
        """Run ``argv`` in ``cwd`` (``env`` added) for at most ``timeout_s`` s; say what it did."""
        ...


class _NothingIgnored:
    def ignored_by(self, path: Path) -> str | None:
        return None


class _NoBuffers:
    def text_of(self, path: Path) -> str | None:
        return None


class PathIgnored(PathRefused):
    """The path is excluded by an ignore file."""


Kind = Literal["file", "folder", "any"]


@dataclass(frozen=True)
class ToolWorkspace:
    """The folders, roots, ignore rules and buffers of one tool call."""

    folders: tuple[Path, ...]
    """Workspace folders (real paths); relative paths are taken from the first."""
    confinement: Confinement
    ignore: IgnoreRules = field(default_factory=_NothingIgnored)
    buffers: OpenBuffers = field(default_factory=_NoBuffers)
    editor: EditorFiles | None = None
    """Reads files through the editor; None: buffers, then disk."""
    runner: ProgramRunner | None = None
    """Runs execute tools' programs; None: here (``tools.process.run_program``)."""

    @classmethod
    def of(
        cls,
        folders: list[Path],
        allowed: list[str] | tuple[str, ...] = (),
        ignore: IgnoreRules | None = None,
        buffers: OpenBuffers | None = None,
        *,
        editor: EditorFiles | None = None,
        runner: ProgramRunner | None = None,
    ) -> ToolWorkspace:
        """Return the workspace of ``folders`` plus the user's ``allowed`` roots."""
        confinement = Confinement.of(folders, allowed)
        real = tuple(Path(os.path.realpath(f)) for f in folders)
        ignored = ignore or _NothingIgnored()
        return cls(real, confinement, ignored, buffers or _NoBuffers(), editor, runner)

    @property
    def root(self) -> Path | None:
        """The first workspace folder (where relative paths start), None without one."""
        return self.folders[0] if self.folders else None

    def resolve(self, given: str, kind: Kind = "any") -> Path:
        """Return the real path of ``given``; refuse it outside the roots, ignored or missing."""
        text = given.strip()
        if not text:
            raise PathRefused(given, "the path is empty; give a path relative to the workspace")
        if "\0" in text:
            raise PathRefused(given, "the path contains a NUL character")
        if self.root is None and not Path(text).expanduser().is_absolute():
            raise PathRefused(given, f"{text}: no workspace folder is open to resolve it against")
        real = self.confinement.resolve(text, self.root)
        self.refuse_ignored(real, text)
        if not real.exists():
            raise FileNotFoundError(f"{text}: no such file or folder (it resolves to {real})")
        if kind == "file" and not real.is_file():
            what = "a folder" if real.is_dir() else "not a regular file"
            raise NotARegularFile(given, f"{text} is {what}; give the path of a file")
        if kind == "folder" and not real.is_dir():
            raise NotARegularFile(given, f"{text} is not a folder")
        return real

    def refuse_ignored(self, real: Path, shown: str) -> None:
        """Raise ``PathIgnored`` when an ignore file excludes ``real``."""
        source = self.ignore.ignored_by(real)
        if source is not None:
            raise PathIgnored(
                real,
                f"{shown} is excluded by {source}; tools may not read it (edit {source} to "
                "change that)",
            )

    def shown(self, path: Path) -> str:
        """Return ``path`` as the model and the user see it: relative to its workspace folder."""
        for folder in self.folders:
            if path == folder:
                return "."
            if path.is_relative_to(folder):
                return path.relative_to(folder).as_posix()
        return str(path)

    def walk(self, start: Path) -> Iterator[Path]:
        """Yield the files under ``start`` (sorted per folder), skipping ignored and VCS dirs.

        Symlinks are not followed into folders; a symlinked file that leads outside the roots
        or into an ignored place is skipped.
        """
        for folder, dirs, files in os.walk(start):
            here = Path(folder)
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in SKIPPED_DIRS and self.ignore.ignored_by(here / d) is None
            )
            for name in sorted(files):
                path = here / name
                if self.ignore.ignored_by(path) is not None:
                    continue
                if path.is_symlink() and not self._reachable(path):
                    continue
                yield path

    def _reachable(self, path: Path) -> bool:
        if not self.confinement.contains(path):
            return False
        return self.ignore.ignored_by(Path(os.path.realpath(path))) is None
