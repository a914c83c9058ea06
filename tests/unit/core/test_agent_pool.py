"""`AgentPool`: requirements, open circuits, concurrency limits and the bounded queue."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.agent_pool import (
    AgentOffer,
    AgentPool,
    InvalidRequirements,
    NoAgentMeets,
    PoolBusy,
    Requirements,
    offer_of,
)
from qodeassist_lsp.core.breaker import CircuitOpenError

REMOTE = AgentOffer("Remote", "cloud", tools=True, thinking=True, context_tokens=200_000)
LOCAL = AgentOffer(
    "Local", "ollama", tools=True, context_tokens=32_768, local=True, tags=frozenset({"python"})
)
TINY = AgentOffer("Tiny", "embedded", context_tokens=4096, local=True, limit=1)


def pool(
    *offers: AgentOffer,
    open_: frozenset[str] = frozenset(),
    queue_size: int = 8,
    wait_s: float = 120.0,
) -> AgentPool:
    return AgentPool(
        lambda: offers,
        lambda offer: "circuit open" if offer.provider in open_ else None,
        queue_size=queue_size,
        wait_s=wait_s,
    )


def test_requirements_parse_from_the_wire() -> None:
    got = Requirements.from_json(
        {"tools": True, "thinking": False, "minContext": 32000, "local": True, "tags": ["py"]}
    )
    assert got == Requirements(tools=True, min_context=32000, local=True, tags=("py",))
    assert Requirements.of_agent("Claude") == ("Claude", None)
    assert Requirements.of_agent({"requires": {}}) == (None, Requirements())


@pytest.mark.parametrize(
    "value",
    [{"tool": True}, {"tools": "yes"}, {"minContext": -1}, {"tags": "py"}, []],
)
def test_bad_requirements_name_the_key(value: object) -> None:
    with pytest.raises(InvalidRequirements, match=r"agent\.requires"):
        Requirements.from_json(value)
    with pytest.raises(InvalidRequirements, match="requires"):
        Requirements.of_agent({"name": "x"})


async def test_the_first_agent_meeting_the_requirements_serves() -> None:
    agents = pool(REMOTE, LOCAL, TINY)
    lease = await agents.acquire(Requirements(tools=True, local=True, tags=("python",)))
    assert lease.agent == "Local"
    assert lease.reason.startswith("pool: Local meets tools, local, tag python")
    assert (await agents.acquire(Requirements(thinking=True))).agent == "Remote"
    assert (await agents.acquire(Requirements(local=True, min_context=4000))).agent == "Local"


async def test_no_match_says_what_each_agent_lacks() -> None:
    with pytest.raises(NoAgentMeets, match="Remote lacks a local provider") as caught:
        await pool(REMOTE, TINY).acquire(Requirements(local=True, thinking=True))
    assert "Tiny lacks thinking" in str(caught.value)


async def test_an_open_circuit_is_skipped_and_all_open_is_an_error() -> None:
    agents = pool(LOCAL, TINY, open_=frozenset({"ollama"}))
    assert (await agents.acquire(Requirements(local=True))).agent == "Tiny"
    with pytest.raises(CircuitOpenError, match="Local: circuit open"):
        await pool(LOCAL, open_=frozenset({"ollama"})).acquire(Requirements(local=True))


async def test_a_busy_provider_passes_to_the_next_matching_agent() -> None:
    agents = pool(TINY, LOCAL)
    first = await agents.acquire(Requirements(local=True))
    second = await agents.acquire(Requirements(local=True))
    assert (first.agent, second.agent) == ("Tiny", "Local")
    assert agents.busy("embedded") == 1


async def test_a_saturated_pool_queues_until_a_lease_is_released() -> None:
    agents = pool(TINY)
    first = await agents.acquire(Requirements())
    waiter = asyncio.create_task(agents.acquire(Requirements()))
    await asyncio.sleep(0.1)
    assert not waiter.done() and agents.waiting == 1
    first.release()
    first.release()  # once only
    second = await asyncio.wait_for(waiter, 1)
    assert second.agent == "Tiny" and "queued" in second.reason
    assert agents.busy("embedded") == 1 and agents.waiting == 0
    second.release()
    assert agents.busy("embedded") == 0


async def test_a_full_queue_and_a_long_wait_fail_clearly() -> None:
    agents = pool(TINY, queue_size=1, wait_s=0.2)
    await agents.acquire(Requirements())
    waiter = asyncio.create_task(agents.acquire(Requirements()))
    await asyncio.sleep(0.05)
    with pytest.raises(PoolBusy, match=r"1 request\(s\) already wait"):
        await agents.acquire(Requirements())
    with pytest.raises(PoolBusy, match=r"stayed busy for 0\.2 s"):
        await waiter
    assert agents.waiting == 0


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    agents = pool(TINY)
    await agents.acquire(Requirements())
    waiter = asyncio.create_task(agents.acquire(Requirements()))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert agents.waiting == 0


def test_offers_come_from_profiles_and_instances(tmp_path: Path) -> None:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    factory = AgentFactory(config)
    embedded = offer_of(factory.create("Embedded Chat"))
    assert embedded == AgentOffer(
        "Embedded Chat",
        "Embedded Instruct",
        context_tokens=4096,
        local=True,
        tags=frozenset({"chat", "embedded", "local", "offline"}),
        limit=1,
    )
    claude = offer_of(factory.create("Claude Chat — Sonnet"))
    assert (claude.local, claude.limit, claude.tools) == (False, None, True)
