"""What the edit tools need from the editor, as protocols the LSP layer implements.

Nothing below ``lsp/`` may speak LSP, so the open buffers (which win over the disk) and
``workspace/applyEdit`` (or an ACP client's ``fs/*`` methods) are reached through
`EditorBuffers`; `NoEditor` stands in where there is
no editor (the command line, tests): every file is then read from and written to disk.
`ParseCheck` is the whole-file parse check (``context/parse_check.py``), handed in by the host:
``tools`` and ``context`` are independent siblings of one layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from qodeassist_lsp.core.events import ParseStatus

ParseCheck = Callable[[Path, str | None, str], tuple[ParseStatus, str]]
"""``(path, text before or None for a new file, text after)`` → ``(status, reason)``."""


def no_parse_check(path: Path, before: str | None, after: str) -> tuple[ParseStatus, str]:
    """Judge nothing (the host gave no check): every edit is ``unchecked``."""
    return "unchecked", ""


@dataclass(frozen=True, slots=True)
class OpenText:
    """An open document: its URI as the editor names it, and its current text."""

    uri: str
    text: str


class EditorBuffers(Protocol):
    """The editor's open documents."""

    async def find_open(self, path: Path) -> OpenText | None:
        """Return the open document of the real path ``path``, or None when it is not open.

        Async: an ACP client is asked for its buffer (``fs/read_text_file``).
        """
        ...

    async def replace_open(self, uri: str, old: str, new: str) -> None:
        """Change the open document ``uri`` from ``old`` to ``new`` (raise `EditRefused`)."""
        ...


class NoEditor:
    """No open documents: files are read from and written to disk."""

    async def find_open(self, path: Path) -> OpenText | None:
        """Return None: nothing is open."""
        return None

    async def replace_open(self, uri: str, old: str, new: str) -> None:
        """Never called: nothing is open."""
        raise AssertionError("NoEditor has no open documents")
