"""One upstream completion call, running on its own so later requests can share it.

A ``Generation`` acquires a pooled session, sets the ``completion.context`` layer, sends the
``CompletionBlock`` through ``Session.exchange`` (in its own task, so each streamed delta is
taken as the session reads it) and collects the streamed text. It closes the stream itself as
soon as post-processing says more text could not change the suggestion (single line complete,
repeated lines, the model reached the code below the cursor), which saves tokens and latency.

It runs in its own task rather than in the request handler: when the user types exactly what the
model has produced so far, the next request *attaches* to the running generation instead of
starting a new one (Continue's generator reuse). Requests attach and detach; when the last one
detaches (cancelled, superseded, out of time) the generation gets a short grace period for a
follow-up request to attach, then its upstream stream is closed.

Model servers with one slot (the embedded llama.cpp server, a local Ollama) serve one request at
a time, so a generation may be told to wait for the one it replaces (``after``): its request is
only sent once the previous one has closed its stream, and never queues behind it. A
cancellation is immediate unless the request has waited longer than ``load_window_s`` without
any answer: then the server is probably loading the model (Ollama loads on demand and abandons
the load when the client hangs up), so the stream is closed as soon as its answer starts instead.

A *warm-up* generation (``warm=True``, see ``warming``) answers nobody: its stream is closed at
the first event, when the model server has processed (and cached) its prompt.

Where the line below the cursor proves the answer wrong (``ask_again``), the generation asks
the model once more before it ends, with the first answer's first token excluded, when its
agent's body uses ``ctx.avoid``: never more than once, in the same task (a key cancels it like
the first request), and nobody is answered with the first answer meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Final

from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.core.agent import Agent, AgentNotAvailable
from qodeassist_lsp.core.content import CompletionBlock
from qodeassist_lsp.core.events import (
    CancelledEvent,
    FailedEvent,
    FinishedEvent,
    SessionEvent,
    TextEvent,
)
from qodeassist_lsp.core.session import Session
from qodeassist_lsp.features.completion.ask_again import avoided_token, disproved
from qodeassist_lsp.features.completion.context_builder import CONTEXT_LAYER, CompletionContext
from qodeassist_lsp.features.completion.postprocess import Postprocessor, Processed
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

__all__ = ["MAX_OUTPUT_CHARS", "Anchor", "Generation", "SessionLease", "takes_avoid"]

log = logging.getLogger("qodeassist.completion")

MAX_OUTPUT_CHARS: Final = 16_384
"""A completion longer than this is runaway output: the stream is closed."""
LOAD_WINDOW_S: Final = 1.0
"""An unanswered request older than this may be loading the model: it is not cut off."""
_PIECES_KEPT: Final = 64
"""Streamed pieces kept to find the answer's first token (it is among the first few)."""

SessionLease = Callable[[], AbstractAsyncContextManager[Session]]
"""Lends a session for one exchange (``SessionManager.acquire`` bound to agent and pipeline)."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a generation was asked for: document, line and the text around the cursor."""

    uri: str
    line: int
    line_before: str
    line_after: str


class Generation:
    """One streamed upstream completion, shareable by every request it can still answer."""

    def __init__(
        self,
        anchor: Anchor,
        agent: str,
        lease: SessionLease,
        context: CompletionContext,
        *,
        layer: str,
        language: str,
        postprocessor: Postprocessor,
        grace_s: float = 0.25,
        on_done: Callable[[Generation], None] | None = None,
        after: Generation | None = None,
        load_window_s: float = LOAD_WINDOW_S,
        warm: bool = False,
    ) -> None:
        """Prepare (not start) the generation; ``on_done`` runs once it has ended.

        ``after``: a generation on the same model server that must end before this one sends
        its request; ``load_window_s``: see ``cancel``.
        """
        self.anchor = anchor
        self.agent = agent
        self.postprocessor = postprocessor
        self.text = ""
        """The raw text streamed so far."""
        self.error: ErrorInfo | None = None
        self.answered_by = ""
        """The agent that answered: ``agent`` or, after a failover, one of its fallbacks."""
        self.stopped_early = False
        self.cancelled = False
        self.warm = warm
        """A warm-up: it answers nobody (``warming``)."""
        self.reusable = not warm
        """False once the document changed outside the anchor's line (always, for a warm-up)."""
        self._lease = lease
        self._context = context
        self._layer = layer
        self._language = language
        self._grace_s = grace_s
        self._on_done = on_done
        self._waiters = 0
        self._orphan_timer: asyncio.TimerHandle | None = None
        loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = loop.create_future()
        self._task: asyncio.Task[None] | None = None
        self._result: Processed | None = None
        self._wakes: list[asyncio.Future[None]] = []
        self._growth: list[tuple[int, asyncio.Future[None]]] = []
        """Requests waiting for the suggestion to reach a length (``produced``)."""
        self._lines: list[asyncio.Future[None]] = []
        """Requests waiting for the suggestion's first complete line (``first_line``)."""
        self._session: Session | None = None
        self._stopping = False
        self._after = after
        self.load_window_s = load_window_s
        """See ``cancel``; infinite for a generation that follows an answer (a prefetch)."""
        self.sent_at: float | None = None
        """When the request went upstream (after waiting for ``after``); None before."""
        self.answering = False
        """True once the model server's answer has started."""
        self._cancel_on_answer = warm
        """Close the stream at the first event: a cancel that waited out a load, or a warm-up."""
        self.one_slot = False
        """The model server is on this machine and reads a prompt to its end even after a
        hang-up (llama.cpp): ``supersede`` waits for the answer to start."""
        self.asked_again = ""
        """The ``ask_again`` rule that made this generation ask a second time ("" if none)."""
        self._pieces: list[str] = []
        """The first streamed pieces of the current answer (one token each from llama.cpp)."""
        self._again: tuple[str, str] | None = None
        """The rule and the token to exclude, once the first answer was found wrong."""
        self._avoids: bool | None = None
        """Whether the serving agent's body uses ``ctx.avoid`` (None: not asked yet)."""

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start streaming in a task of its own."""
        self._task = asyncio.create_task(self._run(), name=f"qa-completion-{self.anchor.uri}")
        self._task.add_done_callback(self._finished)

    def cancel(self) -> None:
        """Close the upstream stream (the generation ends as cancelled).

        At once, unless the request has gone unanswered for ``load_window_s``: the model is
        probably loading, and hanging up would abandon the load that the next request needs,
        so the stream is closed when its answer starts.
        """
        if self._orphan_timer is not None:
            self._orphan_timer.cancel()
            self._orphan_timer = None
        if self._task is None or self._task.done():
            return
        self.cancelled = True
        if self._cancel_on_answer and not self.answering and not self.warm:
            return  # already to be closed at its first event
        loop = asyncio.get_running_loop()
        if (
            not self.answering
            and self.sent_at is not None
            and loop.time() - self.sent_at >= self.load_window_s
        ):
            if not self._cancel_on_answer:
                self._cancel_on_answer = True
                log.debug(
                    "completion for %s: cancel deferred until it answers (loading?)",
                    self.anchor.uri,
                )
            return
        self._task.cancel()

    def supersede(self) -> None:
        """Make way for a newer request on the same model server.

        At once, like ``cancel``; but a ``one_slot`` server that has not started answering
        keeps reading the prompt after a hang-up, so the stream is closed at its first event
        instead: the newer request is sent when the slot is really free, never queued behind
        it unseen (docs/embedded.md). A warm-up is closed at once all the same: it may have
        guessed the wrong place, and llama.cpp keeps what it has read of it.
        """
        if self.one_slot and not self.answering and self.sent_at is not None and not self.warm:
            if self._task is not None and not self._task.done():
                self.cancelled = True
                self._cancel_on_answer = True
                wakes, self._wakes = self._wakes, []
                for wake in wakes:  # nobody gets this answer: its requests end now
                    _resolve(wake)
            return
        self.cancel()

    def attach(self, wake: asyncio.Future[None] | None = None) -> None:
        """Register a request waiting for this generation; ``wake`` is resolved when it ends.

        The generation resolves ``wake`` itself, so the waiting request resumes in the next
        pass of the event loop rather than after a chain of done-callbacks.
        """
        self._waiters += 1
        if wake is not None:
            if self.done.done():
                _resolve(wake)
            else:
                self._wakes.append(wake)
        if self._orphan_timer is not None:
            self._orphan_timer.cancel()
            self._orphan_timer = None

    def detach(self, wake: asyncio.Future[None] | None = None) -> None:
        """Unregister a waiting request; the last one leaving starts the grace period."""
        self._waiters = max(0, self._waiters - 1)
        if wake is not None and wake in self._wakes:
            self._wakes.remove(wake)
        if self._waiters or self.done.done():
            return
        if self._grace_s <= 0:
            self.cancel()
        else:
            self._orphan_timer = asyncio.get_running_loop().call_later(
                self._grace_s, self._cancel_if_orphaned
            )

    def _cancel_if_orphaned(self) -> None:
        self._orphan_timer = None
        if not self._waiters:
            self.cancel()

    # -- reuse ---------------------------------------------------------------------------------
    def serves(
        self,
        line: int,
        line_before: str,
        line_after: str,
        *,
        undecided: bool = False,
        finished: bool = False,
    ) -> str | None:
        """Return what was typed since the anchor if this generation can answer that cursor.

        It can while it is still running (or, with ``finished``, after it ended), nothing
        changed outside the anchor's line, and the text typed since the anchor is exactly the
        beginning of what the model produced. With ``undecided``, also while the model has
        produced less than was typed and all of it agrees (``produced`` waits for the verdict).
        """
        anchor = self.anchor
        if not self.reusable or self.cancelled or (self.done.done() and not finished):
            return None
        if line != anchor.line or line_after != anchor.line_after:
            return None
        if not line_before.startswith(anchor.line_before):
            return None
        typed = line_before[len(anchor.line_before) :]
        if "\n" in typed:
            return None
        answer = self.postprocessor.answer(self.text)
        if answer.startswith(typed) or (undecided and typed.startswith(answer)):
            return typed
        return None

    async def produced(self, chars: int) -> None:
        """Wait until the suggestion so far is at least ``chars`` long or the generation ended."""
        if self.done.done() or len(self.postprocessor.answer(self.text)) >= chars:
            return
        future = asyncio.get_running_loop().create_future()
        self._growth.append((chars, future))
        try:
            await future
        finally:
            with contextlib.suppress(ValueError):
                self._growth.remove((chars, future))

    def first_line(self) -> asyncio.Future[None]:
        """Return a future resolved once the suggestion has a complete first line (or ends).

        A single-line request attached to a multi-line generation answers with that line
        instead of waiting for the lines after it; ``forget_line`` drops the future.
        """
        future = asyncio.get_running_loop().create_future()
        if self.done.done() or self.result().text:
            future.set_result(None)
        else:
            self._lines.append(future)
        return future

    def forget_line(self, future: asyncio.Future[None]) -> None:
        """Stop resolving a ``first_line`` future (its request has its answer)."""
        with contextlib.suppress(ValueError):
            self._lines.remove(future)

    def result(self) -> Processed:
        """Return the suggestion: from all the text once finished, else its complete lines."""
        if self._result is not None:
            return self._result
        done = self.done.done()
        processed = self.postprocessor.process(self.text, final=done and not self.stopped_early)
        if done:  # the text no longer changes: the cache and the answer share one result
            self._result = processed
        return processed

    # -- the stream ----------------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            await self._stream()
        finally:
            # Settled inside the task, not in its done-callback: waiters resume one loop pass
            # sooner. A task cancelled before it ever ran is settled by ``_finished``.
            self._settle()

    async def _stream(self) -> None:
        if self._after is not None:
            # Not cancelled with us: asyncio.wait leaves the awaited future alone.
            await asyncio.wait([self._after.done])
            self._after = None
        self.sent_at = asyncio.get_running_loop().time()
        try:
            async with self._lease() as session:
                session.language = self._language
                session.system_prompt.set_layer(CONTEXT_LAYER, self._layer)
                session.files_metadata = [f.as_metadata() for f in self._context.extra]
                self._session = session
                # In this task: the text is taken as the session reads it, no hand-over.
                options = self.postprocessor.options
                block = CompletionBlock(
                    self._context.prefix,
                    self._context.suffix,
                    options.single_line,
                    healed_word=options.healed_word,
                )
                await session.exchange([block], self._on_event)
                if self._again is None and not self.done.done():
                    self._again = self._wrong_answer()
                if self._again is not None and not self.done.done():
                    rule, token = self._again
                    self.asked_again = rule
                    log.debug("completion for %s: asked again (%s)", self.anchor.uri, rule)
                    self._restart()
                    block = dataclasses.replace(block, avoid=(token,))
                    await session.exchange([block], self._on_event)
        except AgentNotAvailable as exc:
            self.error = ErrorInfo(
                ErrorCategory.CONFIG,
                f"completion agent {self.agent!r} is not available: {exc}; check "
                "pipelines.code_completion",
            )
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        except Exception as exc:  # one broken completion must not take the server down
            log.exception("completion generation for %s failed", self.anchor.uri)
            self.error = ErrorInfo(ErrorCategory.PROVIDER, f"unexpected error: {exc}")

    def _on_event(self, event: SessionEvent) -> None:
        if not self.answering and not isinstance(event, (FailedEvent, CancelledEvent)):
            self.answering = True
            if self._cancel_on_answer and self._session is not None:
                self._stopping = True
                self._session.cancel()  # loaded (or warmed): close the stream after this event
                return
        if isinstance(event, TextEvent):
            if not self.answered_by and self._session is not None:
                self.answered_by = self._session.serving_agent.name
            if not self._stopping and self._take(event.text):
                self._stopping = True
                if self._session is not None:
                    self._session.cancel()  # the session closes the stream after this event
        elif isinstance(event, FinishedEvent):
            self.answered_by = event.agent
            if not self.asked_again:
                self._again = self._wrong_answer()
            if self._again is None or self.asked_again:
                # The text is final: answer the waiting requests now, not after the stream and
                # the session are tidied away (the session yields to them right after this).
                self._settle()
        elif isinstance(event, FailedEvent):
            self.error = event.error
        elif isinstance(event, CancelledEvent) and not self._stopping:
            self.cancelled = True

    def _take(self, delta: str) -> bool:
        """Add streamed text; return True when the stream can be closed."""
        self.text += delta
        if len(self._pieces) < _PIECES_KEPT:
            self._pieces.append(delta)
        if self._growth:
            length = len(self.postprocessor.answer(self.text))
            for chars, future in self._growth:
                if length >= chars:
                    _resolve(future)
        shown = self.result().text if self._lines and "\n" in delta else ""
        if shown and not self._maybe_wrong(shown):
            lines, self._lines = self._lines, []
            for future in lines:
                _resolve(future)
        if len(self.text) > MAX_OUTPUT_CHARS:
            self.stopped_early = True
            return True
        if (
            "\n" in delta or self.postprocessor.looping(self.text)
        ) and self.postprocessor.should_stop(self.text):
            self.stopped_early = True
            return True
        return False

    # -- asking again ---------------------------------------------------------------------------
    def _maybe_wrong(self, shown: str) -> bool:
        """Whether the answer so far (``shown``) may yet be asked again (it is not shown yet)."""
        if self.asked_again or self.warm:
            return False
        if disproved(shown, self.postprocessor.options, self._language) is None:
            return False
        return self._takes_avoid()

    def _wrong_answer(self) -> tuple[str, str] | None:
        """Return the rule proving the finished first answer wrong, and the token to exclude.

        None when nothing does, it was already asked again, it is a warm-up or was cancelled,
        the token is not one to ban alone, or the agent's body does not use ``ctx.avoid``.
        """
        if self.asked_again or self.warm or self.cancelled or self.error is not None:
            return None
        answer = self.postprocessor.process(self.text, final=not self.stopped_early).text
        rule = disproved(answer, self.postprocessor.options, self._language)
        if rule is None or self._session is None:
            return None
        token = avoided_token(self._pieces)
        if token is None or not self._takes_avoid():
            return None
        return rule, token

    def _takes_avoid(self) -> bool:
        """Whether the serving agent's body sends ``ctx.avoid`` (asked once per generation)."""
        if self._avoids is None:
            session = self._session
            self._avoids = session is not None and takes_avoid(session.serving_agent)
        return self._avoids

    def _restart(self) -> None:
        """Forget the first answer: the second one streams into a clean slate."""
        self.text = ""
        self._pieces = []
        self._result = None
        self.stopped_early = False
        self._stopping = False

    def _finished(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            self.cancelled = True
        self._settle()

    def _settle(self) -> None:
        """End the generation once: resolve ``done`` and the waiters, then the bookkeeping."""
        if self.done.done():
            return
        if self._orphan_timer is not None:
            self._orphan_timer.cancel()
            self._orphan_timer = None
        self.done.set_result(None)
        word = self.postprocessor.options.healed_word
        if word and self.text and not self.text.startswith(word) and not self.warm:
            log.debug(
                "completion for %s: answer dropped, it does not start with the healed word %r "
                "(the provider ignored the grammar?)",
                self.anchor.uri,
                word,
            )
        wakes, self._wakes = self._wakes, []
        lines, self._lines = self._lines, []
        for wake in wakes + lines + [future for _, future in self._growth]:
            _resolve(wake)
        if self._on_done is not None:
            try:
                self._on_done(self)
            except Exception:  # bookkeeping must not break the loop's callback
                log.exception("completion bookkeeping failed for %s", self.anchor.uri)


def takes_avoid(agent: Agent) -> bool:
    """Whether ``agent``'s body sends ``ctx.avoid`` (it renders differently with a token)."""
    try:
        plain = agent.template.render(complete_context(model=agent.model))
        told = agent.template.render(complete_context({"avoid": ["x"]}, model=agent.model))
    except Exception:  # a body that cannot render here is not one to ask again with
        log.debug("completion agent %s: body not rendered for ctx.avoid", agent.name)
        return False
    return plain != told


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
