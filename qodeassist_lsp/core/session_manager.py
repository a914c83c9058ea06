"""``SessionManager``: the one place features get sessions from.

Chat creates long-lived sessions; one-shot pipelines (completion, refactor, compression)
``acquire`` a pooled session — at most two idle ones per agent and pipeline — which comes
back reset, so no request ever sees a previous exchange. Sessions get their agent's ``fallback``
agents, resolved here. A pooled session is only reused
while its agent still has the same model and provider instance; ``flush`` drops every idle
session when configuration changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, PipelineSpec, ToolAccess
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.config.system_prompt import PromptRoots
from qodeassist_lsp.core.agent import Agent, AgentFactory, AgentNotAvailable
from qodeassist_lsp.core.breaker import BreakerSnapshot, CircuitState
from qodeassist_lsp.core.history import ConversationHistory
from qodeassist_lsp.core.policy import policy_for
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session import Session
from qodeassist_lsp.core.tools import ToolContributorRegistry

POOL_SIZE = 2


class SessionManager:
    """Creates sessions and pools the one-shot ones per agent."""

    def __init__(
        self,
        factory: AgentFactory,
        providers: Callable[[str], GenericProvider],
        settings: Settings,
        prompt_roots: PromptRoots,
        contributors: ToolContributorRegistry | None = None,
    ) -> None:
        self._factory = factory
        self._providers = providers
        self._settings = settings
        self._roots = prompt_roots
        self.contributors = contributors or ToolContributorRegistry()
        self._idle: dict[tuple[str, str], list[Session]] = {}

    def create(
        self,
        agent_name: str,
        pipeline: PipelineSpec = CHAT_ASSISTANT,
        history: ConversationHistory | None = None,
    ) -> Session:
        """Return a new session for ``agent_name`` (raises ``AgentNotAvailable``)."""
        agent = self._factory.create(agent_name)
        session = Session(
            agent,
            self._providers(agent.provider.name),
            prompt_roots=self._roots,
            policy=policy_for(pipeline, self._settings),
            history=history,
            fallbacks=self.fallbacks(agent),
        )
        self._contribute(session, pipeline)
        return session

    def fallbacks(self, agent: Agent) -> list[tuple[Agent, GenericProvider]]:
        """Return ``agent``'s usable ``fallback`` agents with their providers, in order.

        Entries that are not usable agents (the loader warned about them) are skipped.
        """
        found = []
        for name in agent.profile.fallback:
            if name == agent.name:
                continue
            try:
                fallback = self._factory.create(name)
                found.append((fallback, self._providers(fallback.provider.name)))
            except AgentNotAvailable:
                continue
        return found

    def open_circuit(self, agent_name: str) -> BreakerSnapshot | None:
        """Return the open circuit of ``agent_name``'s provider if no fallback can serve either.

        None when a request would be sent somewhere (a closed or half-open circuit).
        """
        agent = self._factory.create(agent_name)
        primary = self._providers(agent.provider.name)
        candidates = [primary, *(provider for _, provider in self.fallbacks(agent))]
        if any(provider.breaker.state is not CircuitState.OPEN for provider in candidates):
            return None
        return primary.breaker.snapshot()

    def _contribute(self, session: Session, pipeline: PipelineSpec) -> None:
        # An agent-process provider asks the gate about its own tools, offered ones or not.
        session.tools.gate = self.contributors.gate
        if session.agent.enable_tools and pipeline.tool_access is not ToolAccess.NONE:
            self.contributors.apply_to(session.tools, pipeline)

    @contextlib.asynccontextmanager
    async def acquire(self, agent_name: str, pipeline: PipelineSpec) -> AsyncIterator[Session]:
        """Lend a reset session of ``agent_name`` for one exchange, then take it back."""
        agent = self._factory.create(agent_name)
        session = self._take_idle(agent, pipeline)
        if session is None:
            session = self.create(agent_name, pipeline)
        else:
            self._contribute(session, pipeline)
        try:
            yield session
        finally:
            self.release(session, pipeline)

    def _take_idle(self, agent: Agent, pipeline: PipelineSpec) -> Session | None:
        idle = self._idle.get((agent.name, pipeline.slot), [])
        while idle:
            session = idle.pop()
            if (session.agent.model, session.agent.provider) == (agent.model, agent.provider):
                session.reset()
                return session
        return None

    def release(self, session: Session, pipeline: PipelineSpec) -> None:
        """Take ``session`` back into its agent's pool (dropped when the pool is full)."""
        session.cancel()
        idle = self._idle.setdefault((session.agent.name, pipeline.slot), [])
        if len(idle) < POOL_SIZE and session not in idle:
            idle.append(session)

    def idle_count(self, agent_name: str, pipeline: PipelineSpec) -> int:
        """Return how many reset-ready sessions ``agent_name`` has pooled for ``pipeline``."""
        return len(self._idle.get((agent_name, pipeline.slot), []))

    def flush(self) -> None:
        """Drop every pooled session (configuration changed)."""
        for sessions in self._idle.values():
            for session in sessions:
                session.cancel()
        self._idle.clear()
