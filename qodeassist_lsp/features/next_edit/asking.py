"""One next-edit model call: a prompt in, the answer text (or a typed error) out.

A chat model gets the prompt as a user message; a raw-prompt model (Sweep, Zeta) gets it as a
``CompletionBlock`` prefix, which the agent's ``[body]`` sends as its ``prompt``. The call runs
in the caller's task through ``Session.exchange``, so cancelling the caller closes the stream;
the stream is also closed as soon as the text reaches one of the format's stop strings (a server
that ignores ``stop`` must not keep generating the rest of a file).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from qodeassist_lsp.core.agent import AgentNotAvailable
from qodeassist_lsp.core.content import Block, CompletionBlock, user_text
from qodeassist_lsp.core.events import FailedEvent, FinishedEvent, SessionEvent, TextEvent
from qodeassist_lsp.core.session import Session
from qodeassist_lsp.features.next_edit.prompts import Prompt
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

__all__ = ["Answer", "SessionLease", "ask"]

log = logging.getLogger("qodeassist.next_edit")

MAX_ANSWER_CHARS = 32_768
"""A rewrite of a 21-line window is never this long: longer output is runaway."""

SessionLease = Callable[[], AbstractAsyncContextManager[Session]]


@dataclass(frozen=True, slots=True)
class Answer:
    """What the model said, or why it said nothing."""

    text: str
    agent: str
    error: ErrorInfo | None = None


class _Collector:
    """Takes the streamed text and closes the stream at a stop string or runaway output."""

    def __init__(self, agent: str, stops: tuple[str, ...]) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.agent = agent
        self.error: ErrorInfo | None = None
        self.session: Session | None = None
        self._stops = stops

    def on_event(self, event: SessionEvent) -> None:
        if isinstance(event, TextEvent):
            self.parts.append(event.text)
            self.size += len(event.text)
            tail = "".join(self.parts[-4:])
            runaway = self.size > MAX_ANSWER_CHARS
            if (runaway or any(s in tail for s in self._stops)) and self.session is not None:
                self.session.cancel()  # closes the stream after this event
        elif isinstance(event, FinishedEvent):
            self.agent = event.agent or self.agent
        elif isinstance(event, FailedEvent):
            self.error = event.error


async def ask(agent: str, lease: SessionLease, prompt: Prompt) -> Answer:
    """Send ``prompt`` through a session of ``agent`` and return the whole answer."""
    blocks: tuple[Block, ...] = (
        (CompletionBlock(prompt.text, ""),) if prompt.raw else user_text(prompt.text)
    )
    collector = _Collector(agent, prompt.stop)
    try:
        async with lease() as session:
            collector.session = session
            await session.exchange(blocks, collector.on_event)
    except AgentNotAvailable as exc:
        message = f"next-edit agent {agent!r} is not available: {exc}; check pipelines.next_edit"
        return Answer("", agent, ErrorInfo(ErrorCategory.CONFIG, message))
    except Exception as exc:  # one broken request must not take the server down
        log.exception("next-edit request to %s failed", agent)
        return Answer("", agent, ErrorInfo(ErrorCategory.PROVIDER, f"unexpected error: {exc}"))
    return Answer("".join(collector.parts), collector.agent, collector.error)
