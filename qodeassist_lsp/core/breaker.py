"""The circuit breaker of one provider instance: stop calling a provider that is down.

Closed, every request goes through. After ``failure_threshold`` failures in a row that are the
provider's fault (no connection, a timeout, HTTP 5xx or 408, a stream the provider broke off) it
opens: requests are refused at once, without touching the network, so an agent's ``fallback``
serves or a completion answers empty instead of waiting for a timeout on every keystroke. After
``open_seconds`` the next request is let through as the probe (half-open): its success closes
the circuit, its failure opens it again for another ``open_seconds``. A failure that is not the
provider's fault (a 4xx about the request, a rejected key, a rate limit) proves the provider
answers, so it counts as a sign of life, not a failure. The clock is injectable for tests.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qodeassist_lsp.config.settings import ResilienceSettings
from qodeassist_lsp.wire.errors import CategorizedError, ErrorCategory, ErrorInfo, ErrorKind


class CircuitState(enum.StrEnum):
    """Where a breaker stands."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerSnapshot:
    """A breaker's state at one moment (times are seconds since the epoch)."""

    provider: str
    state: CircuitState
    since: float | None
    """When the breaker entered ``state`` (None: closed since it was created)."""
    next_probe: float | None
    """When an open circuit lets its probe through (None unless open)."""
    consecutive_failures: int
    last_failure: str
    """The message of the last failure that counted (empty when there was none)."""

    def as_json(self) -> dict[str, Any]:
        """Return the ``circuit`` object of a provider in ``qodeassist/status``."""
        return {
            "state": str(self.state),
            "since": self.since,
            "nextProbe": self.next_probe,
            "failures": self.consecutive_failures,
            "lastFailure": self.last_failure or None,
        }


class CircuitOpenError(CategorizedError):
    """A request was refused without being sent: the provider's circuit is open."""

    error_kind = ErrorKind.UNAVAILABLE
    error_code = "circuit_open"


def is_provider_fault(info: ErrorInfo) -> bool:
    """Whether ``info`` says the provider (not the request, the key or a quota) failed."""
    if info.category is ErrorCategory.NETWORK:
        return True
    if info.category is not ErrorCategory.PROVIDER:
        return False
    return info.status is None or info.status == 408 or info.status >= 500


def fails_over(info: ErrorInfo) -> bool:
    """Whether a request that failed with ``info`` before its first byte goes to a fallback.

    The provider's faults (an open circuit included) and a rate limit that outlasted the retries.
    """
    return is_provider_fault(info) or info.status == 429


class Breaker:
    """Closed → open after N provider faults in a row → half-open probe → closed or open."""

    def __init__(
        self,
        provider: str,
        settings: ResilienceSettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.provider = provider
        self.settings = settings or ResilienceSettings()
        self._clock = clock
        self._state = CircuitState.CLOSED
        self._since: float | None = None
        self._failures = 0
        self._last_failure = ""
        self._probing = False

    @property
    def state(self) -> CircuitState:
        """The current state (an open circuit whose time is up reads as half-open)."""
        if self._state is CircuitState.OPEN and self._clock() >= self._reopen_at():
            return CircuitState.HALF_OPEN
        return self._state

    def _reopen_at(self) -> float:
        return (self._since or 0.0) + self.settings.open_seconds

    def _enter(self, state: CircuitState) -> None:
        self._state = state
        self._since = self._clock()

    def allow(self) -> bool:
        """Whether a request may be sent now; a True from a half-open circuit makes it the probe.

        Whoever gets True must report the outcome: ``record_success``, ``record_failure`` or
        ``record_abandoned``.
        """
        state = self.state
        if state is CircuitState.CLOSED:
            return True
        if state is CircuitState.OPEN or self._probing:
            return False  # one probe at a time; the rest are refused until it is back
        if self._state is CircuitState.OPEN:
            self._enter(CircuitState.HALF_OPEN)
        self._probing = True
        return True

    def record_success(self) -> None:
        """Record a request that got its answer: the circuit closes."""
        self._probing = False
        self._failures = 0
        if self._state is not CircuitState.CLOSED:
            self._enter(CircuitState.CLOSED)

    def record_failure(self, info: ErrorInfo) -> None:
        """Record a failure; only the provider's faults count towards opening the circuit."""
        if not is_provider_fault(info):
            self.record_success()  # the provider answered: it is up
            return
        self._failures += 1
        self._last_failure = info.message
        was_probe, self._probing = self._probing, False
        if was_probe or self._failures >= self.settings.failure_threshold:
            self._enter(CircuitState.OPEN)

    def record_abandoned(self) -> None:
        """Record a request cancelled before it told anything: the next request may probe."""
        self._probing = False

    def refusal(self) -> CircuitOpenError:
        """Return the error a refused request fails with (actionable, with the next probe time)."""
        wait = self._reopen_at() - self._clock()
        when = f"for {wait:.0f} s more" if wait > 0 else "while a probe request is out"
        reason = f" ({self._last_failure.rstrip('.')})" if self._last_failure else ""
        return CircuitOpenError(
            ErrorInfo(
                ErrorCategory.PROVIDER,
                f"{self.provider} is skipped {when} after {self._failures} failure(s) in a "
                f"row{reason}. It is tried again then; check that the server is up, or give "
                "the agent a `fallback`.",
            )
        )

    def snapshot(self) -> BreakerSnapshot:
        """Return the state for status reports (``qodeassist/status``, ``doctor``)."""
        state = self.state
        if state is CircuitState.HALF_OPEN and self._state is CircuitState.OPEN:
            since: float | None = self._reopen_at()
        else:
            since = self._since
        return BreakerSnapshot(
            provider=self.provider,
            state=state,
            since=since,
            next_probe=self._reopen_at() if state is CircuitState.OPEN else None,
            consecutive_failures=self._failures,
            last_failure=self._last_failure,
        )
