"""Completion statistics for the status request: latencies, timeouts, errors, acceptance.

Per agent, the last ``window`` end-to-end latencies of model-backed completions (Tabby's
latency tracker) give percentiles and a health verdict; counters say how requests ended — served
by the model, by the typed-ahead cache, by attaching to a running generation, or not at all and
why. ``qodeassist.accepted`` feeds the acceptance count.
"""

from __future__ import annotations

import enum
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from qodeassist_lsp.wire.errors import ErrorInfo

__all__ = ["AgentStats", "CompletionStats", "LatencyTracker", "Outcome"]

_SLOW_MS: Final = 5000.0
_HEALTHY_MS: Final = 3000.0
_TIMEOUT_RATE: Final = 0.5


class Outcome(enum.StrEnum):
    """How one completion request ended."""

    MODEL = "model"
    """Answered by a new upstream request."""
    REUSED = "reused"
    """Answered by attaching to a generation already running."""
    TYPED_AHEAD = "typed_ahead"
    """Answered from the typed-ahead cache, without any upstream request."""
    EMPTY = "empty"
    """The model answered, but post-processing left nothing to suggest."""
    TIMEOUT = "timeout"
    """The time budget expired (what had streamed by then was returned)."""
    ERROR = "error"
    SUPPRESSED = "suppressed"
    """Smart triggers or the character threshold said no."""
    SUPERSEDED = "superseded"
    """A newer request for the same document replaced it, or the document changed meanwhile."""
    CANCELLED = "cancelled"
    IGNORED = "ignored"
    """The file matches ``.qodeassistignore``."""
    DISABLED = "disabled"
    """Completion is switched off, or automatic triggers are (manual mode)."""
    CIRCUIT_OPEN = "circuit_open"
    """The agent's provider (and every fallback) has an open circuit: empty, nothing was sent."""


class LatencyTracker:
    """The last ``window`` latencies and timeouts of one agent."""

    def __init__(self, window: int = 50) -> None:
        """Keep the most recent ``window`` samples."""
        self._samples: deque[float] = deque(maxlen=window)
        self._timeouts: deque[bool] = deque(maxlen=window)

    def record(self, latency_ms: float, *, timed_out: bool = False) -> None:
        """Add one sample."""
        self._samples.append(latency_ms)
        self._timeouts.append(timed_out)

    def __len__(self) -> int:
        return len(self._samples)

    def percentile(self, fraction: float) -> float | None:
        """Return the ``fraction`` (0–1) percentile in milliseconds, or None without samples."""
        if not self._samples:
            return None
        ordered = sorted(self._samples)
        index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
        return ordered[index]

    @property
    def average_ms(self) -> float | None:
        """The mean latency, or None without samples."""
        return sum(self._samples) / len(self._samples) if self._samples else None

    @property
    def timeout_rate(self) -> float:
        """The share of recent requests that hit the time budget."""
        return sum(self._timeouts) / len(self._timeouts) if self._timeouts else 0.0

    def health(self) -> str:
        """``healthy``, ``slow`` or ``timeouts`` (Tabby's thresholds), or ``unknown``."""
        average = self.average_ms
        if average is None:
            return "unknown"
        if self.timeout_rate > _TIMEOUT_RATE:
            return "timeouts"
        if average > _SLOW_MS:
            return "slow"
        return "healthy" if average < _HEALTHY_MS else "degraded"


@dataclass
class AgentStats:
    """What one agent's completions looked like recently."""

    latency: LatencyTracker = field(default_factory=LatencyTracker)
    requests: int = 0
    errors: int = 0
    timeouts: int = 0
    accepted: int = 0
    last_error: ErrorInfo | None = None
    last_error_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        error = None
        if self.last_error is not None:
            error = {
                "category": str(self.last_error.category),
                "message": self.last_error.message,
                "at": self.last_error_at,
            }
        return {
            "requests": self.requests,
            "errors": self.errors,
            "timeouts": self.timeouts,
            "accepted": self.accepted,
            "health": self.latency.health(),
            "latencyMs": {
                "p50": self.latency.percentile(0.5),
                "p90": self.latency.percentile(0.9),
                "p99": self.latency.percentile(0.99),
                "samples": len(self.latency),
            },
            "timeoutRate": self.latency.timeout_rate,
            "lastError": error,
        }


class CompletionStats:
    """Counters by outcome plus per-agent latency and health."""

    def __init__(self, window: int = 50, clock: Callable[[], float] = time.time) -> None:
        """Track the last ``window`` latencies per agent; ``clock`` stamps errors (epoch s)."""
        self._window = window
        self._clock = clock
        self.outcomes: Counter[Outcome] = Counter()
        self.agents: dict[str, AgentStats] = {}
        self.accepted = 0

    def agent(self, name: str) -> AgentStats:
        """Return (creating it) the statistics of agent ``name``."""
        stats = self.agents.get(name)
        if stats is None:
            stats = self.agents[name] = AgentStats(LatencyTracker(self._window))
        return stats

    def record(
        self,
        outcome: Outcome,
        *,
        agent: str = "",
        latency_ms: float | None = None,
        error: ErrorInfo | None = None,
    ) -> None:
        """Count one finished request; model-backed ones add a latency sample to ``agent``."""
        self.outcomes[outcome] += 1
        if not agent:
            return
        stats = self.agent(agent)
        if outcome in (Outcome.MODEL, Outcome.EMPTY, Outcome.TIMEOUT, Outcome.REUSED):
            stats.requests += 1
            if latency_ms is not None:
                stats.latency.record(latency_ms, timed_out=outcome is Outcome.TIMEOUT)
        if outcome is Outcome.TIMEOUT:
            stats.timeouts += 1
        if outcome is Outcome.ERROR:
            stats.requests += 1
            stats.errors += 1
            stats.last_error = error
            stats.last_error_at = self._clock()

    def record_accepted(self, agent: str = "") -> None:
        """Count one accepted suggestion."""
        self.accepted += 1
        if agent:
            self.agent(agent).accepted += 1

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form for ``qodeassist/status``."""
        return {
            "outcomes": {str(k): v for k, v in sorted(self.outcomes.items())},
            "accepted": self.accepted,
            "agents": {name: stats.to_json() for name, stats in sorted(self.agents.items())},
        }
