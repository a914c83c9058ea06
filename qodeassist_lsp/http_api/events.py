"""Where the HTTP host's chat events go: the open streams of each chat, and permission questions.

The chat service sends every event of every chat to `EventHub.emit`; an HTTP stream subscribes
to its chat's events once ``send`` has told it the chat id and its request. A stream gets the
events of its own request only (and those that name none: permission questions, plan updates),
never another request's of the same chat — say the end of the previous answer, held while this
send was on its way. The hub is the `EventGate` every door holds with: events of the chat a
send is on its way to (of every chat no stream follows yet, for a new chat) are held and
delivered once its stream subscribes, while the chats other streams follow go on streaming.
`Questions` carries a permission question to the chat's stream and waits for
``POST /v1/qodeassist/permissions/{id}``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from qodeassist_lsp.features.chat.event_gate import EventGate, Payload

log = logging.getLogger("qodeassist.http")

ASK_TIMEOUT_S: Final = 300.0
"""How long a permission question waits for the page's answer; then it counts as deny."""


@dataclass(eq=False)
class _Subscriber:
    callback: Callable[[Payload], None]
    request_id: str | None
    """The request it follows (None: every request of the chat)."""

    def wants(self, payload: Payload) -> bool:
        theirs = payload.get("requestId")
        return self.request_id is None or not theirs or theirs == self.request_id


class EventHub(EventGate):
    """Fans chat events out to the streams subscribed to each chat (held as every door holds)."""

    def __init__(self) -> None:
        super().__init__(self._fan_out, self.has_subscribers)
        self._subscribers: dict[str, list[_Subscriber]] = {}

    def _fan_out(self, chat_id: str, payload: Payload) -> None:
        for subscriber in list(self._subscribers.get(chat_id, ())):
            if subscriber.wants(payload):
                subscriber.callback(payload)

    def has_subscribers(self, chat_id: str) -> bool:
        """Whether a stream follows ``chat_id``."""
        return bool(self._subscribers.get(chat_id))

    def subscribe(
        self, chat_id: str, callback: Callable[[Payload], None], request_id: str | None = None
    ) -> Callable[[], None]:
        """Call ``callback`` with ``chat_id``'s held payloads, then every later one.

        With ``request_id`` only that request's payloads (and those naming no request) go to it.
        """
        subscriber = _Subscriber(callback, request_id)
        self._subscribers.setdefault(chat_id, []).append(subscriber)
        self.flush()

        def unsubscribe() -> None:
            subscribers = self._subscribers.get(chat_id, [])
            if subscriber in subscribers:
                subscribers.remove(subscriber)
            if not subscribers:
                self._subscribers.pop(chat_id, None)

        return unsubscribe


class Questions:
    """Permission questions asked through a chat's stream and answered by a later request."""

    def __init__(self, hub: EventHub, timeout: float = ASK_TIMEOUT_S) -> None:
        self._hub = hub
        self._timeout = timeout
        self._ids = itertools.count(1)
        self._open: dict[str, tuple[asyncio.Future[str], Sequence[str]]] = {}

    async def ask(self, chat_id: str, question: str, actions: Sequence[str]) -> str | None:
        """Show ``question`` in ``chat_id``'s stream; return the answer (None: none in time)."""
        if not self._hub.has_subscribers(chat_id):
            return None
        question_id = f"q{next(self._ids)}"
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._open[question_id] = (future, actions)
        self._hub.publish(
            chat_id,
            {
                "kind": "permission",
                "questionId": question_id,
                "question": question,
                "actions": list(actions),
            },
        )
        try:
            return await asyncio.wait_for(future, self._timeout)
        except TimeoutError:
            log.info("permission question %s not answered: denied", question_id)
            return None
        finally:
            self._open.pop(question_id, None)

    def answer(self, question_id: str, answer: str) -> bool:
        """Answer an open question; False when unknown, settled or not one of its actions."""
        found = self._open.get(question_id)
        if found is None or found[0].done() or answer not in found[1]:
            return False
        found[0].set_result(answer)
        return True
