"""Once per chat, a notice before the first answer served by a tiny offline demo model.

A 135M model cannot be a good assistant and must not pretend to be one: the first answer of
each chat an agent with ``demo = true`` serves starts with a quoted line saying so and how to get
a real one. It is sent as the answer's first ``text`` event, which every client already renders,
and never stored in the history, so the model never reads it back as something it said.
"""

from __future__ import annotations

from qodeassist_lsp.core.agent import Agent, demo_notice
from qodeassist_lsp.core.events import SessionEvent, TextEvent


class DemoNotices:
    """Arms the notice for a chat's first demo-served request and hands it out before it."""

    def __init__(self) -> None:
        """Start with no chat told."""
        self._told: set[str] = set()
        self._armed: dict[str, TextEvent] = {}

    def arm(self, chat_id: str, request_id: str, agent: Agent) -> None:
        """Prepare the notice if ``agent`` is a demo model and ``chat_id`` was not told yet."""
        if agent.demo and chat_id not in self._told:
            self._told.add(chat_id)
            self._armed[chat_id] = TextEvent(request_id, f"> *{demo_notice(agent)}*\n\n")

    def before(self, chat_id: str, event: SessionEvent) -> TextEvent | None:
        """Return the notice to send before ``event`` (its request's first), once."""
        notice = self._armed.get(chat_id)
        if notice is None or notice.request_id != event.request_id:
            return None
        del self._armed[chat_id]
        return notice
