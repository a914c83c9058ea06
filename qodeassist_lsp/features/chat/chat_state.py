"""An open chat, the send input ``ChatService`` takes and the sink its events go to.

Kept apart from ``service`` so helpers such as ``estimate`` can work on a ``Chat`` without
importing the service; ``service`` re-exports these names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from qodeassist_lsp.core.agent_pool import Requirements
from qodeassist_lsp.core.content import Message
from qodeassist_lsp.core.events import SessionEvent
from qodeassist_lsp.core.history import ConversationHistory
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.features.chat.files import InlineImage, StoredContentLoader
from qodeassist_lsp.features.chat.history_format import ChatFile

__all__ = ["Chat", "EventSink", "SendInput"]

EventSink = Callable[[str, SessionEvent], None]
"""Receives every event of every chat request, with the chat's id."""


@dataclass
class SendInput:
    """What ``qodeassist/chat/send`` carries."""

    message: str
    chat_id: str | None = None
    agent: str | None = None
    attachments: Sequence[str] = ()
    images: Sequence[InlineImage] = ()
    """Images sent inline (ACP's image blocks); stored beside the chat like attached ones."""
    linked_files: Sequence[str] | None = None
    history: Sequence[Message] = ()
    """Earlier turns a new chat starts from (a stateless client's conversation); else unused."""
    system: str = ""
    """The client's own system instructions, a layer of the chat's system prompt."""
    requires: Requirements | None = None
    """Ask the agent pool for an agent meeting these instead of naming one (``agent`` unused)."""


@dataclass
class Chat:
    """One open chat: its file data, history and the request in flight."""

    chat_id: str
    file: ChatFile
    history: ConversationHistory
    loader: StoredContentLoader
    request: Request | None = None
    calibration: tuple[int, int] | None = None
    """(prompt + cached tokens of the last answer, messages it covered)."""
    request_start: int = 0
    """History length before the user message of the latest request."""
    saving: asyncio.Lock = field(default_factory=asyncio.Lock)
    seen: tuple[Message, ...] = ()
    """The messages this server last read from or wrote to the history file (see `save_merged`)."""
    starting: bool = False
    """A message is on its way in (routing, skills, compression) before its request exists."""

    @property
    def busy(self) -> bool:
        """Whether a message is being answered (or is starting to be)."""
        return self.starting or (self.request is not None and not self.request.done)
