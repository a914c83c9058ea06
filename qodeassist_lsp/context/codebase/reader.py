"""`IndexReader`: the read side of a codebase index — its answers, its status, its database.

Both indexes answer from the same SQLite database the same way: `index.SqliteCodebaseIndex`
(builds in a worker thread; the engine inside the indexer child) and
`client.ChildCodebaseIndex` (the server's, which leaves building to that child). They share
this class, so a search, a lookup or a status reads alike whichever one a caller holds, and it
imports neither tree-sitter nor the chunker.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from qodeassist_lsp.context.codebase.limits import IndexLimits
from qodeassist_lsp.context.codebase.model import (
    IndexState,
    IndexStatus,
    Snippet,
    SymbolDefinition,
)
from qodeassist_lsp.context.codebase.store import IndexStore

__all__ = ["IndexReader"]

log = logging.getLogger("qodeassist.codebase")


class IndexReader:
    """Answers and status of one folder's index database; subclasses add building."""

    def __init__(self, root: Path, database_path: Path, limits: IndexLimits) -> None:
        """Read the index of ``root`` in ``database_path``; nothing is opened until first used."""
        self.root = Path(os.path.abspath(root))
        self.database_path = database_path
        self._limits = limits
        self._store: IndexStore | None = None
        self._open_lock = threading.Lock()
        self._closed = False
        self._state: IndexState = "waiting" if limits.enabled else "off"
        self._error: str | None = None
        self._done = 0
        self._total = 0
        self._skipped: dict[str, int] = {}
        self._latest: tuple[int, str | None] = (0, None)
        """The newest change: its generation and the file it changed (None: many, a build)."""
        self._before_latest = 0
        """The newest generation that changed a file other than ``_latest``'s."""

    def generation(self, excluding: str | None = None) -> int:
        """Return a number that grows whenever this index writes (see `CodebaseIndex`).

        ``excluding``: an absolute path whose own updates do not count, so a cache of what
        *other* files define stays valid while the user types in that one. A writer counts a
        change when it starts and again when it ends: a cache made while it wrote is made again.
        """
        latest, path = self._latest
        if excluding is not None and path == excluding:
            return self._before_latest
        return latest

    def _changed(self, path: Path | None = None) -> None:
        """Count one write: of ``path`` (an ``update``), or of any number of files (a build)."""
        latest, previous = self._latest
        named = None if path is None else os.path.abspath(path)
        if named is None or named != previous:
            self._before_latest = latest + 1 if named is None else latest
        self._latest = (latest + 1, named)

    def search(self, query: str, limit: int = 10) -> list[Snippet]:
        """Return the chunks best matching ``query`` (BM25), best first."""
        store = self._open_quietly()
        if store is None:
            return []
        try:
            return store.search(query, limit)
        except sqlite3.Error as exc:
            log.warning("the index search for %r failed: %s", query, exc)
            return []

    def definitions(self, name: str, limit: int = 5) -> list[SymbolDefinition]:
        """Return where ``name`` (``Class``, ``func``, or ``Class.method``) is defined."""
        return self.definitions_of([name], limit)

    def definitions_of(self, names: Sequence[str], limit: int = 8) -> list[SymbolDefinition]:
        """Return definitions of several names at once (one query; completion's hot path)."""
        store = self._open_quietly()
        if store is None:
            return []
        try:
            return store.definitions(names, limit)
        except sqlite3.Error as exc:
            log.warning("the index lookup of %s failed: %s", list(names)[:5], exc)
            return []

    def status(self) -> IndexStatus:
        """Return the index's state and counts now."""
        files = chunks = symbols = 0
        store = self._store
        if store is None and self._limits.enabled and self.database_path.is_file():
            store = self._open_quietly()  # the last session's index, before any build
        if store is not None and not self._closed:
            with contextlib.suppress(sqlite3.Error):
                files, chunks, symbols = store.counts()
        return IndexStatus(
            state=self._state,
            root=str(self.root),
            files=files,
            chunks=chunks,
            symbols=symbols,
            done=self._done,
            total=self._total,
            database=str(self.database_path) if self._limits.enabled else "",
            error=self._error,
            skipped=dict(self._skipped),
        )

    def _open(self) -> IndexStore:
        with self._open_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the index is closed")
            if self._store is None:
                self._store = IndexStore(self.database_path)
            return self._store

    def _open_quietly(self) -> IndexStore | None:
        if not self._limits.enabled or self._closed:
            return None
        try:
            return self._open()
        except (OSError, sqlite3.Error) as exc:
            self._fail(exc)
            return None

    def _fail(self, exc: BaseException) -> None:
        self._state = "failed"
        self._error = (
            f"the codebase index of {self.root} failed: {exc} (database {self.database_path}); "
            "check that the data folder is writable, or turn the index off with "
            "`enabled = false` in [codebase]"
        )
        log.warning("%s", self._error)
