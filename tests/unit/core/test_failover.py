"""Failover: a request goes down the agent's ``fallback`` list while nothing has arrived."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, CODE_COMPLETION
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.config.settings import ResilienceSettings
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.breaker import CircuitState
from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import FailedEvent, FinishedEvent
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session_manager import SessionManager

OK = (
    b'data: {"choices":[{"index":0,"delta":{"content":"from backup"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)

Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture
async def manager(tree, tmp_path: Path) -> AsyncIterator[Callable[..., SessionManager]]:
    tree.write(
        "config/providers/backup.toml",
        'name = "Backup"\nclient_api = "OpenAI Compatible"\nurl = "http://127.0.0.1:9998/v1"\n',
    )
    tree.write(
        "config/agents/pair.toml",
        'name = "Primary"\nextends = "Chat"\nfallback = ["Nope", "Second"]\n',
    )
    tree.write(
        "config/agents/second.toml",
        'name = "Second"\nextends = "Chat"\nprovider_instance = "Backup"\nmodel = "b1"\n',
    )
    config = tree.load()
    assert any("fallback 'Nope' is not a usable agent" in m for m in tree.messages(config))
    made: dict[str, GenericProvider] = {}

    def make(handlers: dict[str, Handler]) -> SessionManager:
        def provider(name: str) -> GenericProvider:
            if name not in made:
                made[name] = GenericProvider(
                    config.providers[name],
                    SecretStore(tmp_path, environ={}),
                    transport=httpx.MockTransport(handlers[name]),
                    resilience=ResilienceSettings(failure_threshold=2),
                )
            return made[name]

        return SessionManager(
            AgentFactory(config), provider, config.settings, config.prompt_roots()
        )

    yield make
    for provider in made.values():
        await provider.aclose()


def answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=OK)


async def test_a_5xx_goes_to_the_fallback_and_the_finished_event_names_it(manager) -> None:
    sent: list[str] = []

    def down(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["model"])
        return httpx.Response(503, json={"error": {"message": "overloaded"}})

    def backup(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["model"])
        return answer(request)

    sessions = manager({"Local": down, "Backup": backup})
    session = sessions.create("Primary", CODE_COMPLETION)  # no retries: one 503 a request
    for _ in range(3):
        terminal = await session.send(user_text("hi")).wait()
        assert isinstance(terminal, FinishedEvent) and terminal.agent == "Second"
    # Two 503s open the circuit: the third request goes straight to the fallback.
    assert sent == ["m1", "b1", "m1", "b1", "b1"]
    assert session.provider.breaker.state is CircuitState.OPEN
    assert session.agent.name == "Primary"  # the session keeps its own agent
    assert session.history.messages[-1].text == "from backup"
    assert sessions.open_circuit("Primary") is None  # the fallback still serves


async def test_an_error_of_the_request_does_not_fail_over(manager) -> None:
    def bad(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": {"message": "bad body"}})

    def backup(request: httpx.Request) -> httpx.Response:
        raise AssertionError("a 400 is the request's fault: no failover")

    session = manager({"Local": bad, "Backup": backup}).create("Primary", CHAT_ASSISTANT)
    terminal = await session.send(user_text("hi")).wait()
    assert isinstance(terminal, FailedEvent) and "bad body" in terminal.error.message


async def test_when_every_candidate_is_open_the_manager_says_so(manager) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="bad gateway")

    sessions = manager({"Local": down, "Backup": down})
    session = sessions.create("Primary", CODE_COMPLETION)
    for _ in range(2):
        terminal = await session.send(user_text("hi")).wait()
        assert isinstance(terminal, FailedEvent)
    blocked = sessions.open_circuit("Primary")
    assert blocked is not None and blocked.provider == "Local"
    terminal = await session.send(user_text("hi")).wait()
    assert isinstance(terminal, FailedEvent) and "is skipped for" in terminal.error.message
