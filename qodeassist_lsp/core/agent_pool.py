"""``AgentPool``: lend an agent by what it offers instead of by name, within concurrency limits.

A request asks for ``Requirements`` (tools, thinking, a minimum context, a local provider, tags);
the pool walks the offers (the chat agents, in roster order, each with what its profile and
provider instance declare) and lends the first one that meets them, whose provider's circuit is
not open and whose provider instance has fewer requests in flight than its limit
(``max_concurrent``). When every matching agent is busy the request waits in a bounded queue
(``queue_size`` waiters) for at most ``wait_s`` seconds; a full queue or a wait that runs out is a
``PoolBusy`` error, an empty match a ``NoAgentMeets`` error naming what the agents offer, and
matching agents whose circuits are all open a ``CircuitOpenError`` saying why. A ``Lease`` is
given back once (``release``), usually when its request's terminal event arrives. The limit
counts the requests this pool placed; a chat that names its agent does not go through the pool.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from qodeassist_lsp.core.agent import Agent
from qodeassist_lsp.core.breaker import CircuitOpenError
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo, ErrorKind, QodeAssistError

QUEUE_SIZE = 8
"""How many requests may wait for a busy pool at once."""
WAIT_S = 120.0
"""How long a request waits in the queue before it fails."""
_KEYS = {"tools", "thinking", "minContext", "local", "tags"}


class NoAgentMeets(QodeAssistError, LookupError):
    """No agent offers what the requirements ask; the message lists what the agents offer."""

    error_code = "no_agent_meets"


class InvalidRequirements(QodeAssistError, ValueError):
    """The requirements object is malformed; the message names the key."""


class PoolBusy(QodeAssistError):
    """Every matching agent stayed busy: the queue is full or the wait ran out."""

    error_kind = ErrorKind.UNAVAILABLE
    error_code = "pool_busy"


@dataclass(frozen=True)
class Requirements:
    """What the agent must offer; a ``False`` or absent flag asks for nothing."""

    tools: bool = False
    thinking: bool = False
    min_context: int = 0
    local: bool = False
    tags: tuple[str, ...] = ()

    @classmethod
    def of_agent(cls, agent: str | dict[str, Any] | None) -> tuple[str | None, Requirements | None]:
        """Split a chat's ``agent`` param into a name or ``{"requires": …}``'s requirements."""
        if not isinstance(agent, dict):
            return agent, None
        if set(agent) != {"requires"}:
            raise InvalidRequirements(
                'agent must be a name, "auto" or {"requires": {...}} (the agent pool)'
            )
        return None, cls.from_json(agent["requires"])

    @classmethod
    def from_json(cls, value: Any) -> Requirements:
        """Parse ``agent.requires`` of ``qodeassist/chat/send`` (raise ``InvalidRequirements``)."""
        if not isinstance(value, dict):
            raise InvalidRequirements('agent.requires must be an object, e.g. {"tools": true}')
        unknown = sorted(set(value) - _KEYS)
        if unknown:
            raise InvalidRequirements(
                f"agent.requires has unknown key(s) {', '.join(unknown)}; use: "
                + ", ".join(sorted(_KEYS))
            )
        flags = {}
        for key in ("tools", "thinking", "local"):
            flag = value.get(key, False)
            if not isinstance(flag, bool):
                raise InvalidRequirements(f"agent.requires.{key} must be true or false")
            flags[key] = flag
        context = value.get("minContext", 0)
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            raise InvalidRequirements("agent.requires.minContext must be a whole number ≥ 0")
        tags = value.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InvalidRequirements("agent.requires.tags must be a list of strings")
        return cls(min_context=context, tags=tuple(tags), **flags)

    def unmet(self, offer: AgentOffer) -> list[str]:
        """Return what ``offer`` lacks (empty: it meets every requirement)."""
        lacks = []
        if self.tools and not offer.tools:
            lacks.append("tools")
        if self.thinking and not offer.thinking:
            lacks.append("thinking")
        if offer.context_tokens < self.min_context:
            lacks.append(f"context {offer.context_tokens or 'unknown'} < {self.min_context}")
        if self.local and not offer.local:
            lacks.append("a local provider")
        lacks += [f"tag {tag!r}" for tag in self.tags if tag not in offer.tags]
        return lacks

    def describe(self) -> str:
        """Return the requirements as a short phrase for events and errors."""
        parts = [name for name in ("tools", "thinking") if getattr(self, name)]
        if self.min_context:
            parts.append(f"context ≥ {self.min_context}")
        if self.local:
            parts.append("local")
        parts += [f"tag {tag}" for tag in self.tags]
        return ", ".join(parts) or "any agent"


@dataclass(frozen=True)
class AgentOffer:
    """What one agent offers, from its profile and its provider instance."""

    name: str
    provider: str
    tools: bool = False
    thinking: bool = False
    context_tokens: int = 0
    """0: the profile does not say, so no ``minContext`` is met."""
    local: bool = False
    tags: frozenset[str] = frozenset()
    limit: int | None = None
    """The provider instance's ``max_concurrent`` (None: no limit)."""


@dataclass
class Lease:
    """One agent lent by the pool; ``release`` gives it back (once)."""

    offer: AgentOffer
    reason: str
    """Why this agent: ``pool: …`` with the requirements and any wait."""
    _pool: AgentPool = field(repr=False)
    _released: bool = False

    @property
    def agent(self) -> str:
        """The agent's name."""
        return self.offer.name

    def release(self) -> None:
        """Give the agent back; later calls do nothing."""
        if not self._released:
            self._released = True
            self._pool._give_back(self.offer.provider)

    def release_after(self, request: Request) -> None:
        """Give the agent back when ``request`` ends."""
        if request.done:
            self.release()
        else:
            request.add_listener(lambda event: self.release() if _terminal(event.kind) else None)


def _terminal(kind: str) -> bool:
    return kind in ("finished", "failed", "cancelled")


class AgentPool:
    """Lends agents that meet requirements, a limited number per provider instance at a time."""

    def __init__(
        self,
        offers: Callable[[], Sequence[AgentOffer]],
        refusal: Callable[[AgentOffer], str | None],
        *,
        queue_size: int = QUEUE_SIZE,
        wait_s: float = WAIT_S,
    ) -> None:
        """Lend from ``offers()`` (read per request); ``refusal(offer)``: why it cannot serve."""
        self._offers = offers
        self._refusal = refusal
        self._queue_size = queue_size
        self._wait_s = wait_s
        self._busy: dict[str, int] = {}
        self._waiting = 0
        self._changed = asyncio.Event()

    def busy(self, provider: str) -> int:
        """Return how many of the pool's requests ``provider`` serves now."""
        return self._busy.get(provider, 0)

    @property
    def waiting(self) -> int:
        """How many requests wait in the queue."""
        return self._waiting

    async def acquire(self, requirements: Requirements) -> Lease:
        """Lend the first healthy, free agent meeting ``requirements``; wait while all are busy."""
        started = time.monotonic()
        queued = False
        try:
            while True:
                offer = self._free(self._matching(requirements))
                if offer is not None:
                    waited = time.monotonic() - started if queued else None
                    return self._lend(offer, requirements, waited)
                if not queued:
                    if self._waiting >= self._queue_size:
                        raise PoolBusy(
                            f"every agent with {requirements.describe()} is busy and "
                            f"{self._waiting} request(s) already wait; try again shortly, or "
                            "raise max_concurrent on their provider instances"
                        )
                    self._waiting += 1
                    queued = True
                remaining = self._wait_s - (time.monotonic() - started)
                changed = self._changed
                try:
                    async with asyncio.timeout(max(remaining, 0)):
                        await changed.wait()
                except TimeoutError:
                    raise PoolBusy(
                        f"every agent with {requirements.describe()} stayed busy for "
                        f"{self._wait_s:g} s; try again, or raise max_concurrent on their "
                        "provider instances"
                    ) from None
        finally:
            if queued:
                self._waiting -= 1

    def _matching(self, requirements: Requirements) -> list[AgentOffer]:
        offers = list(self._offers())
        matching = [offer for offer in offers if not requirements.unmet(offer)]
        if not matching:
            lacking = "; ".join(
                f"{o.name} lacks {', '.join(requirements.unmet(o))}" for o in offers
            )
            raise NoAgentMeets(
                f"no chat agent offers {requirements.describe()}"
                + (f" ({lacking})" if lacking else "")
                + "; relax the requirements or add such an agent to pipelines.chat_assistant"
            )
        refusals = {offer.name: self._refusal(offer) for offer in matching}
        healthy = [offer for offer in matching if refusals[offer.name] is None]
        if not healthy:
            why = "; ".join(f"{name}: {text}" for name, text in refusals.items())
            raise CircuitOpenError(
                ErrorInfo(
                    ErrorCategory.PROVIDER,
                    f"every agent with {requirements.describe()} is unavailable ({why})",
                )
            )
        return healthy

    def _free(self, offers: Sequence[AgentOffer]) -> AgentOffer | None:
        for offer in offers:
            if offer.limit is None or self.busy(offer.provider) < offer.limit:
                return offer
        return None

    def _lend(self, offer: AgentOffer, requirements: Requirements, waited: float | None) -> Lease:
        self._busy[offer.provider] = self.busy(offer.provider) + 1
        reason = f"pool: {offer.name} meets {requirements.describe()}"
        if waited is not None:
            reason += f" (queued {waited:.1f} s)"
        return Lease(offer, reason, self)

    def _give_back(self, provider: str) -> None:
        self._busy[provider] = max(self.busy(provider) - 1, 0)
        # Wake every waiter; the one whose requirements fit the freed provider takes it.
        self._changed.set()
        self._changed = asyncio.Event()


def offer_of(agent: Agent) -> AgentOffer:
    """Return what ``agent`` offers (its profile's flags and tags, its instance's locality)."""
    profile = agent.profile
    return AgentOffer(
        name=agent.name,
        provider=agent.provider.name,
        tools=agent.enable_tools,
        thinking=profile.enable_thinking,
        context_tokens=profile.context_tokens,
        local=agent.provider.is_local,
        tags=frozenset(profile.tags),
        limit=agent.provider.concurrency_limit,
    )
