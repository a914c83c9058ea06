"""Provider health: latency percentiles, error counts and a coarse state for status reports.

Every request a ``GenericProvider`` sends is recorded: time to the first event, and the typed
error if it failed. Three consecutive failures make the provider ``down`` until a request
succeeds again; a recent failure makes it ``degraded``.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from qodeassist_lsp.wire.errors import ErrorInfo

WINDOW = 50
DOWN_AFTER = 3


class ProviderHealth:
    """Rolling health of one provider instance."""

    def __init__(self, name: str, clock: Callable[[], float] = time.time) -> None:
        self.name = name
        self._clock = clock
        self._latencies: deque[float] = deque(maxlen=WINDOW)
        self.requests = 0
        self.errors = 0
        self.consecutive_errors = 0
        self.last_error: ErrorInfo | None = None
        self.last_error_at: float | None = None

    def record_first_event(self, milliseconds: float) -> None:
        """Record a request's time to its first event."""
        self._latencies.append(milliseconds)

    def record_ok(self) -> None:
        """Record a request that ended without error."""
        self.requests += 1
        self.consecutive_errors = 0

    def record_error(self, error: ErrorInfo) -> None:
        """Record a failed request."""
        self.requests += 1
        self.errors += 1
        self.consecutive_errors += 1
        self.last_error = error
        self.last_error_at = self._clock()

    @property
    def state(self) -> str:
        """``unknown``, ``ok``, ``degraded`` (a recent failure) or ``down``."""
        if self.requests == 0:
            return "unknown"
        if self.consecutive_errors >= DOWN_AFTER:
            return "down"
        recent = self.last_error_at is not None and self._clock() - self.last_error_at < 300
        return "degraded" if recent and self.consecutive_errors else "ok"

    def snapshot(self) -> dict[str, Any]:
        """Return a JSON-ready summary."""
        data: dict[str, Any] = {
            "name": self.name,
            "state": self.state,
            "requests": self.requests,
            "errors": self.errors,
        }
        if self._latencies:
            ordered = sorted(self._latencies)
            data["firstEventMs"] = {
                "p50": round(statistics.median(ordered), 1),
                "p90": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], 1),
                "max": round(ordered[-1], 1),
            }
        if self.last_error is not None:
            data["lastError"] = self.last_error.brief()
        return data
