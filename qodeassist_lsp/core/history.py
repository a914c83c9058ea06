"""``ConversationHistory``: the single source of truth of one conversation.

Every mutation bumps ``version``, so projections (chat views, persistence, token estimates) can
tell cheaply whether they are stale. Streaming text is appended to the last text block of the
last message instead of creating one block per delta.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from qodeassist_lsp.core.content import Block, Message, TextBlock, ThinkingBlock


class ConversationHistory:
    """An ordered, versioned list of messages."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)
        self.version = 0

    @property
    def messages(self) -> Sequence[Message]:
        """The messages, oldest first (read-only view)."""
        return tuple(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def append(self, message: Message) -> None:
        """Add ``message`` at the end."""
        self._messages.append(message)
        self.version += 1

    def replace_last(self, message: Message) -> None:
        """Replace the last message (used while a response streams in)."""
        self._messages[-1] = message
        self.version += 1

    def append_blocks(self, message_id: str, blocks: Sequence[Block]) -> None:
        """Add ``blocks`` to the assistant message ``message_id``, merging streamed text."""
        last = self._messages[-1] if self._messages else None
        if last is None or last.role != "assistant" or last.id != message_id:
            self.append(Message("assistant", tuple(blocks), message_id))
            return
        merged = list(last.blocks)
        for block in blocks:
            previous = merged[-1] if merged else None
            if isinstance(block, TextBlock) and isinstance(previous, TextBlock):
                merged[-1] = TextBlock(previous.text + block.text)
            elif (
                isinstance(block, ThinkingBlock)
                and isinstance(previous, ThinkingBlock)
                and not previous.signature
            ):
                merged[-1] = ThinkingBlock(previous.thinking + block.thinking, block.signature)
            else:
                merged.append(block)
        self.replace_last(replace(last, blocks=tuple(merged)))

    def truncate(self, size: int) -> None:
        """Drop every message after the first ``size`` (roll back a failed dispatch)."""
        if size < len(self._messages):
            del self._messages[size:]
            self.version += 1

    def reset(self, messages: Iterable[Message] = ()) -> None:
        """Replace the whole conversation."""
        self._messages = list(messages)
        self.version += 1

    def last_assistant_text(self) -> str:
        """Return the text of the last assistant message, or ``""``."""
        for message in reversed(self._messages):
            if message.role == "assistant":
                return message.text
        return ""
