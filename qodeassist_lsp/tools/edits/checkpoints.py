"""Checkpoints: the exact bytes (or absence) of each file a chat turn changed, kept on disk.

Before the first change a turn (one request) makes to a file, the file's bytes are saved, once
per file and turn, under ``<data root>/checkpoints/<chat>/<checkpoint id>/``: a
``checkpoint.json`` index and one blob per file (no blob: the file did not exist). Indexes are
replaced atomically, so a restart finds every checkpoint whole and ``restore`` gives the old
bytes back exactly. Index paths are data anyone could plant: whoever restores confines them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.atomic import write_atomic
from qodeassist_lsp.core.events import camel_json
from qodeassist_lsp.wire.errors import QodeAssistError

log = logging.getLogger("qodeassist.tools")

INDEX = "checkpoint.json"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_ID = re.compile(r"^[A-Za-z0-9_-]{1,120}$")


class CheckpointNotFound(QodeAssistError, LookupError):
    """No checkpoint has the id asked for."""


@dataclass(frozen=True, slots=True)
class CheckpointFile:
    """One file of a checkpoint: where it was and which blob holds its old bytes."""

    uri: str
    path: str
    blob: str | None
    """The blob's file name; None when the file did not exist before the turn."""


@dataclass(frozen=True)
class Checkpoint:
    """The files one turn of one chat changed, as they were before it."""

    checkpoint_id: str
    chat_id: str
    request_id: str
    created_at: str
    files: tuple[CheckpointFile, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the ``qodeassist/checkpoints/list`` entry."""
        return {**camel_json(self), "files": [f.uri for f in self.files]}


class CheckpointStore:
    """The checkpoints under one folder."""

    def __init__(self, root: Path) -> None:
        """Keep checkpoints under ``root`` (created on first save)."""
        self.root = root
        self._lock = threading.Lock()

    def save(
        self, chat_id: str, request_id: str, path: Path, uri: str, data: bytes | None
    ) -> Checkpoint:
        """Record ``data`` as ``path``'s bytes before ``request_id``'s change (first call wins)."""
        with self._lock:
            folder = self._chat_folder(chat_id) / _checkpoint_id(request_id)
            checkpoint = self._read(folder) if (folder / INDEX).is_file() else None
            if checkpoint is None:
                checkpoint = Checkpoint(folder.name, chat_id, request_id, _now())
            if any(f.path == str(path) for f in checkpoint.files):
                return checkpoint
            blob = None
            if data is not None:
                blob = f"{len(checkpoint.files)}.bin"
                write_atomic(folder / "files" / blob, data)
            files = (*checkpoint.files, CheckpointFile(uri, str(path), blob))
            checkpoint = dataclasses.replace(checkpoint, files=files)
            write_atomic(folder / INDEX, json.dumps(_encode(checkpoint), indent=1).encode())
            return checkpoint

    def entries(self, chat_id: str | None = None) -> list[Checkpoint]:
        """Return the checkpoints (of ``chat_id`` only, if given), newest first."""
        folders = [self._chat_folder(chat_id)] if chat_id is not None else self._children(self.root)
        found = []
        for chat in folders:
            for folder in self._children(chat):
                checkpoint = self._read(folder)
                if checkpoint is not None and (chat_id is None or checkpoint.chat_id == chat_id):
                    found.append(checkpoint)
        return sorted(found, key=lambda c: (c.created_at, c.checkpoint_id), reverse=True)

    def get(self, checkpoint_id: str) -> Checkpoint:
        """Return the checkpoint ``checkpoint_id`` (raise `CheckpointNotFound`)."""
        if _ID.match(checkpoint_id):
            for chat in self._children(self.root):
                checkpoint = self._read(chat / checkpoint_id)
                if checkpoint is not None:
                    return checkpoint
        raise CheckpointNotFound(
            f"no checkpoint {checkpoint_id!r}; list them with qodeassist/checkpoints/list"
        )

    def content(self, checkpoint: Checkpoint, file: CheckpointFile) -> bytes | None:
        """Return the saved bytes of ``file`` (None: it did not exist)."""
        if file.blob is None:
            return None
        folder = self._chat_folder(checkpoint.chat_id) / checkpoint.checkpoint_id
        return (folder / "files" / Path(file.blob).name).read_bytes()

    def _chat_folder(self, chat_id: str) -> Path:
        digest = hashlib.sha256(chat_id.encode()).hexdigest()[:8]
        return self.root / f"{_SAFE.sub('_', chat_id)[:60]}-{digest}"

    @staticmethod
    def _children(folder: Path) -> list[Path]:
        try:
            return [p for p in folder.iterdir() if p.is_dir()]
        except OSError:
            return []

    @staticmethod
    def _read(folder: Path) -> Checkpoint | None:
        try:
            return _decode(json.loads((folder / INDEX).read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("skipping unreadable checkpoint %s: %s", folder, exc)
            return None


def checkpoint_id(request_id: str) -> str:
    """Return the id of the checkpoint of the turn ``request_id`` (one per turn)."""
    return "cp-" + _SAFE.sub("_", request_id)[:100]


_checkpoint_id = checkpoint_id


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _encode(checkpoint: Checkpoint) -> dict[str, Any]:
    files = [camel_json(f) for f in checkpoint.files]
    return {"version": 1, **camel_json(checkpoint), "files": files}


def _decode(data: dict[str, Any]) -> Checkpoint:
    files = tuple(
        CheckpointFile(str(f["uri"]), str(f["path"]), None if f["blob"] is None else str(f["blob"]))
        for f in data["files"]
    )
    return Checkpoint(
        str(data["checkpointId"]),
        str(data["chatId"]),
        str(data["requestId"]),
        str(data["createdAt"]),
        files,
    )
