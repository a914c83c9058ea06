"""``agent: {"requires": …}``: the agent pool lends the chat agent that offers what is asked.

The offers are the loaded chat agents (``pipelines.chat_assistant``, in roster order), rebuilt
whenever the configuration snapshot changes, so a reload reaches the pool; an agent is
unavailable while ``SessionManager.open_circuit`` says its provider's circuit (and every
fallback's) is open. The lease is held until the request's terminal event; the choice goes out
as an ``agentChosen`` event whose reason starts with ``pool:``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.agent import AgentFactory, AgentNotAvailable
from qodeassist_lsp.core.agent_pool import AgentOffer, AgentPool, offer_of
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.chat.chat_state import SendInput
from qodeassist_lsp.features.chat.router import Choice

NamedSend = Callable[[SendInput, Choice], Awaitable[tuple[str, Request]]]
"""Sends ``SendInput`` to the agent it names, announcing the ``Choice``."""


def agent_pool(runtime: RuntimeView) -> AgentPool:
    """Return the pool of ``runtime``'s chat agents."""
    built: dict[str, Any] = {}  # the offers of the last configuration snapshot

    def offers() -> list[AgentOffer]:
        config = runtime.configuration
        if built.get("config") is not config:
            factory = AgentFactory(config)
            found = []
            for name in config.pipelines.roster(CHAT_ASSISTANT):
                try:
                    found.append(offer_of(factory.create(name)))
                except (AgentNotAvailable, KeyError):
                    continue  # the loader warned about it
            built.update(config=config, offers=found)
        offers: list[AgentOffer] = built["offers"]
        return offers

    def refusal(offer: AgentOffer) -> str | None:
        snapshot = runtime.sessions.open_circuit(offer.name)
        if snapshot is None:
            return None
        return (
            f"{offer.provider}'s circuit is open after {snapshot.consecutive_failures} failure(s)"
        )

    return AgentPool(offers, refusal)


async def send(pool: AgentPool, params: SendInput, named: NamedSend) -> tuple[str, Request]:
    """Lend an agent meeting ``params.requires``, send with it, give it back when it is done."""
    assert params.requires is not None
    lease = await pool.acquire(params.requires)
    try:
        chat_id, request = await named(
            dataclasses.replace(params, agent=lease.agent, requires=None),
            Choice(lease.agent, lease.reason),
        )
    except BaseException:
        lease.release()
        raise
    lease.release_after(request)
    return chat_id, request
