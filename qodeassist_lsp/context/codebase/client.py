"""The server's side of the codebase index: reads here, parsing and writing in a child process.

`ChildCodebaseIndex` is the `CodebaseIndex` the server uses. Its answers (``search``,
``definitions``, ``status``) are SQLite reads of the database in this process — WAL mode lets
them run while the child writes. ``build()`` and ``update()`` are requests to one
`IndexWorker` per server (per event loop), a child process (`worker`) that runs the tree-sitter
grammars, the chunker and the writes: their memory and the GIL a parse holds never touch the
server, so a completion is never delayed by indexing.

The child is started on the first request and ends itself after a minute without one; a request
while it starts waits for it. When it dies (killed, crashed, idle at the wrong moment), the
request under way is sent once more to a new child; only when that fails too does the index
report ``failed``. Closing the last index closes the child's stdin, waits for it to stop its
build between two files (each batch is one SQLite transaction, so nothing is half written) and
kills it only if it does not end in time; the child is always waited for, never a zombie.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import sys
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

import qodeassist_lsp
from qodeassist_lsp.context.codebase.limits import DEFAULT_LIMITS, IndexLimits, limits_to_json
from qodeassist_lsp.context.codebase.model import IndexStatus, ProgressCallback
from qodeassist_lsp.context.codebase.reader import IndexReader
from qodeassist_lsp.wire.errors import ErrorKind, QodeAssistError

__all__ = ["ChildCodebaseIndex", "IndexWorker", "WorkerGone"]

log = logging.getLogger("qodeassist.codebase")

_STOP_SECONDS: Final = 10.0
"""How long a closing child may take to stop its build before it is killed."""
_ATTEMPTS: Final = 2
"""A request is sent to a new child once when the child died under it."""


_PACKAGE_PARENT: Final = os.path.dirname(os.path.dirname(os.path.abspath(qodeassist_lsp.__file__)))
"""Put on the child's ``PYTHONPATH``, so it imports this very package."""


def _absolute(path: Path) -> str:
    return os.path.abspath(path)


class WorkerGone(QodeAssistError):
    """The indexer child ended before it answered."""

    error_kind = ErrorKind.UNAVAILABLE


ProgressHandler = Callable[[int, int], None]


class IndexWorker:
    """One indexer child process, started on demand, shared by the indexes of a server."""

    _shared: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, IndexWorker]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, *, idle_seconds: float | None = None) -> None:
        """Make the worker; the child starts on the first request."""
        self._idle = idle_seconds
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._start_lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.Future[dict[str, Any]], ProgressHandler | None]]
        self._waiting = {}
        self._users = 0
        self._closes = 0
        self.starts = 0
        """How many children were started (tests and the benchmark read it)."""

    @classmethod
    def shared(cls) -> IndexWorker:
        """Return the worker of the running loop (one per server), made on first use."""
        loop = asyncio.get_running_loop()
        worker = cls._shared.get(loop)
        if worker is None:
            worker = cls._shared[loop] = cls()
        return worker

    def acquire(self) -> None:
        """Count one more index using the child."""
        self._users += 1

    async def release(self) -> None:
        """Count one index less; the last one closes the child."""
        self._users = max(0, self._users - 1)
        if self._users == 0:
            await self.aclose()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs, else None."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    # -- requests ------------------------------------------------------------------------------
    async def request(
        self, op: str, payload: dict[str, Any], progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """Send one request and return its result; a dead child is replaced once."""
        closes = self._closes
        if op == "close":  # only to a running child: never started, nor restarted, for it
            return await self._request_once(op, payload, progress, start=False)
        for attempt in range(_ATTEMPTS):
            try:
                return await self._request_once(op, payload, progress)
            except WorkerGone:
                if attempt + 1 == _ATTEMPTS or self._closes != closes:
                    raise  # a second death, or `aclose` ended it on purpose
                log.info("the indexer ended during %s: starting it again", op)
        raise AssertionError("unreachable")

    async def _request_once(
        self,
        op: str,
        payload: dict[str, Any],
        progress: ProgressHandler | None,
        *,
        start: bool = True,
    ) -> dict[str, Any]:
        process = await self._running(start)
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = (future, progress)
        try:
            self._write(process, {"id": ident, "op": op, **payload})
            try:
                return await asyncio.shield(future)
            except asyncio.CancelledError:
                if op == "build" and process.returncode is None:
                    await self._stop(process, ident, future)
                raise
        finally:
            self._waiting.pop(ident, None)

    async def _stop(
        self,
        process: asyncio.subprocess.Process,
        target: int,
        future: asyncio.Future[dict[str, Any]],
    ) -> None:
        """Ask the child to stop build ``target`` and wait until it has (within one file)."""
        with contextlib.suppress(WorkerGone, OSError):
            self._write(process, {"id": next(self._ids), "op": "stop", "target": target})
        _done, pending = await asyncio.wait({future}, timeout=_STOP_SECONDS)
        if pending:
            log.warning("the indexer did not stop its build in %.0f s: ending it", _STOP_SECONDS)
            await self._end(process, kill=True)

    @staticmethod
    def _write(process: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
        stdin = process.stdin
        if stdin is None or stdin.is_closing():
            raise WorkerGone("the indexer's input is closed")
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def _running(self, start: bool = True) -> asyncio.subprocess.Process:
        async with self._start_lock:
            process = self._process
            reader = self._reader
            if process is not None and process.returncode is None and reader and not reader.done():
                return process
            if not start:
                raise WorkerGone("the indexer is not running")
            if process is not None:
                await self._end(process, kill=True)
            return await self._start()

    async def _start(self) -> asyncio.subprocess.Process:
        package_parent = _PACKAGE_PARENT
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_parent, env.get("PYTHONPATH", "")) if p
        )
        args = [sys.executable, "-m", "qodeassist_lsp.context.codebase.worker"]
        if self._idle is not None:
            args += ["--idle", str(self._idle)]
        try:
            process = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
                limit=1 << 24,
            )
        except OSError as exc:
            raise RuntimeError(
                f"the indexer process could not start ({sys.executable}): {exc}"
            ) from exc
        self._process = process
        self.starts += 1
        self._reader = asyncio.get_running_loop().create_task(
            self._read(process), name="codebase-indexer-reader"
        )
        return process

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        stdout = process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                try:
                    message = json.loads(line)
                    ident = int(message["id"])
                except (ValueError, KeyError, TypeError):
                    log.warning("the indexer wrote a line that is not an answer: %.80r", line)
                    continue
                waiting = self._waiting.get(ident)
                if waiting is None:
                    continue
                future, progress = waiting
                if "progress" in message:
                    if progress is not None:
                        done, total = message["progress"]
                        try:
                            progress(int(done), int(total))
                        except Exception:  # a broken reporter must not end the build
                            log.exception("the index progress callback failed")
                elif not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError(str(message["error"])))
                    else:
                        future.set_result(dict(message.get("result") or {}))
        except (OSError, ValueError) as exc:  # the pipe broke or a line overran the limit
            log.warning("the indexer's answers could not be read: %s", exc)
        finally:
            with contextlib.suppress(ProcessLookupError):
                if process.returncode is None and stdout.at_eof():
                    await process.wait()
            code = process.returncode
            for future, _progress in list(self._waiting.values()):
                if not future.done():
                    future.set_exception(WorkerGone(f"the indexer ended (exit code {code})"))

    # -- ending --------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """End the child: close its input, let it stop between files, kill it if it lingers."""
        self._closes += 1
        async with self._start_lock:
            process, self._process = self._process, None
            if process is not None:
                await self._end(process, kill=False)

    async def _end(self, process: asyncio.subprocess.Process, *, kill: bool) -> None:
        if process.returncode is None:
            stdin = process.stdin
            if stdin is not None and not stdin.is_closing():
                stdin.close()
            if kill:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            try:
                await asyncio.wait_for(asyncio.shield(process.wait()), _STOP_SECONDS)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        reader = self._reader
        if reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        self._reader = None


class ChildCodebaseIndex(IndexReader):
    """The `CodebaseIndex` of one folder: read here, built and updated by the indexer child."""

    def __init__(
        self,
        root: Path,
        database_path: Path,
        *,
        folders: Sequence[Path] = (),
        exclude: Sequence[str] = (),
        limits: IndexLimits = DEFAULT_LIMITS,
        worker: IndexWorker | None = None,
    ) -> None:
        """Create the index of ``root``; nothing is opened or started until first used.

        Args:
            root: The workspace folder.
            database_path: Where its database lives (`index.database_path_for`).
            folders: The workspace folders whose ignore files apply (default: ``root``).
            exclude: The ``[codebase] exclude`` patterns.
            limits: Caps and switches (the ``[codebase]`` settings).
            worker: The indexer child to use (default: the running loop's shared one).
        """
        super().__init__(root, database_path, limits)
        self._worker = worker
        self._spec: dict[str, Any] = {
            "root": str(self.root),
            "database": str(database_path),
            "folders": [str(Path(f)) for f in (folders or [self.root])],
            "exclude": list(exclude),
            "limits": limits_to_json(limits),
        }
        self._build_lock = asyncio.Lock()
        self._building: asyncio.Task[dict[str, Any]] | None = None

    def _child(self) -> IndexWorker:
        if self._worker is None:
            self._worker = IndexWorker.shared()
            self._worker.acquire()
        return self._worker

    # -- the protocol --------------------------------------------------------------------------
    async def build(self, progress: ProgressCallback | None = None) -> IndexStatus:
        """Bring the index up to date with the folder (in the child); re-reads changed files."""
        if not self._limits.enabled or self._closed:
            return self.status()

        def report(done: int, total: int) -> None:
            self._done, self._total = done, total
            self._changed()  # the child reports after writing a batch
            if progress is not None:
                progress(done, total)

        async with self._build_lock:
            if self._is_closed():
                return self.status()
            self._state, self._error = "building", None
            self._changed()
            self._building = asyncio.get_running_loop().create_task(
                self._child().request("build", {"index": self._spec}, report)
            )
            try:
                result = await asyncio.shield(self._building)
            except asyncio.CancelledError:
                request = self._building
                if not request.done() and not request.cancelling():
                    request.cancel()
                await asyncio.wait({request})
                self._state = "waiting"
                current = asyncio.current_task()
                if self._is_closed() and (current is None or not current.cancelling()):
                    return self.status()  # aclose() stopped it, not our caller
                raise
            except Exception as exc:  # the server keeps serving: the status tells the user
                self._fail(exc)
            else:
                self._skipped = {str(k): int(v) for k, v in dict(result.get("skipped", {})).items()}
                if result.get("state") == "failed":
                    self._state, self._error = "failed", result.get("error")
                else:
                    self._state = "ready" if result.get("state") == "ready" else "waiting"
            finally:
                self._building = None
                self._changed()
        return self.status()

    async def update(self, path: Path, text: str | None = None) -> None:
        """Re-index one file from ``text`` (an open buffer), from disk, or drop it if gone."""
        if not self._limits.enabled or self._closed:
            return
        payload = {"index": self._spec, "path": _absolute(path), "text": text}
        # Counted before and after: the child commits before its answer arrives here, so a
        # cache made in between is made again (see `IndexReader.generation`).
        self._changed(path)
        try:
            await self._child().request("update", payload)
        except (WorkerGone, RuntimeError) as exc:
            log.warning("the index could not update %s: %s", path, exc)
        finally:
            self._changed(path)

    async def aclose(self) -> None:
        """Stop a running build, close the database here and in the child, release the child."""
        if self._closed:
            return
        self._closed = True
        building = self._building
        if building is not None:
            building.cancel()
        async with self._build_lock:
            store, self._store = self._store, None
            if store is not None:
                await asyncio.to_thread(store.close)
        worker, self._worker = self._worker, None
        if worker is not None:
            if worker.pid is not None:
                with contextlib.suppress(WorkerGone, RuntimeError):
                    await worker.request("close", {"index": self._spec})
            await worker.release()

    # -- opening -------------------------------------------------------------------------------
    def _is_closed(self) -> bool:
        """Whether `aclose` ran (a method: it may change across an await)."""
        return self._closed
