"""`CodebaseService`: one index per workspace folder, built in the background and kept fresh.

The service owns the lifecycle of the indexes the engine (`context.codebase`) provides: it
creates one per workspace folder (its database under the data root), builds it in a task after
the door is up (the engine parses and writes in a child process, so a completion is never held
up) and reports the build through a progress port, re-indexes a file when its open buffer has
been still for ``update_delay_ms``, when it is saved and when the editor reports it created,
changed or deleted, and closes everything when ``[codebase] enabled`` turns off.

The one ignore rule is the workbench's (``.qodeassistignore`` and ``.gitignore``) plus
``[codebase] exclude``: an ignored file is never handed to the index, and every answer is
filtered again, so a file ignored after it was indexed is never returned either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pathspec import GitIgnoreSpec

from qodeassist_lsp.context.codebase.model import (
    CodebaseIndex,
    IndexStatus,
    Snippet,
    SymbolDefinition,
)
from qodeassist_lsp.context.ignore import IGNORE_FILES as FOLDER_IGNORE_FILES
from qodeassist_lsp.context.ignore import NESTED_IGNORE_FILES
from qodeassist_lsp.core.operations import FileChange, ProgressReporter, ProgressTask
from qodeassist_lsp.features.codebase.settings import CodebaseSettings

log = logging.getLogger("qodeassist.codebase")

IGNORE_FILES: Final = frozenset(FOLDER_IGNORE_FILES)
"""Files whose change may change what is indexed: a change rescans the folder."""


def _is_ignore_file(path: Path, root: Path) -> bool:
    """Whether ``path`` is one of ``root``'s ignore files (a ``.gitignore`` of any folder)."""
    return path.name in IGNORE_FILES and (path.parent == root or path.name in NESTED_IGNORE_FILES)


CHARS_PER_TOKEN: Final = 4


IndexFactory = Callable[[Path, Path, Callable[[Path], str | None], CodebaseSettings], CodebaseIndex]
"""Makes the index of ``(folder, data_root, ignored, settings)``."""


def default_factory(
    root: Path,
    data_root: Path,
    ignored: Callable[[Path], str | None],
    settings: CodebaseSettings,
    folders: Sequence[Path] = (),
) -> CodebaseIndex:
    """Return the engine's index of ``root``: read here, parsed and written in a child process.

    ``ignored`` is a callable and cannot cross into the child: the child applies the same rule
    from its parts (the ignore files of ``folders``, ``[codebase] exclude``), and the service
    filters every answer with ``ignored`` again.
    """
    from qodeassist_lsp.context.codebase.client import ChildCodebaseIndex
    from qodeassist_lsp.context.codebase.limits import IndexLimits
    from qodeassist_lsp.context.codebase.store import database_path_for

    limits = IndexLimits(max_file_bytes=settings.max_file_kb * 1024, max_files=settings.max_files)
    return ChildCodebaseIndex(
        root,
        database_path_for(data_root, root),
        folders=list(folders) or [root],
        exclude=list(settings.exclude),
        limits=limits,
    )


def _caps(settings: CodebaseSettings) -> tuple[Any, ...]:
    return (settings.max_file_kb, settings.max_files, tuple(settings.exclude))


@dataclass(frozen=True, slots=True)
class Hit:
    """A search hit in one workspace folder."""

    root: Path
    snippet: Snippet

    @property
    def path(self) -> Path:
        """The file of the hit."""
        return self.root / self.snippet.path


@dataclass(frozen=True, slots=True)
class Found:
    """A definition in one workspace folder."""

    root: Path
    definition: SymbolDefinition

    @property
    def path(self) -> Path:
        """The file of the definition."""
        return self.root / self.definition.path


@dataclass(frozen=True, kw_only=True)
class CodebaseSources:
    """What the service reads per call: settings, folders, data root, ignore rule, progress."""

    settings: Callable[[], CodebaseSettings]
    folders: Callable[[], Sequence[Path]]
    data_root: Callable[[], Path]
    ignored: Callable[[Path], str | None] = lambda _path: None
    """The workbench's one ignore rule: the ignore file that excludes a path, or None."""
    progress: ProgressReporter | None = None
    factory: IndexFactory = default_factory


@dataclass
class _Folder:
    """The index of one folder and its running build."""

    index: CodebaseIndex
    caps: tuple[Any, ...]
    """The settings the index was made with (the child applies ``exclude``): a change makes it
    anew."""
    build: asyncio.Task[None] | None = None
    state: str = "waiting"
    error: str | None = None
    done: int = 0
    total: int = 0
    again: bool = False
    """A rescan was asked for while a build ran: build once more when it ends."""
    pending: dict[Path, asyncio.Task[None]] = field(default_factory=dict)
    """Buffer edits waiting to be still for ``update_delay_ms`` (cancelled by the next edit)."""


class CodebaseService:
    """The indexes of the workspace folders: built, kept fresh, searched, closed."""

    def __init__(self, sources: CodebaseSources) -> None:
        """Serve the folders of ``sources`` (read per call)."""
        self._sources = sources
        self._folders: dict[Path, _Folder] = {}
        self._started = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._exclude: tuple[tuple[str, ...], GitIgnoreSpec | None] = ((), None)
        self._seen_folders: tuple[Path, ...] = ()

    # -- settings and rules --------------------------------------------------------------------
    @property
    def settings(self) -> CodebaseSettings:
        """The ``[codebase]`` settings now."""
        return self._sources.settings()

    def ignored(self, path: Path) -> str | None:
        """Return why ``path`` is never indexed or returned (an ignore file, the setting)."""
        reason = self._sources.ignored(path)
        if reason is not None:
            return reason
        spec = self._exclude_spec()
        if spec is not None:
            for root in self._folders or self._sources.folders():
                if path.is_relative_to(root) and spec.match_file(path.relative_to(root).as_posix()):
                    return "[codebase] exclude"
        return None

    def _exclude_spec(self) -> GitIgnoreSpec | None:
        patterns = tuple(self.settings.exclude)
        if patterns != self._exclude[0]:
            try:
                spec = GitIgnoreSpec.from_lines(patterns) if patterns else None
            except ValueError as exc:
                log.warning("[codebase] exclude has an invalid pattern (%s); none applied", exc)
                spec = None
            self._exclude = (patterns, spec)
        return self._exclude[1]

    def _is_ignored(self, path: Path) -> bool:
        return self.ignored(path) is not None

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Start indexing (after the door is up): one background build per workspace folder."""
        self._started = True
        self.sync()

    def sync(self) -> None:
        """Follow the settings and the folders: start new folders' builds, close what went."""
        if not self._started:
            return
        settings = self.settings
        self._seen_folders = tuple(Path(f) for f in self._sources.folders())
        wanted = list(self._seen_folders) if settings.enabled else []
        caps = _caps(settings)
        for root in list(self._folders):
            if root not in wanted or self._folders[root].caps != caps:
                self._spawn(self._close(self._folders.pop(root)))
        for root in wanted:
            if root not in self._folders:
                try:
                    data_root = self._sources.data_root()
                    if self._sources.factory is default_factory:  # the child needs the folders
                        index = default_factory(
                            root, data_root, self.ignored, settings, self._seen_folders
                        )
                    else:
                        index = self._sources.factory(root, data_root, self.ignored, settings)
                except Exception as exc:  # a broken database must not stop the door
                    log.warning("codebase index of %s could not open: %s", root, exc)
                    continue
                folder = self._folders[root] = _Folder(index, caps)
                self._schedule_build(root, folder)

    def _schedule_build(self, root: Path, folder: _Folder) -> None:
        if folder.build is not None and not folder.build.done():
            folder.again = True
            return
        folder.build = asyncio.get_running_loop().create_task(
            self._build(root, folder), name=f"codebase-build-{root.name}"
        )

    async def _build(self, root: Path, folder: _Folder) -> None:
        loop, loop_thread = asyncio.get_running_loop(), threading.get_ident()
        progress = await self._begin(f"QodeAssist: indexing {root.name}")
        folder.state, folder.error, folder.done, folder.total = "building", None, 0, 0

        def on_progress(done: int, total: int) -> None:
            def note() -> None:
                folder.done, folder.total = done, total
                if progress is not None and total:
                    progress.report(f"{done}/{total} files", min(100, done * 100 // total))

            if threading.get_ident() == loop_thread:
                note()
                return
            # the engine reports from its worker thread
            with contextlib.suppress(RuntimeError):  # the loop closed mid-build (shutdown)
                loop.call_soon_threadsafe(note)

        try:
            while True:
                folder.again = False
                status = await folder.index.build(on_progress)
                if not folder.again:
                    break
            if status.state == "failed":  # the engine says why (e.g. an unwritable data folder)
                folder.state, folder.error = "failed", status.error
                if progress is not None:
                    progress.end(f"failed: {status.error}")
                return
            folder.state = "ready"
            if progress is not None:
                progress.end(f"{status.files} files, {status.symbols} symbols indexed")
        except asyncio.CancelledError:
            if progress is not None:
                progress.end("stopped")
            raise
        except Exception as exc:
            log.warning("codebase index of %s failed: %s", root, exc)
            folder.state, folder.error = "failed", str(exc)
            if progress is not None:
                progress.end(f"failed: {exc}")

    async def _begin(self, title: str) -> ProgressTask | None:
        reporter = self._sources.progress
        if reporter is None:
            return None
        try:
            return await reporter.begin(title, "scanning")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a client that refuses progress must not stop the build
            log.debug("no build progress: %s", exc)
            return None

    async def reindex(self, *, wait: bool = False) -> dict[str, Any]:
        """Rescan every folder (only changed files are re-read); with ``wait``, until done."""
        if not self._started:
            await self.start()
        self.sync()
        for root, folder in self._folders.items():
            self._schedule_build(root, folder)
        if wait:
            await self.settled()
        return self.status()

    async def ready(self, within: float) -> bool:
        """Wait (at most ``within`` seconds) for the running builds; return whether all ended.

        A tool call made while the first build runs would see part of the project; a short
        wait gives it the whole of a small one, and a big one is searched as far as it got.
        """
        builds = [f.build for f in self._folders.values() if f.build and not f.build.done()]
        if not builds:
            return True
        _done, pending = await asyncio.wait(builds, timeout=within)
        return not pending

    async def settled(self) -> None:
        """Wait until no build and no delayed update runs."""
        while True:
            running = [f.build for f in self._folders.values() if f.build and not f.build.done()]
            running += [t for t in self._tasks if not t.done()]
            if not running:
                return
            await asyncio.gather(*running, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop the builds and close every index."""
        self._started = False
        folders, self._folders = list(self._folders.values()), {}
        for folder in folders:
            await self._close(folder)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _close(self, folder: _Folder) -> None:
        for waiting in folder.pending.values():
            waiting.cancel()
        folder.pending.clear()
        if folder.build is not None and not folder.build.done():
            folder.build.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await folder.build
        try:
            await folder.index.aclose()
        except Exception as exc:
            log.warning("closing a codebase index failed: %s", exc)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- freshness ----------------------------------------------------------------------------
    def _folder_of(self, path: Path) -> tuple[Path, _Folder] | None:
        best: tuple[Path, _Folder] | None = None
        for root, folder in self._folders.items():
            if path.is_relative_to(root) and (best is None or len(root.parts) > len(best[0].parts)):
                best = (root, folder)
        return best

    def changed(self, path: Path, text: str | None) -> None:
        """Re-index ``path`` (an open buffer's ``text``) once it has been still a while."""
        found = self._folder_of(path)
        if found is None:
            return
        root, folder = found
        if _is_ignore_file(path, root):
            return  # an unsaved ignore file changes nothing yet
        old = folder.pending.pop(path, None)
        if old is not None:
            old.cancel()
        delay = self.settings.update_delay_ms / 1000
        task = asyncio.get_running_loop().create_task(self._delayed(folder, path, text, delay))
        folder.pending[path] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _delayed(self, folder: _Folder, path: Path, text: str | None, delay: float) -> None:
        await asyncio.sleep(delay)
        if folder.pending.get(path) is asyncio.current_task():
            del folder.pending[path]  # from here on the next edit waits its turn, not cancels
        await self._update(folder, path, text)

    async def saved(self, path: Path, text: str | None = None) -> None:
        """Re-index ``path`` now (saved: ``text`` is what was saved, None reads the disk)."""
        await self.file_event(path, text)

    async def file_event(self, path: Path, text: str | None = None) -> None:
        """Re-index ``path`` now: created, changed or deleted on disk (or saved)."""
        found = self._folder_of(path)
        if found is None:
            return
        root, folder = found
        old = folder.pending.pop(path, None)
        if old is not None:
            old.cancel()
        if _is_ignore_file(path, root):
            self._schedule_build(root, folder)  # what is ignored changed: rescan
            return
        await self._update(folder, path, text)

    async def _update(self, folder: _Folder, path: Path, text: str | None) -> None:
        try:
            if self._is_ignored(path):
                return  # never read; one indexed before its ignore file changed went in a rescan
            await folder.index.update(path, text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one bad file never stops the index
            log.warning("re-indexing %s failed: %s", path, exc)

    # -- answers ------------------------------------------------------------------------------
    def _follow_folders(self) -> None:
        """Index a workspace folder added since the last look; drop a removed one."""
        if not self._started:
            return
        folders = tuple(Path(f) for f in self._sources.folders())
        if folders != self._seen_folders:
            self._seen_folders = folders
            self.sync()

    def index_for(self, path: Path) -> CodebaseIndex | None:
        """Return the index of the folder holding ``path``, or None (off, no folder, failed)."""
        self._follow_folders()
        found = self._folder_of(path)
        if found is None or found[1].state in ("failed", "waiting"):
            return None
        return found[1].index

    def search(self, query: str, limit: int | None = None) -> list[Hit]:
        """Return the best snippets for ``query`` over every folder, best first."""
        self._follow_folders()
        cap = self.settings.search_limit
        limit = cap if limit is None else max(1, min(limit, cap))
        if not query.strip():
            return []
        hits: list[Hit] = []
        for root, folder in list(self._folders.items()):
            if folder.state in ("failed",):
                continue
            try:
                found = folder.index.search(query, limit + 5)
            except Exception as exc:
                log.warning("codebase search in %s failed: %s", root, exc)
                continue
            hits += [Hit(root, s) for s in found if not self._is_ignored(root / s.path)]
        hits.sort(key=lambda hit: hit.snippet.rank)
        return hits[:limit]

    def definitions(self, name: str, limit: int = 5) -> list[Found]:
        """Return where ``name`` is defined, over every folder."""
        self._follow_folders()
        name = name.strip()
        if not name:
            return []
        found: list[Found] = []
        for root, folder in list(self._folders.items()):
            if folder.state in ("failed",):
                continue
            try:
                definitions = folder.index.definitions(name, limit)
            except Exception as exc:
                log.warning("codebase definitions in %s failed: %s", root, exc)
                continue
            found += [Found(root, d) for d in definitions if not self._is_ignored(root / d.path)]
        return found[:limit]

    def for_mention(self, query: str) -> list[Hit]:
        """Return the snippets ``@codebase`` attaches for ``query``, within the budget."""
        settings = self.settings
        budget = settings.mention_budget_tokens * CHARS_PER_TOKEN
        chosen: list[Hit] = []
        for hit in self.search(query, settings.mention_snippets):
            size = len(hit.snippet.text)
            if size > budget:
                if chosen:
                    break
                text = hit.snippet.text[:budget]
                hit = Hit(hit.root, replace(hit.snippet, text=text))
                size = len(text)
            chosen.append(hit)
            budget -= size
        return chosen

    def status(self) -> dict[str, Any]:
        """Return the status part ``codebase`` of ``qodeassist/status``."""
        if not self.settings.enabled:
            return {"state": "off", "files": 0, "chunks": 0, "symbols": 0, "done": 0, "total": 0}
        folders = [self._folder_status(root, folder) for root, folder in self._folders.items()]
        states = [f["state"] for f in folders]
        state = "waiting"
        for candidate in ("failed", "building", "waiting", "ready"):
            if candidate in states:
                state = candidate
                break
        total = {k: sum(f[k] for f in folders) for k in ("files", "chunks", "symbols")}
        progress = {k: sum(f[k] for f in folders) for k in ("done", "total")}
        return {"state": state, **total, **progress, "folders": folders}

    def _folder_status(self, root: Path, folder: _Folder) -> dict[str, Any]:
        try:
            status = folder.index.status()
        except Exception as exc:
            status = IndexStatus(state="failed", root=str(root), error=str(exc))
        state = folder.state if folder.state in ("building", "failed", "waiting") else status.state
        size = 0
        if status.database:
            with contextlib.suppress(OSError):
                size = os.stat(status.database).st_size
        return {
            "root": str(root),
            "state": state,
            "files": status.files,
            "chunks": status.chunks,
            "symbols": status.symbols,
            "done": folder.done if folder.state == "building" else status.done,
            "total": folder.total if folder.state == "building" else status.total,
            "database": status.database,
            "size": size,
            "error": folder.error or status.error,
            "skipped": dict(status.skipped),
        }

    def files_changed(self, changes: Sequence[FileChange]) -> None:
        """Follow what a door saw: buffer edits (delayed), saves and files on disk (at once)."""
        for change in changes:
            if change.kind == "opened":
                continue
            if change.kind == "changed" and change.text is not None:
                self.changed(change.path, change.text)
            elif self._folder_of(change.path) is not None:
                text = change.text if change.kind == "saved" else None
                self._spawn(self.file_event(change.path, text))
