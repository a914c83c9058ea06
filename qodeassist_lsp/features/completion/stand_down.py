"""`StandDown`: automatic completion answers empty at once while its providers are down.

When the completion agent's provider and every one of its ``fallback`` agents' providers have
an open circuit, sending would only fail again (Tabby's habit: stand down while the backend is
down). The result carries the reason as an error once per opening of the circuit, so the editor
tells the user once and not on every keystroke.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from qodeassist_lsp.core.agent import AgentNotAvailable
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.features.completion.requests import CompletionResult
from qodeassist_lsp.features.completion.stats import Outcome
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo


class StandDown:
    """Decides, per request, whether completion stands down for an open circuit."""

    def __init__(self, sessions: Callable[[], SessionManager]) -> None:
        """Ask ``sessions()`` (the current configuration's manager) for circuit states."""
        self._sessions = sessions
        self._announced: set[tuple[str, float | None]] = set()

    def check(self, agent: str) -> CompletionResult | None:
        """Return the empty answer while ``agent`` and its fallbacks all have open circuits."""
        try:
            circuit = self._sessions().open_circuit(agent)
        except AgentNotAvailable:
            return None  # acquiring the session reports it
        if circuit is None:
            return None
        opening = (circuit.provider, circuit.since)
        error = None
        if opening not in self._announced:
            self._announced.add(opening)
            error = ErrorInfo(
                ErrorCategory.PROVIDER,
                f"{circuit.provider} is down ({circuit.consecutive_failures} failures in a "
                "row); automatic completion stands down until it is probed again in "
                f"{max(0.0, (circuit.next_probe or 0.0) - time.time()):.0f} s "
                "([resilience] open_seconds).",
            )
        return CompletionResult(
            outcome=Outcome.CIRCUIT_OPEN, reason="circuit open", agent=agent, error=error
        )
