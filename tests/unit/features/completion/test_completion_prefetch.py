"""The suggestion after an accept, prefetched (issue 27; llama.vim's speculative FIM)."""

from __future__ import annotations

import pytest

from qodeassist_lsp.context.documents import Document, LineEdit
from qodeassist_lsp.features.completion.prefetch import after_accept
from qodeassist_lsp.features.completion.requests import CompletionItem
from qodeassist_lsp.features.completion.service import TriggerKind
from qodeassist_lsp.features.completion.stats import Outcome
from tests.unit.features.completion.test_completion_service import (
    AGENT,
    PY,
    Harness,
    Script,
    harness,
    until,
)

__all__ = ["harness"]  # the fixture, imported for the tests below
AUTO = TriggerKind.AUTOMATIC


@pytest.fixture
def completer_agent() -> str:
    return AGENT


def test_after_accept_inserts_over_the_range_and_moves_the_cursor() -> None:
    document = Document(PY, "x = foo)\ny\n", 3)
    accepted = after_accept(document, CompletionItem("1", "bar(a)", 0, 4, 8))
    assert accepted.document.text == "x = bar(a)\ny\n"
    assert (accepted.line, accepted.character) == (0, 10)
    assert accepted.document.version == 4
    several = after_accept(document, CompletionItem("2", "a\n  b", 1, 1, 1))
    assert several.document.text == "x = foo)\nya\n  b\n"
    assert (several.line, several.character) == (2, 3)


def accept(harness: Harness, text: str, version: int, line: int, inserted: str) -> None:
    """The editor inserting the shown suggestion (``text``: the document afterwards)."""
    harness.store.change(PY, text, version, [LineEdit(line, inserted)])


async def prefetching(
    harness: Harness, suggestion: str = "compute(a, b)", at: str = "x = |\n"
) -> Script:
    """Show ``suggestion`` at ``at``; return the held upstream stream of its prefetch."""
    harness.use(prefetch_after_accept=True)
    harness.answer(suggestion)
    harness.hold()
    await harness.complete(at, AUTO)
    await until(lambda: len(harness.bodies) == 2)
    return harness.scripts[1]


async def test_the_request_after_an_accept_is_answered_from_the_prefetch(
    harness: Harness,
) -> None:
    harness.use(prefetch_after_accept=True)
    harness.answer("compute(a, b)")
    harness.answer("  # done")
    shown = await harness.complete("x = |\n", AUTO)
    assert shown.items[0].insert_text == "compute(a, b)"
    await until(lambda: len(harness.bodies) == 2)  # prefetched at once, before any accept
    assert harness.bodies[1]["prompt"] == "x = compute(a, b)"
    await until(lambda: harness.service.status()["inFlight"] == 0)
    assert harness.service.status()["cachedSuggestions"] == 1  # the prefetch's waits its accept
    accept(harness, "x = compute(a, b)\n", 2, 0, "compute(a, b)")
    follow = await harness.complete("x = compute(a, b)|\n", AUTO)
    assert follow.outcome is Outcome.TYPED_AHEAD
    assert follow.items[0].insert_text == "  # done"
    assert len(harness.bodies) == 2  # no new provider request for it
    assert harness.service.status()["prefetchesAccepted"] == 1


async def test_an_accept_during_the_prefetch_attaches_to_it(harness: Harness) -> None:
    await prefetching(harness)
    accept(harness, "x = compute(a, b)\n", 2, 0, "compute(a, b)")
    follow = harness.complete("x = compute(a, b)|\n", AUTO)
    harness.scripts[1].send("  # done", end=True)
    result = await follow
    assert result.outcome is Outcome.REUSED
    assert result.items[0].insert_text == "  # done"
    assert len(harness.bodies) == 2


async def test_typing_something_else_cancels_the_prefetch(harness: Harness) -> None:
    prefetch = await prefetching(harness)
    harness.store.change(PY, "x = z\n", 2, [LineEdit(0, "z")])
    await until(prefetch.closed.is_set)  # the slot is free before the next request
    harness.answer("zz")
    result = await harness.complete("x = z|\n", AUTO)
    assert result.outcome is Outcome.MODEL
    assert harness.service.status()["prefetchesAccepted"] == 0


@pytest.mark.parametrize("setting", ["off", "invoked", "cloud"])
async def test_no_prefetch_when_off_invoked_or_billed(harness: Harness, setting: str) -> None:
    harness.use(prefetch_after_accept=setting != "off")
    if setting == "cloud":
        config = harness.backend.configuration
        remote = config.providers["Local"].model_copy(
            update={"url": "https://api.example.com/v1", "local": None}
        )
        config.providers["Local"] = remote
    harness.answer("compute(a, b)")
    trigger = TriggerKind.INVOKED if setting == "invoked" else AUTO
    assert (await harness.complete("x = |\n", trigger)).items
    for _ in range(10):
        await until(lambda: True)
    assert len(harness.bodies) == 1


async def test_a_slow_prefetch_is_not_kept_as_a_model_load(harness: Harness) -> None:
    # A request unanswered for load_window_s may be loading the model and is not cut off; a
    # prefetch follows an answer, so the model is loaded: it yields the slot at once.
    harness.service.load_window_s = 0.0
    await prefetching(harness)
    harness.store.change(PY, "x = z\n", 2, [LineEdit(0, "z")])
    await until(harness.scripts[1].closed.is_set)


async def test_typing_along_the_suggestion_keeps_the_prefetch(harness: Harness) -> None:
    await prefetching(harness)
    harness.store.change(PY, "x = co\n", 2, [LineEdit(0, "co")])  # typing its first keys
    hit = await harness.complete("x = co|\n", AUTO)
    assert hit.outcome is Outcome.TYPED_AHEAD
    accept(harness, "x = compute(a, b)\n", 3, 0, "mpute(a, b)")  # then Tab
    follow = harness.complete("x = compute(a, b)|\n", AUTO)
    harness.scripts[1].send("  # done", end=True)
    result = await follow
    assert result.items[0].insert_text == "  # done"
    assert result.outcome is Outcome.REUSED
    assert len(harness.bodies) == 2  # one prefetch, kept all along


async def test_the_prefetch_answers_one_line_where_a_request_would_get_several(
    harness: Harness,
) -> None:
    # After "x = f(" + the accepted "a," the cursor ends in "," (a request there may get
    # several lines): the prefetch takes the first and closes its stream, so it is ready by the
    # time the user, having read the suggestion, accepts it.
    prefetch = await prefetching(harness, "a,", at="x = f(|\n")
    assert [body["single_line"] for body in harness.bodies] == [False, True]  # ctx.single_line
    prefetch.send(" b,\n", "    c,\n", "    d)\n")
    await until(prefetch.closed.is_set)  # closed after the first line, not run to its end
    accept(harness, "x = f(a,\n", 2, 0, "a,")
    follow = await harness.complete("x = f(a,|\n", AUTO)
    assert follow.outcome is Outcome.TYPED_AHEAD
    assert [i.insert_text for i in follow.items] == [" b,"]


async def test_a_prefetch_that_ended_before_a_several_line_accept_still_answers_it(
    harness: Harness,
) -> None:
    # The suggestion ends the line and writes the next one; the prefetch for after it ends
    # while the user reads, and its answer is for a line that does not exist yet. The user
    # types the line break and a key of it (the editor re-anchors the rest), then accepts.
    harness.use(prefetch_after_accept=True)
    harness.answer("\ny = 2")
    harness.answer("  # done")
    harness.answer("from the model")  # only if the prefetch was lost
    shown = await harness.complete("x = 1|\n", AUTO)
    assert shown.items[0].insert_text == "\ny = 2"
    await until(lambda: len(harness.bodies) == 2 and harness.service.status()["inFlight"] == 0)
    harness.store.change(PY, "x = 1\ny\n", 2, [LineEdit(0, "\ny")])
    assert (await harness.complete("x = 1\ny|\n", AUTO)).items[0].insert_text == " = 2"
    accept(harness, "x = 1\ny = 2\n", 3, 1, " = 2")
    follow = await harness.complete("x = 1\ny = 2|\n", AUTO)
    assert follow.outcome is Outcome.TYPED_AHEAD
    assert follow.items[0].insert_text == "  # done"
    assert len(harness.bodies) == 2
