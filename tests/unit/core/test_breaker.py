"""The circuit breaker: closed → open after N provider faults → half-open probe → closed/open."""

from __future__ import annotations

from qodeassist_lsp.config.settings import ResilienceSettings
from qodeassist_lsp.core.breaker import Breaker, CircuitState, is_provider_fault
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

DOWN = ErrorInfo(ErrorCategory.PROVIDER, "HTTP 503", status=503)
REFUSED = ErrorInfo(ErrorCategory.NETWORK, "connection refused")
BAD_REQUEST = ErrorInfo(ErrorCategory.VALIDATION, "HTTP 400", status=400)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def breaker(clock: Clock, threshold: int = 3, open_seconds: float = 60.0) -> Breaker:
    settings = ResilienceSettings(failure_threshold=threshold, open_seconds=open_seconds)
    return Breaker("Local", settings, clock=clock)


def test_which_failures_are_the_providers_fault() -> None:
    assert is_provider_fault(DOWN)
    assert is_provider_fault(REFUSED)
    assert is_provider_fault(ErrorInfo(ErrorCategory.PROVIDER, "stream broke off"))
    assert is_provider_fault(ErrorInfo(ErrorCategory.PROVIDER, "HTTP 408", status=408))
    assert not is_provider_fault(ErrorInfo(ErrorCategory.PROVIDER, "HTTP 429", status=429))
    assert not is_provider_fault(ErrorInfo(ErrorCategory.AUTH, "HTTP 401", status=401))
    assert not is_provider_fault(BAD_REQUEST)


def test_it_opens_after_the_threshold_and_refuses_until_the_open_time_is_up() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(2):
        assert b.allow()
        b.record_failure(DOWN)
    assert b.state is CircuitState.CLOSED
    assert b.allow()
    b.record_failure(REFUSED)
    snap = b.snapshot()
    assert snap.state is CircuitState.OPEN
    assert (snap.since, snap.next_probe, snap.consecutive_failures) == (1000.0, 1060.0, 3)
    assert snap.last_failure == "connection refused"
    clock.now += 59
    assert not b.allow()
    assert "1 s more" in b.refusal().info.message
    assert b.snapshot().as_json()["state"] == "open"


def test_the_half_open_probe_closes_on_success_and_lets_one_through_at_a_time() -> None:
    clock = Clock()
    b = breaker(clock, threshold=1)
    b.allow()
    b.record_failure(DOWN)
    clock.now += 60
    assert b.state is CircuitState.HALF_OPEN
    assert b.allow()  # the probe
    assert not b.allow()  # a second request while the probe is out
    b.record_success()
    snap = b.snapshot()
    assert (snap.state, snap.since, snap.next_probe, snap.consecutive_failures) == (
        CircuitState.CLOSED,
        1060.0,
        None,
        0,
    )
    assert b.allow() and b.allow()


def test_a_failed_probe_reopens_for_another_open_time() -> None:
    clock = Clock()
    b = breaker(clock, threshold=2, open_seconds=10)
    for _ in range(2):
        b.allow()
        b.record_failure(DOWN)
    clock.now += 10
    assert b.allow()
    b.record_failure(DOWN)
    snap = b.snapshot()
    assert (snap.state, snap.next_probe) == (CircuitState.OPEN, 1020.0)
    assert not b.allow()


def test_an_abandoned_probe_lets_the_next_request_probe() -> None:
    clock = Clock()
    b = breaker(clock, threshold=1)
    b.allow()
    b.record_failure(DOWN)
    clock.now += 60
    assert b.allow()
    b.record_abandoned()  # the user typed on; the probe was cancelled
    assert b.allow()


def test_an_answer_that_is_not_the_providers_fault_breaks_the_run() -> None:
    clock = Clock()
    b = breaker(clock)
    for error in (DOWN, DOWN, BAD_REQUEST, DOWN, DOWN):
        b.allow()
        b.record_failure(error)
    assert b.state is CircuitState.CLOSED
    assert b.snapshot().consecutive_failures == 2
