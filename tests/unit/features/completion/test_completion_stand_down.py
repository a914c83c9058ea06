"""Automatic completion stands down while every circuit is open, and says so once per opening."""

from __future__ import annotations

import time
from typing import Any, cast

from qodeassist_lsp.core.agent import AgentNotAvailable
from qodeassist_lsp.core.breaker import BreakerSnapshot, CircuitState
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.features.completion.stand_down import StandDown
from qodeassist_lsp.features.completion.stats import Outcome


class Circuits:
    """What `SessionManager.open_circuit` would say, scripted."""

    def __init__(self) -> None:
        self.open: BreakerSnapshot | None = None
        self.unknown = False

    def open_circuit(self, agent: str) -> BreakerSnapshot | None:
        if self.unknown:
            raise AgentNotAvailable(agent)
        return self.open


def opened(since: float) -> BreakerSnapshot:
    return BreakerSnapshot("Ollama", CircuitState.OPEN, since, time.time() + 30, 3, "HTTP 503")


def stand_down(circuits: Circuits) -> StandDown:
    return StandDown(lambda: cast(SessionManager, cast(Any, circuits)))


def test_a_closed_circuit_lets_the_request_through() -> None:
    circuits = Circuits()
    assert stand_down(circuits).check("A") is None
    circuits.unknown = True  # the session's own acquisition reports an unknown agent
    assert stand_down(circuits).check("A") is None


def test_an_open_circuit_answers_empty_and_tells_once_per_opening() -> None:
    circuits = Circuits()
    down = stand_down(circuits)
    circuits.open = opened(since=100.0)
    first, second = down.check("A"), down.check("A")
    assert first is not None and second is not None
    assert first.outcome is Outcome.CIRCUIT_OPEN and not first.items
    assert first.error is not None and "Ollama is down (3 failures" in first.error.message
    assert "open_seconds" in first.error.message
    assert second.outcome is Outcome.CIRCUIT_OPEN and second.error is None
    circuits.open = opened(since=200.0)  # closed and opened again: a new opening is told
    third = down.check("A")
    assert third is not None and third.error is not None
