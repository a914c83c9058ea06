"""``ChatStore``: chat history files in one directory, written atomically.

A chat's id is its file name without ``.json``: the first line of the first message, simplified
to ASCII (as the original names its files, ``chat`` when nothing is left), the local time to the
second and six random hex digits, e.g. ``Fix_the_parser_2026-12-07_10-31-07_3f9a1c``: safe in
file names, URLs and HTTP headers. An id is reserved when it is handed out, before the chat has
a file (ACP's ``session/new``, a first message): `new_id` creates ``.<id>.reserved`` with
``O_CREAT | O_EXCL``, which only one process sharing the folder can do, and the id is used only
if no history file or content folder has it either. The first save of the chat removes the
reservation (the file holds the id from then on); a reservation left by a process that ended
without saving is hidden from the chat list and removed after `STALE_RESERVATION_S`, when no
new id can share its time any more. Writes go to a temporary file in the same
directory, are flushed to disk and renamed over the old file, so a crash or a kill leaves
either the previous or the new version, never a torn one. Attachments live in
``<id>_content/`` beside the file.

Several writers may share a chat: two servers on one data folder, or two sends. `save_merged`
therefore holds the history folder's advisory lock while it re-reads the file, keeps the
messages another writer added since this one last saw the chat, and writes the union: no
writer's message is lost (the last writer no longer wins). The lock is one per folder, not one
per chat, and it is a lock on the folder itself (`config.folder_lock`), so no ``.lock`` file is
left per chat; deleting a per-chat lock file on release instead would race (a waiter locks the
unlinked file while a newcomer locks a new one). Saves take milliseconds, so one lock for all
chats of a folder costs nothing noticeable. Lock files older versions left (``.<id>.lock``) are
removed with the stale temporary files. Temporary files a killed
save left behind are removed by `remove_stale_temp_files`, which the chat service runs once per
history folder.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime as dt
import json
import logging
import os
import re
import secrets
import shutil
import time
import unicodedata
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.config.atomic import write_atomic
from qodeassist_lsp.config.confinement import (
    Confinement,
    OutsideAllowedRoots,
    PathRefused,
    real_path,
)
from qodeassist_lsp.config.folder_lock import FALLBACK_NAME, folder_lock
from qodeassist_lsp.core.content import Message
from qodeassist_lsp.features.chat.history_format import (
    ChatFile,
    HistoryFormatError,
    decode,
    encode,
    encode_message,
)
from qodeassist_lsp.wire.errors import QodeAssistError

log = logging.getLogger("qodeassist.chat")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_ID = re.compile(r"^[^/\\\x00]{1,200}$")
TEMP_SUFFIX = ".tmp"
LEGACY_LOCK = ".lock"
"""The per-chat lock files (``.<id>.lock``) versions before the folder lock left behind."""
STALE_TEMP_S = 60.0
"""A temporary file this old belongs to no live save (a save renames its file in milliseconds)."""
RESERVED_SUFFIX = ".reserved"
"""``.<id>.reserved``: an id handed out to a chat that has no history file yet."""
STALE_RESERVATION_S = 2 * 24 * 3600.0
"""A reservation this old is dropped: ids carry their time, so no new id can equal it (a day
covers a daylight-saving change of the local clock), and an empty chat so old is forgotten."""
ID_ATTEMPTS = 100
RANDOM_HEX = 6


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
    """Return the ASCII file-name part made of a chat title (``chat`` when nothing is left)."""
    first_line = title.strip().splitlines()[0] if title.strip() else ""
    # Accents go (``café`` → ``cafe``); other letters are dropped rather than transliterated.
    ascii_text = unicodedata.normalize("NFKD", first_line[:30]).encode("ascii", "ignore").decode()
    simplified = re.sub("_+", "_", _UNSAFE.sub("_", ascii_text))
    return simplified.strip("._-") or "chat"


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

    def reservation(self, chat_id: str) -> Path:
        """Return the file that reserves ``chat_id`` until the chat has a history file."""
        self.path(chat_id)
        return self.root / f".{chat_id}{RESERVED_SUFFIX}"

    def new_id(self, title: str) -> str:
        """Reserve and return a new chat id for a chat starting with ``title``.

        No other call, in this process or another one using the folder, gets the same id; the
        reservation lasts until the chat's first save, `release` or `delete`.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        base = slug(title)
        for _attempt in range(ID_ATTEMPTS):
            stamp = dt.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
            candidate = f"{base}_{stamp}_{secrets.token_hex(RANDOM_HEX // 2)}"
            if self._reserve(candidate):
                return candidate
        raise OSError(f"{self.root}: no free chat id after {ID_ATTEMPTS} attempts")

    def derived_id(self, chat_id: str) -> str:
        """Reserve and return a new id for a chat made from ``chat_id`` (a compressed copy)."""
        stamp = re.search(r"_\d{4}-\d\d-\d\d_", chat_id)
        return self.new_id(f"Summary {chat_id[: stamp.start()] if stamp else chat_id}")

    def _reserve(self, candidate: str) -> bool:
        """Take ``candidate`` if no process holds it and no chat has it; False otherwise."""
        try:
            fd = os.open(self.reservation(candidate), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        os.close(fd)
        # A chat saved (and its reservation released) before this call may hold the id.
        if self.path(candidate).exists() or self.content_dir(candidate).exists():
            self.release(candidate)
            return False
        return True

    def release(self, chat_id: str) -> None:
        """Drop the reservation of ``chat_id`` (the chat was saved, or it is given up)."""
        with contextlib.suppress(OSError, ChatNotFound):
            self.reservation(chat_id).unlink(missing_ok=True)

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
            # A FIFO named like a chat would block the server; a link may lead anywhere.
            text = self._history_confinement().for_read(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ChatNotFound(f"no chat {chat_id!r} in {self.root}") from None
        except PathRefused as exc:
            raise HistoryFormatError(str(exc)) from None
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
        """Write already-encoded history ``text`` atomically (the file now holds the id)."""
        write_atomic(self.path(chat_id), text.encode("utf-8"))
        self.release(chat_id)

    def save_merged(
        self, chat_id: str, chat: ChatFile, seen: Sequence[Message]
    ) -> tuple[Message, ...]:
        """Write ``chat`` merged with what other writers added to the file; return the merge.

        ``seen`` are the messages this writer knew the file to hold (what it loaded or last
        wrote). Under the chat's lock the file is re-read; its messages that are not in ``seen``
        were added by another writer and are kept, after ``chat``'s. A chat that ends up
        without messages is deleted.
        """
        with self._locked(chat_id):
            theirs: list[Message] = []
            usage: dict[str, dict[str, int]] = {}
            try:
                on_disk = self.load(chat_id)
            except ChatNotFound:
                pass
            except HistoryFormatError as exc:
                log.warning("%s; it is overwritten with this server's copy of the chat", exc)
            else:
                theirs = added_messages(seen, on_disk.messages)
                usage = on_disk.usage
            if theirs:
                log.info("chat %s: kept %d message(s) another writer added", chat_id, len(theirs))
            messages = (*chat.messages, *theirs)
            if not messages:
                with contextlib.suppress(ChatNotFound):
                    self.delete(chat_id)
                # The chat lives on, empty, in the writer: its id stays taken.
                with contextlib.suppress(OSError):
                    self.reservation(chat_id).touch()
                return ()
            merged = dataclasses.replace(
                chat, messages=list(messages), usage={**usage, **chat.usage}
            )
            self.write_text(chat_id, encode(merged))
            return messages

    @contextlib.contextmanager
    def _locked(self, chat_id: str) -> Iterator[None]:
        """Hold the history folder's advisory lock (checking ``chat_id`` first)."""
        self.path(chat_id)
        with folder_lock(self.root):
            yield

    def remove_stale_temp_files(self) -> int:
        """Delete temporary files of saves killed mid-way, old per-chat locks and reservations.

        Return how many went. Only temporary files older than `STALE_TEMP_S` go (a younger one
        may be another server's save in progress), and reservations older than
        `STALE_RESERVATION_S`.
        """
        if not self.root.is_dir():
            return 0
        removed = 0
        now = time.time()
        locks = [p for p in self.root.glob(f".*{LEGACY_LOCK}") if p.name != FALLBACK_NAME]
        stale = [(p, STALE_TEMP_S) for p in [*self.root.glob(f".*{TEMP_SUFFIX}"), *locks]]
        stale += [(p, STALE_RESERVATION_S) for p in self.root.glob(f".*{RESERVED_SUFFIX}")]
        for temp, age in stale:
            try:
                if temp.stat().st_mtime <= now - age:
                    temp.unlink()
                    removed += 1
            except OSError:  # gone meanwhile, or not ours to delete
                continue
        if removed:
            log.info("removed %d temporary file(s) of interrupted saves in %s", removed, self.root)
        return removed

    def delete(self, chat_id: str) -> None:
        """Remove the chat, its attachments and its reservation (raises ``ChatNotFound``)."""
        path = self.path(chat_id)
        self.release(chat_id)
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

    def store_attachment(self, chat_id: str, source: Path, name: str = "") -> str:
        """Copy ``source`` into the chat's content folder; return the stored name.

        ``name`` is the file name the user attached (``source`` may be its real path).
        """
        stored, target = self._new_content(chat_id, name or source.name)
        shutil.copyfile(source, target)
        return stored

    def store_attachment_data(self, chat_id: str, data: bytes, name: str) -> str:
        """Write ``data`` (an image sent inline) into the chat's content folder; return its name."""
        stored, target = self._new_content(chat_id, name)
        target.write_bytes(data)
        return stored

    def _new_content(self, chat_id: str, name: str) -> tuple[str, Path]:
        folder = self._content_confinement(chat_id)
        Path(folder.roots[0]).mkdir(parents=True, exist_ok=True)
        base = Path(name)
        stored = f"{base.stem}_{uuid.uuid4().hex[:8]}{base.suffix}"
        return stored, Path(folder.for_write(stored, folder.roots[0]))

    def stored_file(self, chat_id: str, stored_path: str) -> Path:
        """Return the file of an attachment stored for ``chat_id`` (confined to its folder).

        A history file is data, not a request: an absolute ``storedPath``, a ``..`` segment or a
        link leading out of the chat's content folder is refused (``PathRefused``).
        """
        folder = self._content_confinement(chat_id)
        candidate = Path(stored_path)
        if candidate.is_absolute() or candidate.anchor or ".." in candidate.parts:
            raise OutsideAllowedRoots(
                stored_path,
                f"stored attachment {stored_path!r} of chat {chat_id!r} is not a name inside "
                f"its content folder {self.content_dir(chat_id)}; the history file "
                f"{self.path(chat_id)} was edited or damaged — remove that block or the chat",
            )
        return folder.for_read(candidate, folder.roots[0])

    def _history_confinement(self) -> Confinement:
        """Return the history folder as the only root of history files."""
        root = real_path(self.root)
        return Confinement(
            (root,),
            scope=f"the chat history folder {root}",
            advice="; history files must be regular files in it (see `chat.history_dir`)",
        )

    def _content_confinement(self, chat_id: str) -> Confinement:
        """Return the chat's content folder as the only root (a linked folder leads out)."""
        folder = real_path(self.root) / self.content_dir(chat_id).name
        return Confinement(
            (folder,),
            scope=f"the chat's content folder {folder}",
            advice="; stored attachments must stay inside it — remove that block or the chat",
        )


def added_messages(seen: Sequence[Message], on_disk: Sequence[Message]) -> list[Message]:
    """Return the messages of ``on_disk`` that are not among ``seen``, in their order.

    Messages are compared by content (an identical message counts once per occurrence), since
    user messages carry no id.
    """
    remaining = collections.Counter(_key(message) for message in seen)
    added = []
    for message in on_disk:
        key = _key(message)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            added.append(message)
    return added


def _key(message: Message) -> str:
    return json.dumps(encode_message(message), sort_keys=True, ensure_ascii=False)


def title_of(chat: ChatFile) -> str:
    """Return the first line of the first user message (the chat's title when none is stored)."""
    for message in chat.messages:
        if message.role == "user" and message.text.strip():
            return message.text.strip().splitlines()[0][:80]
    return "Chat"
