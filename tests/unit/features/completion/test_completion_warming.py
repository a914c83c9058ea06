"""Idle cache warming over a real Session: what goes upstream when the user is idle, and when not.

Runs on the completion service's harness (``test_completion_service``), with an agent whose
prompt starts with the extra context, on a loopback provider.
"""

from __future__ import annotations

import asyncio

import pytest

from qodeassist_lsp.config.overrides import AgentOverride
from qodeassist_lsp.features.completion.service import TriggerKind
from qodeassist_lsp.features.completion.warming import uses_extra_context
from tests.unit.features.completion.test_completion_service import (
    AGENT,
    Harness,
    harness,
    until,
)

__all__ = ["harness"]  # the fixture, imported for the tests below

RING_AGENT = AGENT.replace(
    """prompt = \'\'\'{{ (ctx.prefix or "") | tojson }}\'\'\'""",
    """prompt = \'\'\'{{ ((ctx.files_metadata | map(attribute="content") | join("")) ~ (ctx.prefix or "")) | tojson }}\'\'\'""",
)
OTHER = "file:///proj/b.py"
B_TEXT = "import os\n\n\ndef helper(path):\n    return os.path.basename(path)\n"


@pytest.fixture
def completer_agent() -> str:
    assert RING_AGENT != AGENT
    return RING_AGENT


def idle(harness: Harness, ms: int = 30) -> None:
    harness.use(warm_idle_ms=ms)


async def test_opening_a_document_warms_its_chunk_once_the_user_is_idle(harness: Harness) -> None:
    idle(harness)
    harness.hold()  # the warm-up's stream stays open: the server must close it itself
    harness.open(B_TEXT, uri=OTHER)
    await until(lambda: len(harness.bodies) == 1)
    assert harness.bodies[0]["prompt"] == B_TEXT  # the ring alone, no cursor window
    assert harness.bodies[0]["suffix"] == ""
    harness.scripts[0].send("x")  # the first event: the prompt has been processed
    await until(harness.scripts[0].closed.is_set)
    assert harness.service.status()["warmUps"] == 1
    await asyncio.sleep(0.1)
    assert len(harness.bodies) == 1  # once per idle period, not again and again


async def test_a_request_during_the_warm_up_replaces_it(harness: Harness) -> None:
    idle(harness)
    harness.hold()
    harness.open(B_TEXT, uri=OTHER)
    await until(lambda: len(harness.bodies) == 1)
    harness.answer("helper(p)\n")
    result = await harness.complete("import b\nb.|\n", TriggerKind.INVOKED)
    assert [i.insert_text for i in result.items] == ["helper(p)"]
    assert harness.closed[1] == [True]  # sent once the warm-up's stream was closed
    assert harness.bodies[1]["prompt"].startswith(B_TEXT)  # reuses what the warm-up sent


async def test_nothing_is_sent_when_the_ring_is_what_was_sent_last(harness: Harness) -> None:
    harness.open(B_TEXT, uri=OTHER)
    harness.answer("helper(p)\n")
    await harness.complete("import b\nb.|\n")  # sends the ring (b.py's chunk) with its window
    idle(harness)
    harness.service._warmer.arm("file:///proj/a.py", 1, 2)
    await asyncio.sleep(0.1)
    assert len(harness.bodies) == 1
    assert harness.service.status()["warmUps"] == 0
    harness.hold()
    harness.open("CONSTANT = 1\n", uri="file:///proj/c.py")  # the ring changed: warmed
    await until(lambda: len(harness.bodies) == 2)
    assert harness.bodies[1]["prompt"] == B_TEXT + "CONSTANT = 1\n"


async def test_an_edit_postpones_and_zero_turns_warming_off(harness: Harness) -> None:
    idle(harness, 80)
    harness.open(B_TEXT, uri=OTHER)
    for version in range(2, 6):  # typing every 40 ms: never idle for 80 ms
        await asyncio.sleep(0.04)
        harness.store.change(OTHER, B_TEXT + "#" * version, version)
    assert harness.bodies == []
    await until(lambda: len(harness.bodies) == 1)  # idle at last
    idle(harness, 0)
    harness.open(B_TEXT, uri="file:///proj/c.py")
    await asyncio.sleep(0.1)
    assert len(harness.bodies) == 1


async def test_only_agents_on_this_machine_are_warmed(harness: Harness) -> None:
    profiles = harness.backend.configuration.agents
    assert uses_extra_context(profiles["Completer"])
    assert not uses_extra_context(profiles["Chat"])
    remote = harness.backend.configuration.providers["Local"].model_copy(
        update={"url": "https://api.example.com/v1", "local": None}
    )
    harness.backend.configuration.providers["Local"] = remote
    idle(harness)
    harness.open(B_TEXT, uri=OTHER)
    await asyncio.sleep(0.1)
    assert harness.bodies == []  # a cloud provider would bill the prompt


async def test_an_agent_moved_to_a_cloud_provider_is_not_warmed(harness: Harness) -> None:
    configuration = harness.backend.configuration
    configuration.providers["Remote"] = configuration.providers["Local"].model_copy(
        update={"name": "Remote", "url": "https://api.example.com/v1", "local": None}
    )
    # agent_models.json moves the loopback agent to the cloud: its TOML no longer says where.
    configuration.overrides["Completer"] = AgentOverride(provider_instance="Remote")
    idle(harness)
    harness.open(B_TEXT, uri=OTHER)
    await asyncio.sleep(0.1)
    assert harness.bodies == []
