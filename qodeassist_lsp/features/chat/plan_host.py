"""``ChatHost``: what a plan runner needs of the chat service that owns it.

The chat service creates its ``PlanRunner`` and the runner sends its steps back through the
service; naming the service's class in ``plan`` made the two modules import each other. The
runner depends on this protocol instead, which the service meets as it is.
"""

from __future__ import annotations

from typing import Protocol

from qodeassist_lsp.core.events import SessionEvent
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.features.chat.chat_state import Chat, SendInput

__all__ = ["ChatHost"]


class ChatHost(Protocol):
    """The chat service's calls a plan runner makes (``features.chat.service.ChatService``)."""

    async def send(self, params: SendInput, *, by_plan: bool = False) -> tuple[str, Request]:
        """Start a request in a chat; return the chat id and the request."""
        ...

    def open_chat(self, chat_id: str) -> Chat:
        """Return the open chat ``chat_id``, reading its history file on first use."""
        ...

    def publish(self, chat: Chat, event: SessionEvent) -> None:
        """Save ``chat`` in the background and send ``event`` to the sink."""
        ...

    def ensure_idle(self, chat: Chat, *, by_plan: bool = False) -> None:
        """Raise ``ChatBusy`` when ``chat`` is answering a message or running its plan."""
        ...

    def cancel(self, chat_id: str) -> None:
        """Cancel the request in flight of ``chat_id``."""
        ...
