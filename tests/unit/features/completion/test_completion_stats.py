"""Latency tracking and completion statistics."""

from __future__ import annotations

from qodeassist_lsp.features.completion.stats import CompletionStats, LatencyTracker, Outcome
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo


def test_latency_percentiles_window_and_health() -> None:
    tracker = LatencyTracker(window=4)
    assert tracker.percentile(0.5) is None and tracker.health() == "unknown"
    for ms in (100.0, 200.0, 300.0, 400.0, 500.0):
        tracker.record(ms)
    assert len(tracker) == 4
    assert tracker.percentile(0.0) == 200.0 and tracker.percentile(1.0) == 500.0
    assert tracker.health() == "healthy"
    for _ in range(3):
        tracker.record(6000.0, timed_out=True)
    assert tracker.timeout_rate == 0.75 and tracker.health() == "timeouts"


def test_slow_and_degraded() -> None:
    slow = LatencyTracker()
    slow.record(6000.0)
    assert slow.health() == "slow"
    degraded = LatencyTracker()
    degraded.record(4000.0)
    assert degraded.health() == "degraded"


def test_completion_stats_json() -> None:
    stats = CompletionStats(clock=lambda: 42.0)
    stats.record(Outcome.MODEL, agent="A", latency_ms=120.0)
    stats.record(Outcome.TIMEOUT, agent="A", latency_ms=5000.0)
    stats.record(Outcome.TYPED_AHEAD, agent="A")
    error = ErrorInfo(ErrorCategory.AUTH, "bad key")
    stats.record(Outcome.ERROR, agent="A", error=error)
    stats.record(Outcome.SUPPRESSED)
    stats.record_accepted("A")
    data = stats.to_json()
    assert data["outcomes"] == {
        "error": 1,
        "model": 1,
        "suppressed": 1,
        "timeout": 1,
        "typed_ahead": 1,
    }
    agent = data["agents"]["A"]
    assert (agent["requests"], agent["errors"], agent["timeouts"], agent["accepted"]) == (
        3,
        1,
        1,
        1,
    )
    assert agent["latencyMs"]["samples"] == 2
    assert agent["lastError"] == {"category": "auth", "message": "bad key", "at": 42.0}
    assert data["accepted"] == 1
