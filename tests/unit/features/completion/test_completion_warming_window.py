"""Warming an agent without the extra-context ring: the whole request at the likely cursor.

The Embedded Completion agent continues the text before the cursor; its first request on a
file it has not seen reads the whole window (seconds on a small local model). Runs on the
completion service's harness (``test_completion_service``) with its plain prefix/suffix agent.
"""

from __future__ import annotations

import asyncio

from tests.unit.features.completion.test_completion_service import (
    Harness,
    completer_agent,
    harness,
    until,
)

__all__ = ["completer_agent", "harness"]  # the fixtures, imported for the tests below

TEXT = "import os\n\n\ndef helper(path):\n    return os.path.basename(path)\n\n\ndef main():\n    "
URI = "file:///proj/a.py"


async def test_opening_a_document_warms_the_request_at_its_end(harness: Harness) -> None:
    harness.use(
        warm_idle_ms=5_000, warm_cursor_window=True
    )  # an open does not wait the idle period
    harness.hold()
    harness.open(TEXT, uri=URI)
    await until(lambda: len(harness.bodies) == 1, seconds=1.0)
    assert harness.bodies[0]["prompt"] == TEXT  # the request a key at the end would send
    assert harness.bodies[0]["suffix"] == ""
    harness.scripts[0].send("x")  # the prompt is processed (and cached): closed at once
    await until(harness.scripts[0].closed.is_set)
    assert harness.service.status()["warmUps"] == 1


async def test_a_key_closes_the_warm_up_at_once_and_reuses_its_prompt(harness: Harness) -> None:
    harness.use(warm_idle_ms=300, warm_cursor_window=True)
    harness.hold()
    harness.open(TEXT, uri=URI)
    await until(lambda: len(harness.bodies) == 1)
    harness.answer("arser = 1\n")
    # No first event from the warm-up: it may have guessed the wrong place, and llama.cpp keeps
    # what it has read of it; the key's request does not wait for its prompt to be read.
    result = await asyncio.wait_for(harness.complete(TEXT + "p|", uri=URI), 2)
    assert [i.insert_text for i in result.items] == ["arser = 1"]
    assert harness.closed[1] == [True]
    assert harness.bodies[1]["prompt"] == TEXT + "p"


async def test_a_cursor_hint_warms_there_and_the_same_prompt_is_not_sent_twice(
    harness: Harness,
) -> None:
    harness.open(TEXT, uri=URI)
    harness.use(warm_idle_ms=30, warm_cursor_window=True)
    harness.hold()
    harness.store.note_cursor(URI, 4, 10)  # a code action at "    return|"
    await until(lambda: len(harness.bodies) == 1)
    assert harness.bodies[0]["prompt"] == TEXT.split(" os.path")[0]
    assert harness.bodies[0]["suffix"].startswith(" os.path.basename(path)\n")
    harness.scripts[0].send("x")
    await until(harness.scripts[0].closed.is_set)
    harness.store.note_cursor(URI, 4, 10)  # the same place again: cached already
    harness.store.note_cursor("file:///proj/unknown.py", 0, 0)  # not open: ignored
    await asyncio.sleep(0.15)
    assert len(harness.bodies) == 1
    assert harness.service.status()["warmUps"] == 1


async def test_nothing_is_warmed_while_warming_is_off(harness: Harness) -> None:
    harness.open(TEXT, uri=URI)  # the harness runs with warm_idle_ms = 0
    harness.store.note_cursor(URI, 4, 10)
    await asyncio.sleep(0.15)
    assert harness.bodies == []


async def test_nothing_with_the_setting_off_or_in_manual_mode(harness: Harness) -> None:
    harness.use(warm_idle_ms=30, warm_cursor_window=False)
    harness.open(TEXT, uri=URI)
    harness.store.note_cursor(URI, 4, 10)
    await asyncio.sleep(0.15)
    harness.use(warm_idle_ms=30, warm_cursor_window=True, mode="manual")
    harness.store.note_cursor(URI, 4, 10)
    await asyncio.sleep(0.15)
    assert harness.bodies == []


async def test_a_caret_told_right_after_the_open_is_warmed_as_soon(harness: Harness) -> None:
    harness.use(warm_idle_ms=5_000)
    harness.hold()
    harness.open(TEXT, uri=URI)
    harness.store.note_cursor(URI, 4, 10)  # the editor says where the caret is
    await until(lambda: len(harness.bodies) == 1, seconds=1.0)
    assert harness.bodies[0]["prompt"] == TEXT.split(" os.path")[0]  # not the file's end


async def test_an_empty_window_sends_nothing(harness: Harness) -> None:
    harness.use(warm_idle_ms=30)
    harness.open("\n\n", uri=URI)  # a new file: nothing to read ahead
    harness.store.note_cursor(URI, 1, 0)
    await asyncio.sleep(0.15)
    assert harness.bodies == []


async def test_a_caret_at_the_top_warms_the_suffix_only_for_an_agent_that_sends_it(
    harness: Harness,
) -> None:
    harness.use(warm_idle_ms=30)
    harness.hold()
    harness.open(TEXT, uri=URI)
    harness.store.note_cursor(URI, 0, 0)  # the harness agent sends the suffix: worth reading
    await until(lambda: len(harness.bodies) == 1)
    assert harness.bodies[0]["prompt"] == "" and harness.bodies[0]["suffix"] == TEXT
    profile = harness.backend.configuration.agents["Completer"]
    body = {key: value for key, value in profile.body.items() if key != "suffix"}
    harness.backend.configuration.agents["Completer"] = profile.model_copy(update={"body": body})
    harness.scripts[0].send("x")
    await until(harness.scripts[0].closed.is_set)
    harness.open(TEXT, uri="file:///proj/c.py")
    harness.store.note_cursor("file:///proj/c.py", 0, 0)  # a prefix-only agent: nothing
    await asyncio.sleep(0.15)
    assert len(harness.bodies) == 1
