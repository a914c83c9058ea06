"""Circuit breaker and failover over stdio: a broken loopback provider and a healthy fallback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp.test_inline_completion import open_doc, params
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import completion_reply, embedded_instance

DOWN = Reply.json({"error": {"message": "model crashed", "type": "server_error"}}, status=503)


@pytest.fixture
def broken() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


@pytest.fixture
def healthy() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


@pytest.fixture(autouse=True)
def setup(
    lsp_home: Path, broken: ReplayServer, healthy: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.e2e.lsp.conftest import server_env

    config = lsp_home / "config"
    (config / "providers/broken.toml").write_text(
        embedded_instance(broken.url, "Broken")
        + 'api_key_env = ["QA_TEST_KEY_A", "QA_TEST_KEY_B"]\n'
    )
    (config / "providers/healthy.toml").write_text(embedded_instance(healthy.url, "Healthy"))
    (config / "agents/pair.toml").write_text(
        'name = "Main Completion"\nextends = "Embedded Completion"\n'
        'provider_instance = "Broken"\nfallback = ["Backup Completion"]\n'
    )
    (config / "agents/backup.toml").write_text(
        'name = "Backup Completion"\nextends = "Embedded Completion"\n'
        'provider_instance = "Healthy"\n'
    )
    (config / "pipelines.toml").write_text('[pipelines]\ncode_completion = ["Main Completion"]\n')
    (config / "settings.toml").write_text(
        "[completion]\ndebounce_ms = 0\nadaptive_debounce = false\ntyped_ahead_cache = false\n"
        "[resilience]\nfailure_threshold = 3\nopen_seconds = 1\n"
    )
    keys = {"QA_TEST_KEY_A": "key-a-0123456789", "QA_TEST_KEY_B": "key-b-0123456789"}
    for key, value in server_env(lsp_home, keys).items():
        monkeypatch.setenv(key, value)


def plain(value: Any) -> Any:
    """pygls hands custom results over as nested named tuples: make them dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


async def status_of(client) -> dict[str, Any]:
    return plain(await client.protocol.send_request_async("qodeassist/status", {}))


async def circuit(client) -> dict[str, Any]:
    status = await status_of(client)
    [provider] = [p for p in status["providers"] if p["name"] == "Broken"]
    return provider["circuit"]


async def test_three_5xx_open_the_circuit_the_fallback_serves_and_a_probe_closes_it(
    client, lsp_home, broken, healthy
) -> None:
    broken.script("/v1/completions", [DOWN, DOWN, DOWN])
    healthy.script("/v1/completions", [completion_reply("a + b", repeat=4)])
    await client.initialize_session(client.init_params)
    for n in range(4):  # a document each: no reuse of an earlier generation
        uri = await open_doc(client, lsp_home, name=f"a{n}.py")
        answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
        assert [item.insert_text for item in answer.items] == ["a + b"]
    # The fourth request went to the fallback without touching the broken provider.
    assert (len(broken.requests), len(healthy.requests)) == (3, 4)
    state = await circuit(client)
    assert state["state"] == "open" and state["failures"] == 3
    assert state["nextProbe"] - state["since"] == pytest.approx(1.0)
    status = await status_of(client)
    # Counted for the agent that answered (pygls turns the key into a named-tuple field "_0").
    [answered] = status["completion"]["agents"].values()
    assert answered["requests"] == 4 and answered["errors"] == 0

    await asyncio.sleep(1.1)
    broken.script("/v1/completions", completion_reply("a - b"))
    uri = await open_doc(client, lsp_home, name="probe.py")
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert [item.insert_text for item in answer.items] == ["a - b"]  # the probe
    assert len(broken.requests) == 4 and len(healthy.requests) == 4
    state = await circuit(client)
    assert state["state"] == "closed" and state["failures"] == 0
    broken.assert_all_served()
    healthy.assert_all_served()


async def test_a_429_on_the_first_key_moves_to_the_second(client, lsp_home, broken) -> None:
    limited = Reply.json(
        {"error": {"message": "slow down", "type": "rate_limit"}},
        status=429,
        headers={"Retry-After": "30"},
    )
    broken.script("/v1/completions", [limited, completion_reply("a * b", repeat=2)])
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert [item.insert_text for item in answer.items] == ["a * b"]
    first, second = broken.requests
    assert first.headers["authorization"] == "Bearer key-a-0123456789"
    assert second.headers["authorization"] == "Bearer key-b-0123456789"
    status = await status_of(client)
    [provider] = [p for p in status["providers"] if p["name"] == "Broken"]
    resting, ready = provider["keys"]
    assert (resting["env"], resting["state"], ready["state"]) == (
        "QA_TEST_KEY_A",
        "resting",
        "ready",
    )
    assert "key-a" not in str(status)  # states, never values
    # The resting key sits out: the next request uses the second key again.
    uri = await open_doc(client, lsp_home, name="b.py")
    await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert broken.requests[2].headers["authorization"] == "Bearer key-b-0123456789"
    assert provider["circuit"]["failures"] == 0  # a rate limit is not the provider being down
