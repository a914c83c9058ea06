"""``AgentRouter``: which agent of an ordered roster serves a given file.

Only code completion is context-routed: the roster is walked in order and the first agent that
is loaded and whose ``[match]`` accepts the file (and project) wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.wire.errors import QodeAssistError


class NoAgentMatches(QodeAssistError, LookupError):
    """No agent of the roster accepts the file; the message says how to fix the roster."""


class AgentRouter:
    """Picks agents from rosters by their ``[match]`` rules."""

    def __init__(self, agents: Mapping[str, AgentProfile]) -> None:
        self._agents = agents

    def pick(self, roster: Sequence[str], file_path: str, project_name: str = "") -> AgentProfile:
        """Return the first agent of ``roster`` whose rules accept ``file_path``."""
        for name in roster:
            profile = self._agents.get(name)
            if profile is not None and profile.match.accepts(file_path, project_name):
                return profile
        if not roster:
            raise NoAgentMatches(
                "no code completion agent is configured; set pipelines.code_completion"
            )
        raise NoAgentMatches(
            f"no code completion agent matches {file_path!r}: none of "
            + ", ".join(repr(n) for n in roster)
            + " is loaded with a [match] that accepts it; add a catch-all agent to "
            "pipelines.code_completion"
        )
