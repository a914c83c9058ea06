"""Refusing to send from a history file that points outside where the chat may read.

A history file is data anyone could have placed in the history folder: its linked files must pass
the same confinement as the ones a client sends, and its stored attachments must be names inside
the chat's content folder.
"""

from __future__ import annotations

from qodeassist_lsp.config.confinement import PathRefused
from qodeassist_lsp.core.content import StoredAttachmentBlock, StoredImageBlock
from qodeassist_lsp.features.chat.chat_state import Chat
from qodeassist_lsp.features.chat.files import ChatInputError, FileAccess
from qodeassist_lsp.features.chat.store import ChatStore


def check_history(chat: Chat, store: ChatStore, access: FileAccess, *, keep_linked: bool) -> None:
    """Raise ``ChatInputError`` when ``chat``'s history reaches outside where it may read."""
    where = f"chat {chat.chat_id!r} ({store.path(chat.chat_id)})"
    if keep_linked:
        for raw in chat.file.linked_files:
            try:
                access.roots.resolve(raw)
            except PathRefused as exc:
                raise ChatInputError(
                    f"{where} links a file that may not be read: {exc}. Send with "
                    "linkedFiles set to replace the chat's linked files"
                ) from None
    for message in chat.history.messages:
        for block in message.blocks:
            if isinstance(block, (StoredAttachmentBlock, StoredImageBlock)):
                try:
                    store.stored_file(chat.chat_id, block.stored_path)
                except PathRefused as exc:
                    raise ChatInputError(str(exc)) from None
                except OSError:
                    pass  # gone: sent as "[Attachment unavailable]"
