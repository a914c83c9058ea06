"""The estimated input tokens of a chat's next request (``qodeassist/chat/tokens``, auto-compress).

Calibrated by the provider's reported usage when there is one (only the messages added since are
estimated); otherwise the linked files and every message are counted with ``tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from qodeassist_lsp.core.content import Message, StoredAttachmentBlock, StoredImageBlock, TextBlock
from qodeassist_lsp.features.chat import tokens
from qodeassist_lsp.features.chat.chat_state import Chat
from qodeassist_lsp.features.chat.files import (
    ChatInputError,
    FileAccess,
    StoredContentLoader,
    media_type,
)


def estimate_input(
    access: FileAccess,
    chat: Chat | None,
    draft: str,
    attachments: Sequence[str],
    linked: Sequence[str],
) -> tuple[int, bool]:
    """Return the estimate and whether it is calibrated by the provider's last reported usage."""
    pending = tokens.text_tokens(draft)
    for uri in attachments:
        pending += attachment_tokens(access, access.resolve(uri))
    if chat is None:
        return pending, False
    messages = chat.history.messages
    if chat.calibration is not None:
        base, covered = chat.calibration
        added = sum(message_tokens(chat.loader, m) for m in messages[covered:])
        return base + added + pending, True
    total = pending + sum(
        tokens.text_tokens(block.text)
        for block in access.linked_blocks(list(linked))
        if isinstance(block, TextBlock)
    )
    total += sum(message_tokens(chat.loader, m) for m in messages)
    return total, False


def attachment_tokens(access: FileAccess, path: Path) -> int:
    """Return the tokens of a file about to be attached (0 when it may not be read)."""
    if media_type(path) is not None:
        try:
            access.check(path)
            return tokens.image_tokens(access.roots.for_read(path).read_bytes())
        except ChatInputError:
            return 0
        except OSError:
            return tokens.UNREADABLE_IMAGE_TOKENS
    try:
        return tokens.file_tokens(path.name, access.read_text(path))
    except ChatInputError:
        return 0


def message_tokens(loader: StoredContentLoader, message: Message) -> int:
    """Return the tokens of a history message, its stored images and attachments included."""
    total = tokens.MESSAGE_OVERHEAD + tokens.text_tokens(message.text)
    for block in message.blocks:
        if isinstance(block, StoredImageBlock):
            try:
                total += tokens.image_tokens(loader.raw(block))
            except OSError:
                total += tokens.UNREADABLE_IMAGE_TOKENS
        elif isinstance(block, StoredAttachmentBlock):
            try:
                content = loader.raw(block).decode("utf-8", "replace")
            except OSError:
                content = ""
            total += tokens.file_tokens(block.file_name, content)
    return total
