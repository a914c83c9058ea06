"""The indexer child process: ``python -m qodeassist_lsp.context.codebase.worker``.

The server's codebase index (`client.ChildCodebaseIndex`) hands the reading, parsing, chunking
and writing to this process, so tree-sitter's grammars, its parse trees and the chunker's work
(memory, and the GIL a parse holds) stay out of the server. One child serves every workspace
folder of one server; it runs one `SqliteCodebaseIndex` per database, which keeps its
incremental parse trees between updates as before.

The protocol is one JSON object per line. Requests on stdin::

    {"id": 1, "op": "build", "index": SPEC}
    {"id": 2, "op": "update", "index": SPEC, "path": "/abs/file.py", "text": "..." | null}
    {"id": 3, "op": "stop", "target": 1}        # stop build 1 (it answers as stopped)
    {"id": 4, "op": "close", "index": SPEC}     # close that database

``SPEC`` names the folder (``root``), its ``database``, the `IndexLimits` and the ignore rule's
parts: the workspace ``folders`` (whose ``.qodeassistignore`` and ``.gitignore`` files apply, as
the workbench's `FolderIgnores`) and the ``[codebase] exclude`` patterns. Answers on stdout:
``{"id": 1, "progress": [done, total]}`` while a build runs, then exactly one
``{"id": 1, "result": {...}}`` or ``{"id": 1, "error": "..."}``.

The child ends when its stdin closes (the server closed the index or died) and when it has
had nothing to do for ``--idle`` seconds; either way a running build is stopped between files
and every database closed, so no transaction is left half written.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Final

from pathspec import GitIgnoreSpec

from qodeassist_lsp.context.codebase.index import SqliteCodebaseIndex
from qodeassist_lsp.context.codebase.limits import limits_from_json
from qodeassist_lsp.context.ignore import FolderIgnores

__all__ = ["IgnoreRule", "main"]

log = logging.getLogger("qodeassist.codebase.worker")

DEFAULT_IDLE_SECONDS: Final = 60.0
"""The child exits after this long without a request (the next one starts it again)."""


class IgnoreRule:
    """The server's ignore rule rebuilt in the child: the folders' ignore files and the setting.

    The same as the codebase service's ``ignored``: the ``.qodeassistignore`` at the root of each
    workspace folder and its ``.gitignore`` files, nested ones too (`FolderIgnores`, re-read when
    they change), then the ``[codebase] exclude`` patterns relative to the folder a path is in.
    """

    def __init__(self, folders: Sequence[Path], exclude: Sequence[str]) -> None:
        """Apply the ignore files of ``folders`` and the ``exclude`` patterns."""
        self._folders = [Path(folder) for folder in folders]
        self._ignores = FolderIgnores.of(self._folders)
        self._spec: GitIgnoreSpec | None = None
        if exclude:
            try:
                self._spec = GitIgnoreSpec.from_lines(list(exclude))
            except ValueError as exc:
                log.warning("[codebase] exclude has an invalid pattern (%s); none applied", exc)

    def reload(self) -> None:
        """Check the ignore files now: a rescan follows a change of one at once."""
        self._ignores.reload()

    def __call__(self, path: Path) -> str | None:
        """Return why ``path`` is never indexed, or None."""
        reason = self._ignores.ignored_by(path)
        if reason is not None:
            return reason
        if self._spec is not None:
            for root in self._folders:
                if path.is_relative_to(root) and self._spec.match_file(
                    path.relative_to(root).as_posix()
                ):
                    return "[codebase] exclude"
        return None


def _spec_key(spec: dict[str, Any]) -> str:
    return json.dumps(spec, sort_keys=True)


class _Worker:
    """The child's loop: requests in, answers out, one index per database."""

    def __init__(self, out: IO[bytes], idle: float) -> None:
        self._out = out
        self._out_lock = threading.Lock()
        self._idle = idle
        self._indexes: dict[str, tuple[str, SqliteCodebaseIndex]] = {}
        self._ignores: dict[str, IgnoreRule] = {}
        """Per database: the ignore rule its index was given (reloaded before each build)."""
        self._builds: dict[int, asyncio.Task[None]] = {}
        self._running: set[asyncio.Task[None]] = set()
        self._requests: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def send(self, message: dict[str, Any]) -> None:
        """Write one answer line (from the loop or an index's worker thread)."""
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._out_lock:
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError):  # the server went away: stdin ends next
                pass

    def _read_stdin(self, loop: asyncio.AbstractEventLoop, stdin: int) -> None:
        """Read request lines in a thread (no line-length limit, unlike a stream reader).

        Raw ``os.read`` on the descriptor: a buffered reader's lock held by this daemon thread
        would abort the interpreter's exit when the child ends idle.
        """
        pending = b""
        while chunk := os.read(stdin, 1 << 16):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip():
                    self._received(loop, line)
        if pending.strip():
            self._received(loop, pending)
        with contextlib.suppress(RuntimeError):  # the loop ended (idle) before stdin did
            loop.call_soon_threadsafe(self._requests.put_nowait, None)

    def _received(self, loop: asyncio.AbstractEventLoop, line: bytes) -> None:
        try:
            request = json.loads(line)
        except ValueError:
            log.warning("the indexer got a line that is not JSON: %.80r", line)
            return
        with contextlib.suppress(RuntimeError):  # the loop ended (idle): the server retries
            loop.call_soon_threadsafe(self._requests.put_nowait, request)

    async def run(self, stdin: int) -> None:
        """Serve requests until stdin closes or nothing happened for the idle time."""
        loop = asyncio.get_running_loop()
        threading.Thread(
            target=self._read_stdin, args=(loop, stdin), name="indexer-stdin", daemon=True
        ).start()
        try:
            while True:
                try:
                    request = await asyncio.wait_for(self._requests.get(), self._idle)
                except TimeoutError:
                    if self._running:
                        continue
                    return  # idle: the server starts a new child on its next request
                if request is None:
                    return
                self._dispatch(request)
        finally:
            await self._shutdown()

    def _dispatch(self, request: dict[str, Any]) -> None:
        ident = int(request.get("id", -1))
        op = request.get("op")
        if op == "stop":
            build = self._builds.get(int(request.get("target", -1)))
            if build is not None:
                build.cancel()
            self.send({"id": ident, "result": {}})
            return
        task = asyncio.get_running_loop().create_task(self._serve(ident, op, request))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        if op == "build":
            self._builds[ident] = task
            task.add_done_callback(lambda _t: self._builds.pop(ident, None))

    async def _serve(self, ident: int, op: Any, request: dict[str, Any]) -> None:
        try:
            if op == "build":
                index = self._index(request["index"])
                rule = self._ignores.get(str(request["index"]["database"]))
                if rule is not None:
                    await asyncio.to_thread(rule.reload)
                status = await index.build(
                    lambda done, total: self.send({"id": ident, "progress": [done, total]})
                )
                result: dict[str, Any] = {
                    "state": status.state,
                    "error": status.error,
                    "done": status.done,
                    "total": status.total,
                    "skipped": status.skipped,
                }
            elif op == "update":
                index = self._index(request["index"])
                text = request.get("text")
                await index.update(Path(request["path"]), text if isinstance(text, str) else None)
                result = {}
            elif op == "close":
                self._ignores.pop(str(request["index"]["database"]), None)
                found = self._indexes.pop(str(request["index"]["database"]), None)
                if found is not None:
                    await found[1].aclose()
                result = {}
            else:
                raise ValueError(f"unknown request {op!r}")
        except asyncio.CancelledError:
            self.send({"id": ident, "result": {"state": "waiting", "stopped": True}})
            raise
        except Exception as exc:  # one bad request never ends the child
            log.exception("the indexer's %s failed", op)
            self.send({"id": ident, "error": f"{type(exc).__name__}: {exc}"})
        else:
            self.send({"id": ident, "result": result})

    def _index(self, spec: dict[str, Any]) -> SqliteCodebaseIndex:
        database = str(spec["database"])
        key = _spec_key(spec)
        found = self._indexes.get(database)
        if found is not None and found[0] == key:
            return found[1]
        if found is not None:  # other settings: a fresh index (the old one closes on its own)
            self._spawn_close(found[1])
        rule = IgnoreRule([Path(f) for f in spec["folders"]], list(spec["exclude"]))
        index = SqliteCodebaseIndex(
            Path(spec["root"]),
            Path(database),
            ignored=rule,
            limits=limits_from_json(spec["limits"]),
        )
        self._indexes[database] = (key, index)
        self._ignores[database] = rule
        return index

    def _spawn_close(self, index: SqliteCodebaseIndex) -> None:
        task = asyncio.get_running_loop().create_task(index.aclose())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _shutdown(self) -> None:
        for task in list(self._running):
            task.cancel()
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
        for _key, index in self._indexes.values():
            with contextlib.suppress(Exception):
                await index.aclose()
        self._indexes.clear()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the indexer on this process's stdin/stdout until stdin closes or it is idle."""
    parser = argparse.ArgumentParser(prog="qodeassist-indexer")
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_SECONDS)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("QODEASSIST_INDEXER_LOG", "WARNING").upper(),
        stream=sys.stderr,
        format="qodeassist indexer: %(levelname)s %(message)s",
    )
    # answers go to the real stdout only; a stray print lands on stderr
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout = sys.stderr
    stdin = sys.stdin.fileno()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_Worker(out, args.idle).run(stdin))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
