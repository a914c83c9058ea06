"""``Request``: one in-flight request of a `Session`, its event stream and its one terminal event.

A request made by ``Session.send`` runs in a task of its own and queues its events for
``events()``; one made by ``Session.exchange`` runs in its caller's task and hands each event to
its listeners only (no queue, no hop). Either way exactly one terminal event (``finished``,
``failed`` or ``cancelled``) is delivered, and nothing after it. Request ids come from
`new_request_id`: short, unique in the process, and cheap (no system call per request).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any

from qodeassist_lsp.core.agent import Agent
from qodeassist_lsp.core.events import (
    CancelledEvent,
    FailedEvent,
    FinishedEvent,
    SessionEvent,
    TerminalEvent,
)
from qodeassist_lsp.core.provider import GenericProvider

log = logging.getLogger("qodeassist.session")

EventListener = Callable[[SessionEvent], None]


_ID_PREFIX = secrets.token_hex(3)
_ID_NUMBERS = itertools.count(1)


def new_request_id() -> str:
    """Return a short id unique in this process (request ids tag log lines; items use it too)."""
    # 12 hex digits: random per process, then a counter (no system call per request).
    return f"{_ID_PREFIX}{next(_ID_NUMBERS):06x}"


class Request:
    """One in-flight request: its event stream and its single terminal event."""

    def __init__(
        self,
        request_id: str,
        *,
        inline: bool = False,
        listeners: Sequence[EventListener] = (),
    ) -> None:
        self.id = request_id
        self._inline = inline
        self.stop_requested = False
        """Set by ``cancel()`` on an inline request: the session stops after the current event."""
        # An inline request's events go to its listeners only: it needs no queue.
        self._queue: asyncio.Queue[SessionEvent] | None = None if inline else asyncio.Queue()
        self._terminal: asyncio.Future[TerminalEvent] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[EventListener] = list(listeners)
        self.received = False
        """Whether the provider sent anything yet (a failure before that rolls back)."""
        self.agent: Agent | None = None
        """The agent serving the request: the session's own or, after a failover, a fallback."""
        self.provider: GenericProvider | None = None

    @property
    def done(self) -> bool:
        """Whether the terminal event has been emitted."""
        return self._terminal.done()

    def emit(self, event: SessionEvent) -> None:
        """Deliver ``event``; after a terminal event nothing more is delivered."""
        if self._terminal.done():
            return
        if isinstance(event, (FinishedEvent, FailedEvent, CancelledEvent)):
            self._terminal.set_result(event)
        if self._queue is not None:
            self._queue.put_nowait(event)
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a broken consumer must not break the request
                log.exception("[%s] event listener failed", self.id)

    def run(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` (the request's rounds) in a task of its own; cancelling cancels it."""
        self._task = asyncio.create_task(work, name=f"qa-{self.id}")
        # A task cancelled before it ever ran never reaches the work's own handler: end here.
        self._task.add_done_callback(
            lambda task: self.emit(CancelledEvent(self.id)) if task.cancelled() else None
        )

    def add_listener(self, listener: EventListener) -> None:
        """Call ``listener`` with every later event of this request."""
        self._listeners.append(listener)

    async def events(self) -> AsyncIterator[SessionEvent]:
        """Yield every event of the request, ending after the terminal one."""
        queue = self._queue
        if queue is None:
            raise RuntimeError("an inline request (Session.exchange) has listeners, not events()")
        while True:
            event = await queue.get()
            yield event
            if isinstance(event, (FinishedEvent, FailedEvent, CancelledEvent)):
                return

    async def wait(self) -> TerminalEvent:
        """Wait for and return the terminal event."""
        return await asyncio.shield(self._terminal)

    def cancel(self) -> None:
        """Cancel the request; it ends with ``cancelled``.

        An inline request (``Session.exchange``) stops after the event being handled; cancel
        the task running it to stop it inside an await.
        """
        if self._task is not None and not self._task.done():
            self._task.cancel()
        elif self._inline and not self.done:
            self.stop_requested = True
        elif not self.done:
            self.emit(CancelledEvent(self.id))
