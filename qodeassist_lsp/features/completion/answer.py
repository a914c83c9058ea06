"""Waiting for a generation and turning what it streamed into a request's result.

A request waits for its generation's end or for a newer request superseding it, whichever
comes first, within the automatic time budget (``time_budget_ms``, which includes the
debounce); out of time, the complete lines streamed so far are the answer. A request that wants
one line (``multi_line`` says so at its cursor) but attached to a multi-line generation (started
on a fresh line, where the user then typed on) answers as soon as that line is complete, with
that line, rather than waiting for the block the model goes on to write (when the block is
already there, it is shown whole, as the typed-ahead cache would). Errors, a
cancelled generation and empty answers become the matching outcomes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Final

from qodeassist_lsp.features.completion.context_builder import Cursor
from qodeassist_lsp.features.completion.debounce import PendingRequest
from qodeassist_lsp.features.completion.generation import Generation
from qodeassist_lsp.features.completion.postprocess import alternatives
from qodeassist_lsp.features.completion.requests import CompletionItem, CompletionResult
from qodeassist_lsp.features.completion.settings import CompletionSettings
from qodeassist_lsp.features.completion.stats import Outcome
from qodeassist_lsp.features.completion.triggers import single_line_mode

__all__ = ["VERDICT_WAIT_S", "Issue", "answer", "verdict"]

VERDICT_WAIT_S: Final = 0.5
"""How long a request waits for a running generation to produce as much as was typed."""

Issue = Callable[[Sequence[str], Cursor, CompletionSettings, bool, str], tuple[CompletionItem, ...]]
"""Makes the items of suggestion texts (``CompletionService._items``)."""


async def verdict(generation: Generation, cursor: Cursor, pending: PendingRequest) -> str | None:
    """Return what was typed since ``generation``'s anchor if it can answer ``cursor``.

    When the model has produced less than the user typed and all of it agrees (the key after
    the one that started it, typed while its prompt was still being read), the request waits
    up to ``VERDICT_WAIT_S`` for enough text to judge (with no limit while the model has not
    answered at all: a new generation would have to wait for its prompt too), or until a newer
    request supersedes it.
    """
    where = (cursor.line, cursor.line_before, cursor.line_after)
    typed = generation.serves(*where, undecided=True)
    if typed is None or generation.serves(*where) is not None:
        return typed
    generation.attach()  # keeps its stream open while this request waits
    growth = asyncio.ensure_future(generation.produced(len(typed)))
    try:
        await asyncio.wait(
            [growth, pending.superseded],
            timeout=VERDICT_WAIT_S if generation.answering else None,
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        growth.cancel()
        # In the next pass: a request that goes on to ``answer`` attaches first, so a
        # generation with no grace period is not closed between the two.
        asyncio.get_running_loop().call_soon(generation.detach)
    return generation.serves(*where, finished=True)


async def answer(
    generation: Generation,
    typed: str,
    cursor: Cursor,
    cs: CompletionSettings,
    invoked: bool,
    pending: PendingRequest,
    started: float,
    issue: Issue,
    *,
    reused: bool = False,
) -> CompletionResult:
    """Wait for ``generation`` (within the time budget) and turn its text into the result.

    ``typed``: what the user typed since the generation's anchor (it comes off the front of
    each suggestion); ``issue`` makes the items; ``reused``: the request attached to a
    generation that an earlier request started.
    """
    loop = asyncio.get_running_loop()
    timeout: float | None = None
    if not invoked and cs.time_budget_ms > 0:
        timeout = max(0.0, started + cs.time_budget_ms / 1000.0 - loop.time())
    agent = generation.agent
    # One future that the generation (when it ends) and a newer request (superseding
    # this one) both resolve: the request resumes in the very next pass of the loop.
    wake = pending.wake = loop.create_future()
    if pending.superseded.done():
        wake.set_result(None)
    one_line = not generation.postprocessor.options.single_line and single_line_mode(
        cs.multi_line, cursor.line_after, cursor.line_before
    )
    line = generation.first_line() if one_line else None
    generation.attach(wake)
    try:
        await asyncio.wait(
            [wake] if line is None else [wake, line],
            timeout=timeout,  # None: an explicit request, no time budget
            return_when=asyncio.FIRST_COMPLETED,
        )  # out of time: answer with what has streamed so far
    finally:
        generation.detach(wake)
        pending.wake = None
        if line is not None:
            generation.forget_line(line)
    if pending.superseded.done():
        return CompletionResult(outcome=Outcome.SUPERSEDED, reason="a newer request", agent=agent)
    timed_out = not generation.done.done()
    agent = generation.answered_by or agent
    if generation.error is not None:
        return CompletionResult(
            outcome=Outcome.ERROR, reason="provider error", agent=agent, error=generation.error
        )
    if generation.cancelled and not generation.text:
        return CompletionResult(
            outcome=Outcome.SUPERSEDED, reason="generation cancelled", agent=agent
        )
    texts = alternatives(generation.result().text, cs.max_items_invoked)
    if one_line and timed_out:  # woken by the first line: that line is the whole answer
        texts = list(dict.fromkeys(text.split("\n", 1)[0] for text in texts))
        timed_out = not texts
    rests = [t[len(typed) :] for t in texts if t.startswith(typed) and len(t) > len(typed)]
    items = issue(rests, cursor, cs, invoked, agent)
    if timed_out:
        return CompletionResult(items, Outcome.TIMEOUT, reason="time_budget_ms", agent=agent)
    if not items:
        return CompletionResult(outcome=Outcome.EMPTY, reason="nothing to suggest", agent=agent)
    return CompletionResult(items, Outcome.REUSED if reused else Outcome.MODEL, agent=agent)
