"""Workspace files as chat sees them: attachments, linked files and stored content.

Every file a chat reads goes through ``FileAccess``: a path outside the workspace folders (and
the user's ``allowed_roots``), with symlinks followed, is refused by the ``Confinement`` resolver;
a file excluded by ``.qodeassistignore`` is refused with a message naming it; and an open editor
buffer wins over the file on disk (the user sees what they typed, not what was last saved).
Attachments are copied beside the chat when sent and loaded back (with a cache keyed by path,
modification time and size) for every request.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.config.confinement import Confinement, PathRefused
from qodeassist_lsp.context.documents import DocumentStore, uri_to_path
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.core.content import (
    Block,
    ImageBlock,
    StoredAttachmentBlock,
    StoredBlock,
    StoredImageBlock,
    TextBlock,
)
from qodeassist_lsp.features.chat.store import ChatStore
from qodeassist_lsp.wire.errors import ErrorKind, QodeAssistError

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
}
MAX_TEXT_BYTES = 2 * 1024 * 1024
MAX_IMAGE_BYTES = 20 * 1024 * 1024
LINKED_HEADER = "Linked files (current content, refreshed every request):\n"


class ChatInputError(QodeAssistError, ValueError):
    """Something the user sent cannot be used; the message says what to change."""


class ChatBusy(QodeAssistError):
    """A message was sent into a chat that is still answering the previous one.

    Every door refuses it the same way (LSP and ACP: JSON-RPC -32600; HTTP: 409 ``chat_busy``);
    the running answer is never cancelled by it.
    """

    error_kind = ErrorKind.BUSY
    error_code = "chat_busy"

    def __init__(self, chat_id: str, request_id: str) -> None:
        """Refuse a message into ``chat_id``, whose ``request_id`` ("": one starting) runs."""
        what = f"request {request_id!r}" if request_id else "its previous message"
        super().__init__(
            f"chat {chat_id!r} is still answering {what}: wait for it to finish or cancel it "
            "first, then send again"
        )
        self.chat_id = chat_id
        self.request_id = request_id


def media_type(path: Path) -> str | None:
    """Return the image media type of ``path``, or ``None`` when it is not an image."""
    return IMAGE_TYPES.get(path.suffix.lower())


def attachment_text(name: str, content: str) -> str:
    """Return how an attached text file is sent to the model."""
    return f"File: {name}\n```\n{content}\n```"


@dataclass(frozen=True)
class FileAccess:
    """Reads workspace files for chat, honouring ``.qodeassistignore`` and open buffers."""

    documents: DocumentStore
    ignore: IgnoreFilter | None = None
    workspace: Path | None = None
    confinement: Confinement | None = None
    """Where files may be read from; ``None`` = the ``workspace`` folder only."""

    @property
    def roots(self) -> Confinement:
        """The confinement every read goes through."""
        if self.confinement is not None:
            return self.confinement
        return Confinement.of([self.workspace] if self.workspace is not None else [])

    def resolve(self, uri_or_path: str) -> Path:
        """Return the path a ``file:`` URI or path names (relative to the workspace)."""
        raw = uri_to_path(uri_or_path) if "://" in uri_or_path else uri_or_path
        if not raw:
            raise ChatInputError(f"{uri_or_path}: only file: URIs and paths can be used")
        path = Path(raw).expanduser()
        if not path.is_absolute() and self.workspace is not None:
            path = self.workspace / path
        return path

    def check(self, path: Path) -> None:
        """Refuse ``path`` when it is outside the roots, ignored or not a readable file."""
        try:
            self.roots.resolve(path)
        except PathRefused as exc:
            raise ChatInputError(str(exc)) from None
        if self.ignore is not None and self.ignore.is_ignored(path):
            raise ChatInputError(
                f"{path} is excluded by {self.ignore.ignore_file}; remove it from the message "
                "or change the ignore file"
            )
        if self._document(path) is not None:
            return
        try:
            self.roots.for_read(path)
        except FileNotFoundError:
            raise ChatInputError(f"{path}: no such file") from None
        except PathRefused as exc:
            raise ChatInputError(str(exc)) from None

    def _document(self, path: Path) -> str | None:
        target = os.path.normcase(os.path.abspath(path))
        for document in self.documents:
            if document.path and os.path.normcase(os.path.abspath(document.path)) == target:
                return document.text
        return None

    def read_text(self, path: Path) -> str:
        """Return the text of ``path``: the open buffer, else the file (checked first)."""
        self.check(path)
        text = self._document(path)
        if text is not None:
            return text
        try:
            data = self.roots.for_read(path).read_bytes()
        except OSError as exc:
            raise ChatInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if len(data) > MAX_TEXT_BYTES:
            raise ChatInputError(
                f"{path} is {len(data) // 1024} KiB; text files over "
                f"{MAX_TEXT_BYTES // 1024 // 1024} MiB cannot be sent — attach a part of it"
            )
        if b"\x00" in data[:8192]:
            raise ChatInputError(f"{path} is not a text file; attach text files or images")
        return data.decode("utf-8", errors="replace")

    def with_open(self, linked: Sequence[str]) -> list[str]:
        """Return ``linked`` plus every open document inside the roots that is not ignored."""
        paths = list(linked)
        roots, ignore = self.roots, self.ignore
        for document in self.documents:
            path = document.path
            inside = path and path not in paths and roots.contains(path)
            if inside and not (ignore and ignore.is_ignored(path)):
                paths.append(path)
        return paths

    def linked_blocks(self, paths: Sequence[str]) -> list[Block]:
        """Return the pinned block carrying the current content of every linked file."""
        if not paths:
            return []
        parts = [LINKED_HEADER]
        for raw in paths:
            path = Path(raw)
            try:
                content = self.read_text(path)
            except ChatInputError as exc:
                content = f"[unavailable: {exc}]"
            parts.append(f"\nFile: {path.name}\nContent:\n{content}\n")
        return [TextBlock("".join(parts))]


def store_attachments(
    access: FileAccess, store: ChatStore, chat_id: str, uris: Sequence[str]
) -> list[Block]:
    """Check every attachment, then copy them beside the chat; return their blocks."""
    sources: list[tuple[Path, Path, str | None]] = []
    for uri in uris:
        path = access.resolve(uri)
        access.check(path)
        real = access.roots.resolve(path)
        kind = media_type(path)
        if kind is not None:
            size = real.stat().st_size
            if size > MAX_IMAGE_BYTES:
                raise ChatInputError(f"{path}: images over 20 MiB cannot be sent")
        else:
            access.read_text(path)  # refuse binaries and huge files before anything is stored
        sources.append((path, real, kind))
    blocks: list[Block] = []
    for path, real, kind in sources:
        stored = store.store_attachment(chat_id, real, name=path.name)
        if kind is not None:
            blocks.append(StoredImageBlock(path.name, stored, kind))
        else:
            blocks.append(StoredAttachmentBlock(path.name, stored))
    return blocks


@dataclass(frozen=True)
class InlineImage:
    """An image a client sends inside its message (not a file of the workspace)."""

    data: bytes
    media_type: str
    name: str = "image"
    """What the chat shows for it, without an extension (one is added from ``media_type``)."""


def store_images(store: ChatStore, chat_id: str, images: Sequence[InlineImage]) -> list[Block]:
    """Check every inline image, then write them beside the chat; return their blocks."""
    kinds = set(IMAGE_TYPES.values())
    for image in images:
        if image.media_type not in kinds:
            raise ChatInputError(
                f"{image.name}: {image.media_type or 'an unknown type'} images cannot be sent; "
                f"send one of {', '.join(sorted(kinds))}"
            )
        if len(image.data) > MAX_IMAGE_BYTES:
            raise ChatInputError(f"{image.name}: images over 20 MiB cannot be sent")
    blocks: list[Block] = []
    for image in images:
        name = image.name + (mimetypes.guess_extension(image.media_type) or "")
        stored = store.store_attachment_data(chat_id, image.data, name)
        blocks.append(StoredImageBlock(name, stored, image.media_type))
    return blocks


class StoredContentLoader:
    """Loads a chat's stored attachments for sending, cached by (path, mtime, size)."""

    def __init__(self, store: ChatStore, chat_id: str) -> None:
        self._store = store
        self._chat_id = chat_id
        self._cache: dict[Path, tuple[tuple[int, int], Block]] = {}

    def __call__(self, block: StoredBlock) -> Block:
        """Return the block sent for ``block`` (raises ``OSError`` when it is gone)."""
        path = self._store.stored_file(self._chat_id, block.stored_path)
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        data = path.read_bytes()
        loaded: Block
        if isinstance(block, StoredImageBlock):
            kind = block.media_type or mimetypes.guess_type(path.name)[0] or "image/png"
            loaded = ImageBlock(base64.b64encode(data).decode("ascii"), kind)
        else:
            loaded = TextBlock(attachment_text(block.file_name, data.decode("utf-8", "replace")))
        self._cache[path] = (key, loaded)
        return loaded

    def raw(self, block: StoredBlock) -> bytes:
        """Return the stored bytes of ``block`` (for token estimates)."""
        return self._store.stored_file(self._chat_id, block.stored_path).read_bytes()
