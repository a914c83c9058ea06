"""`SqliteCodebaseIndex`: the `CodebaseIndex` of one workspace folder, on SQLite FTS5.

``build()`` is a stat scan: it walks the folder (``scanner``), compares each file's mtime and
size with what the database stored, and re-reads only the files that differ (and, when their
content hash is unchanged after all, only records the new signature); files gone from the folder
are dropped. The reading, parsing and writing run in a worker thread, in batches of files each
written in one transaction, so the event loop keeps serving; a stop flag checked between files
makes ``aclose()`` or cancelling the build's task end it within one file. ``update()`` re-indexes
one file from an open buffer or from disk.

Atomic writes: each batch of whole files is one WAL transaction, and the database stays in place
— no temporary database renamed over it at the end of a first build — because another process
(a second editor on the same project) may have it open, and a rename would leave that process
reading a deleted file while the next incremental update had to write in place anyway. A reader
sees the index grow file by file during a first build, which is what an impatient chat wants.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from qodeassist_lsp.config.confinement import real_path
from qodeassist_lsp.context.codebase.chunker import Chunker
from qodeassist_lsp.context.codebase.limits import DEFAULT_LIMITS, IndexLimits
from qodeassist_lsp.context.codebase.model import IndexStatus, ProgressCallback
from qodeassist_lsp.context.codebase.reader import IndexReader
from qodeassist_lsp.context.codebase.scanner import (
    PRUNED_DIRS,
    IgnoredPredicate,
    ScannedFile,
    classify_content,
    default_ignored,
    skip_reason_by_name,
    walk,
)
from qodeassist_lsp.context.codebase.store import FileRecord, IndexStore, database_path_for
from qodeassist_lsp.context.syntax import SyntaxChecker

__all__ = ["SqliteCodebaseIndex", "database_path_for"]

log = logging.getLogger("qodeassist.codebase")

_BATCH_FILES: Final = 64
_BATCH_SECONDS: Final = 0.2
"""A batch is written when it holds this many files or took this long: short write locks."""


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


class SqliteCodebaseIndex(IndexReader):
    """The index of one workspace folder in one SQLite database (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        database_path: Path,
        *,
        ignored: IgnoredPredicate | None = None,
        limits: IndexLimits = DEFAULT_LIMITS,
        checker: SyntaxChecker | None = None,
    ) -> None:
        """Create the index of ``root``; nothing is opened or read until first used.

        Args:
            root: The workspace folder.
            database_path: Where its database lives (`database_path_for`).
            ignored: The ignore rule (the workbench's ``.gitignore``/``.qodeassistignore``
                predicate); by default the folder's own ignore files.
            limits: Caps and switches (the ``[codebase]`` settings).
            checker: Whose tree-sitter parsers to use (shared with the parse check).
        """
        super().__init__(root, database_path, limits)
        self._real_root = real_path(self.root)
        self._ignored = ignored or default_ignored(self.root)
        self._chunker = Chunker(limits, checker)
        self._build_lock = asyncio.Lock()
        self._stop = threading.Event()
        self._write_guard = threading.Lock()
        self._sequence = itertools.count()
        self._updated: dict[str, tuple[int, float]] = {}
        """Per path: the newest ``update()`` written (its call order, when it was written)."""

    # -- the protocol --------------------------------------------------------------------------
    async def build(self, progress: ProgressCallback | None = None) -> IndexStatus:
        """Bring the index up to date with the folder; re-reads only files that changed."""
        if not self._limits.enabled or self._closed:
            return self.status()
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:
            self._done, self._total = done, total
            if progress is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(_call_progress, progress, done, total)

        async with self._build_lock:
            self._stop.clear()
            self._state, self._error = "building", None
            self._changed()
            future = loop.run_in_executor(None, self._build_in_thread, report)
            try:
                finished = await asyncio.shield(future)
            except asyncio.CancelledError:
                self._stop.set()
                await asyncio.wait({future})
                self._state = "waiting"
                raise
            except Exception as exc:  # the server keeps serving: the status tells the user
                self._fail(exc)
            else:
                self._state = "ready" if finished else "waiting"
            finally:
                self._changed()
        return self.status()

    async def update(self, path: Path, text: str | None = None) -> None:
        """Re-index one file from ``text`` (an open buffer), from disk, or drop it if gone."""
        if not self._limits.enabled or self._closed:
            return
        order = next(self._sequence)  # calls are ordered here; their threads may not be
        self._changed(path if Path(path).is_absolute() else self.root / path)
        try:
            await asyncio.to_thread(self._update_in_thread, Path(path), text, order)
        except (OSError, sqlite3.Error) as exc:
            log.warning("the index could not update %s: %s", path, exc)
        finally:
            self._changed(path if Path(path).is_absolute() else self.root / path)

    async def aclose(self) -> None:
        """Stop a running build and close the database."""
        self._closed = True
        self._stop.set()
        async with self._build_lock:
            store, self._store = self._store, None
            if store is not None:
                await asyncio.to_thread(store.close)

    # -- the worker thread ---------------------------------------------------------------------
    def _build_in_thread(self, report: Callable[[int, int], None]) -> bool:
        """Run one build; on a corrupt database start it afresh once. True when it finished."""
        try:
            return self._scan(self._open(), report)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            log.warning(
                "the index database %s is damaged (%s): rebuilding", self.database_path, exc
            )
            store = self._open()
            store.reset()
            return self._scan(store, report)

    def _scan(self, store: IndexStore, report: Callable[[int, int], None]) -> bool:
        scan_started = time.monotonic()
        stored = store.signatures()
        skipped: dict[str, int] = {}
        scanned: list[ScannedFile] = []
        for found in walk(self.root, self._limits, self._ignored, skipped, self._stop.is_set):
            if len(scanned) >= self._limits.max_files:
                skipped["too_many"] = skipped.get("too_many", 0) + 1
                continue
            scanned.append(found)
        if self._stop.is_set():
            return False
        present = {found.relative for found in scanned}
        deleted = [path for path in stored if path not in present]
        changed = [
            found
            for found in scanned
            if stored.get(found.relative, (None, None, None))[:2] != (found.mtime_ns, found.size)
        ]
        total = len(scanned)
        done = total - len(changed)
        report(done, total)
        records: list[tuple[FileRecord, float]] = []
        touched: list[tuple[str, int, int]] = []
        started = time.monotonic()
        for found in changed:
            if self._stop.is_set():
                break
            stored_hash = stored.get(found.relative, (None, None, None))[2]
            read_at = time.monotonic()
            record = self._read(found.relative, found.path, None, stored_hash, found)
            if record is None:
                touched.append((found.relative, found.mtime_ns, found.size))
            else:
                records.append((record, read_at))
            done += 1
            if len(records) + len(touched) >= _BATCH_FILES or (
                time.monotonic() - started >= _BATCH_SECONDS
            ):
                self._write_scanned(store, records, deleted, touched, scan_started)
                records, touched, deleted = [], [], []
                started = time.monotonic()
                report(done, total)
        if records or touched or deleted:
            self._write_scanned(store, records, deleted, touched, scan_started)
        report(done, total)
        for reason, count in store.skipped_counts().items():
            skipped[reason] = skipped.get(reason, 0) + count
        self._skipped = skipped
        return not self._stop.is_set()

    def _write_scanned(
        self,
        store: IndexStore,
        records: list[tuple[FileRecord, float]],
        deleted: list[str],
        touched: list[tuple[str, int, int]],
        scan_started: float,
    ) -> None:
        """Write a build's batch, except what an ``update()`` wrote since the build read it."""
        with self._write_guard:
            never: tuple[int, float] = (-1, float("-inf"))
            store.write(
                [
                    record
                    for record, read_at in records
                    if self._updated.get(record.path, never)[1] < read_at
                ],
                [path for path in deleted if self._updated.get(path, never)[1] < scan_started],
                [item for item in touched if item[0] not in self._updated],
            )

    def _read(
        self,
        relative: str,
        path: Path,
        text: str | None,
        stored_hash: str | None,
        signature: ScannedFile | None,
    ) -> FileRecord | None:
        """Return the new record of one file, or None when its content is what is stored."""
        if signature is not None:
            mtime_ns, size = signature.mtime_ns, signature.size
        else:
            try:
                info = path.stat()
                mtime_ns, size = info.st_mtime_ns, info.st_size
            except OSError:
                mtime_ns, size = 0, 0
        if text is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read(self._limits.max_file_bytes + 1)
            except OSError as exc:
                log.info("the index cannot read %s: %s", path, exc)
                return FileRecord(relative, mtime_ns, size, None, None, "unreadable")
        else:
            data = text.encode("utf-8", "surrogatepass")
        if len(data) > self._limits.max_file_bytes:
            return FileRecord(relative, mtime_ns, size, None, None, "too_large")
        digest = _digest(data)
        if digest == stored_hash:
            return None
        reason = classify_content(data)
        if reason is not None:
            return FileRecord(relative, mtime_ns, size, digest, None, reason)
        if not self._limits.text_files and self._chunker.grammar_for(relative) is None:
            return FileRecord(relative, mtime_ns, size, digest, None, "no_grammar")
        content = text if text is not None else data.decode("utf-8", "replace")
        try:
            chunks = self._chunker.chunk(relative, content, incremental=text is not None)
        except Exception:  # one odd file must not cost the whole index
            log.exception("the index could not cut %s into chunks", relative)
            return FileRecord(relative, mtime_ns, size, digest, None, "unparsable")
        return FileRecord(relative, mtime_ns, size, digest, chunks)

    def _update_in_thread(self, path: Path, text: str | None, order: int) -> None:
        relative = self._relative(path)
        if relative is None:
            return
        store = self._open()
        absolute = self.root / relative
        if self._excluded(absolute, relative) or (text is None and not absolute.is_file()):
            self._write_update(store, relative, order, deleted=True)
            return
        record = self._read(relative, absolute, text, store.stored_hash(relative), None)
        if record is None:
            return  # the content is what the index holds
        self._write_update(store, relative, order, record)

    def _write_update(
        self,
        store: IndexStore,
        relative: str,
        order: int,
        record: FileRecord | None = None,
        deleted: bool = False,
    ) -> None:
        """Write one ``update()``'s result unless a later call's result is already written."""
        with self._write_guard:
            if self._updated.get(relative, (-1, 0.0))[0] > order:
                return
            store.write([record] if record is not None else [], [relative] if deleted else [])
            self._updated[relative] = (order, time.monotonic())

    def _relative(self, path: Path) -> str | None:
        """Return ``path`` relative to the folder (POSIX); None outside it, symlinks followed."""
        absolute = Path(os.path.abspath(path if path.is_absolute() else self.root / path))
        for base in (self.root, self._real_root):
            if absolute.is_relative_to(base) and absolute != base:
                relative = absolute.relative_to(base).as_posix()
                if not real_path(self.root / relative).is_relative_to(self._real_root):
                    return None  # a symlink leading out of the folder
                return relative
        return None

    def _excluded(self, absolute: Path, relative: str) -> bool:
        parts = relative.split("/")
        pruned = PRUNED_DIRS | self._limits.exclude_dirs
        if any(part in pruned or part.endswith(".egg-info") for part in parts[:-1]):
            return True
        if skip_reason_by_name(parts[-1]) is not None:
            return True
        return self._ignored(absolute) is not None


def _call_progress(progress: ProgressCallback, done: int, total: int) -> None:
    try:
        progress(done, total)
    except Exception:  # a broken progress reporter must not end the build
        log.exception("the index progress callback failed")
