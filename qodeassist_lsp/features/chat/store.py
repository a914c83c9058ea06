"""``ChatStore``: chat history files in one directory, written atomically.

A chat's id is its file name without ``.json``: the first line of the first message, simplified
(as the original names its files), plus the time. Writes go to a temporary file in the same
directory, are flushed to disk and renamed over the old file, so a crash or a kill leaves
either the previous or the new version, never a torn one. Attachments live in
``<id>_content/`` beside the file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.features.chat.history_format import ChatFile, HistoryFormatError, decode, encode
from qodeassist_lsp.wire.errors import QodeAssistError

log = logging.getLogger("qodeassist.chat")

_UNSAFE = re.compile(r'[\\/:*?"<>|\s]+')
_ID = re.compile(r"^[^/\\\x00]{1,200}$")


class ChatNotFound(QodeAssistError, LookupError):
    """No chat with that id exists."""


@dataclass(frozen=True)
class ChatSummary:
    """One line of the chat list."""

    chat_id: str
    title: str
    agent: str
    updated_at: str
    compressed_from: str | None


def slug(title: str) -> str:
    """Return the file-name part made of a chat title (the original's rule; ``chat`` when empty)."""
    first_line = title.strip().splitlines()[0] if title.strip() else ""
    simplified = _UNSAFE.sub("_", first_line[:30]).strip("_")
    return re.sub("_+", "_", simplified) or "chat"


def utc_now() -> str:
    """Return the current time as ISO 8601 UTC with seconds (``2026-11-22T10:31:07Z``)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ChatStore:
    """Reads, writes, lists and deletes the chats of one history directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, chat_id: str) -> Path:
        """Return the history file of ``chat_id`` (raises ``ChatNotFound`` for unsafe ids)."""
        if not _ID.match(chat_id) or chat_id in (".", ".."):
            raise ChatNotFound(f"invalid chat id {chat_id!r}")
        return self.root / f"{chat_id}.json"

    def content_dir(self, chat_id: str) -> Path:
        """Return the folder of ``chat_id``'s attachments."""
        return self.root / f"{chat_id}_content"

    def new_id(self, title: str) -> str:
        """Return an unused chat id for a chat starting with ``title``."""
        return self._unused(f"{slug(title)}_{dt.datetime.now().strftime('%Y-%m-%d_%H-%M')}")

    def derived_id(self, chat_id: str) -> str:
        """Return an unused id for a chat made from ``chat_id`` (a compressed copy)."""
        millis = int(dt.datetime.now().timestamp() * 1000)
        return self._unused(f"{chat_id}_{millis % 100000:x}")

    def _unused(self, base: str) -> str:
        candidate, n = base, 1
        while self.path(candidate).exists() or self.content_dir(candidate).exists():
            n += 1
            candidate = f"{base}_{n}"
        return candidate

    def exists(self, chat_id: str) -> bool:
        """Whether ``chat_id`` has a history file."""
        try:
            return self.path(chat_id).is_file()
        except ChatNotFound:
            return False

    def load(self, chat_id: str) -> ChatFile:
        """Read ``chat_id`` (raises ``ChatNotFound`` or ``HistoryFormatError``)."""
        path = self.path(chat_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ChatNotFound(f"no chat {chat_id!r} in {self.root}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise HistoryFormatError(f"{path}: cannot read: {exc}") from None
        try:
            chat, warnings = decode(text)
        except HistoryFormatError as exc:
            raise HistoryFormatError(f"{path}: {exc}") from None
        for warning in warnings:
            log.warning("%s: %s", path, warning)
        return chat

    def save(self, chat_id: str, chat: ChatFile) -> None:
        """Write ``chat`` atomically (temp file, fsync, rename)."""
        self.write_text(chat_id, encode(chat))

    def write_text(self, chat_id: str, text: str) -> None:
        """Write already-encoded history ``text`` atomically."""
        path = self.path(chat_id)
        self.root.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.stem[:40]}.", suffix=".tmp", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def delete(self, chat_id: str) -> None:
        """Remove the chat and its attachments (raises ``ChatNotFound``)."""
        path = self.path(chat_id)
        try:
            path.unlink()
        except FileNotFoundError:
            raise ChatNotFound(f"no chat {chat_id!r}") from None
        shutil.rmtree(self.content_dir(chat_id), ignore_errors=True)

    def list(self) -> list[ChatSummary]:
        """Return every readable chat, most recently updated first."""
        if not self.root.is_dir():
            return []
        entries: list[tuple[float, ChatSummary]] = []
        for path in self.root.glob("*.json"):
            try:
                mtime = path.stat().st_mtime
                chat = self.load(path.stem)
            except (ChatNotFound, HistoryFormatError, OSError) as exc:
                log.warning("chat list: skipping %s: %s", path.name, exc)
                continue
            updated = dt.datetime.fromtimestamp(mtime, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            title = chat.title or title_of(chat)
            summary = ChatSummary(path.stem, title, chat.agent, updated, chat.compressed_from)
            entries.append((mtime, summary))
        entries.sort(key=lambda entry: entry[0], reverse=True)
        return [summary for _mtime, summary in entries]

    def store_attachment(self, chat_id: str, source: Path) -> str:
        """Copy ``source`` into the chat's content folder; return the stored name."""
        folder = self.content_dir(chat_id)
        folder.mkdir(parents=True, exist_ok=True)
        stored = f"{source.stem}_{uuid.uuid4().hex[:8]}{source.suffix}"
        shutil.copyfile(source, folder / stored)
        return stored

    def stored_file(self, chat_id: str, stored_path: str) -> Path:
        """Return the file of an attachment stored for ``chat_id`` (confined to its folder)."""
        folder = self.content_dir(chat_id).resolve()
        candidate = Path(stored_path)
        path = (candidate if candidate.is_absolute() else folder / candidate).resolve()
        if not path.is_relative_to(folder) and not candidate.is_absolute():
            raise FileNotFoundError(f"{stored_path} is outside the chat's content folder")
        return path


def title_of(chat: ChatFile) -> str:
    """Return the first line of the first user message (the chat's title when none is stored)."""
    for message in chat.messages:
        if message.role == "user" and message.text.strip():
            return message.text.strip().splitlines()[0][:80]
    return "Chat"
