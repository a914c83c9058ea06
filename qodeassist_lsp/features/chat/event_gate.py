"""`EventGate`: a chat's events held while the answer that names the chat is on its way.

Every door answers a send by naming the chat (the LSP's ``{chatId, requestId}``, the HTTP
stream that subscribes to the chat). A request may fail before that answer is out (a template
error, say); its events must still reach the client after it, so the client knows the chat
they belong to. Every door holds the same way: ``hold(chat_id)`` holds that chat's events
(None, a new chat: those of every chat nobody ``followed`` yet), the other chats go on
streaming (a send may wait for the agent pool), and ``release`` delivers, in order, what no
hold keeps any longer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from qodeassist_lsp.core.events import SessionEvent

__all__ = ["EventGate", "Payload"]

Payload = dict[str, Any]


class EventGate:
    """Sends chat payloads through ``send``, holding those of a chat a send is on its way to."""

    def __init__(
        self,
        send: Callable[[str, Payload], None],
        followed: Callable[[str], bool] = lambda _chat_id: False,
    ) -> None:
        """Send through ``send``; a new chat's hold keeps the chats not ``followed``."""
        self._send = send
        self._followed = followed
        self._holds: dict[int, str | None] = {}
        self._tokens = itertools.count()
        self._held: list[tuple[str, Payload]] = []

    def emit(self, chat_id: str, event: SessionEvent) -> None:
        """Send a session event of ``chat_id`` (the chat service's sink)."""
        self.publish(chat_id, event.to_json())

    def publish(self, chat_id: str, payload: Payload) -> None:
        """Send ``payload`` of ``chat_id`` now, or once no hold keeps it."""
        if self._holding(chat_id):
            self._held.append((chat_id, payload))
        else:
            self._send(chat_id, payload)

    def _holding(self, chat_id: str) -> bool:
        holds = self._holds.values()
        return (
            chat_id in holds
            or (None in holds and not self._followed(chat_id))
            or any(held == chat_id for held, _ in self._held)  # keep a chat's order
        )

    def hold(self, chat_id: str | None = None) -> int:
        """Hold ``chat_id``'s payloads (None: a new chat's); return the token to `release`."""
        token = next(self._tokens)
        self._holds[token] = chat_id
        return token

    def release(self, token: int) -> None:
        """End hold ``token``; send what no hold keeps any longer."""
        self._holds.pop(token, None)
        self.flush()

    def flush(self) -> None:
        """Send the held payloads no hold keeps any longer (a chat just got followed)."""
        held, self._held = self._held, []
        for chat_id, payload in held:
            self.publish(chat_id, payload)
