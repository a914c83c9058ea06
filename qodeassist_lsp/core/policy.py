"""Per-pipeline request policy: timeouts, retries and the tool-round limit.

Timeouts are feature policy, never agent configuration: completion wants to fail fast, chat may
wait minutes for a reasoning model's first token. Retries happen only before the first byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from qodeassist_lsp.config.pipelines import PipelineSpec
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.wire.client import Timeouts
from qodeassist_lsp.wire.retry import NO_RETRY, RetryPolicy


@dataclass(frozen=True)
class RequestPolicy:
    """How one pipeline's requests are sent."""

    timeouts: Timeouts = field(default_factory=Timeouts)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_tool_rounds: int = 30


class TimedSection(Protocol):
    """What a pipeline's settings section gives its requests: three timeouts, in seconds."""

    connect_timeout_s: float
    first_byte_timeout_s: float
    request_timeout_s: float


def _seconds(value: float) -> float | None:
    return None if value <= 0 else float(value)


def policy_for(pipeline: PipelineSpec, settings: Settings) -> RequestPolicy:
    """Return the request policy of ``pipeline`` under ``settings``."""
    section: TimedSection = getattr(settings, pipeline.settings)
    timeouts = Timeouts(
        connect=_seconds(section.connect_timeout_s),
        first_byte=_seconds(section.first_byte_timeout_s),
        inactivity=_seconds(section.request_timeout_s),
    )
    # A completion, a next edit or a late router choice is worthless after a retry's back-off.
    retry = RetryPolicy() if pipeline.retries else NO_RETRY
    return RequestPolicy(timeouts, retry, settings.tools.max_tool_continuations)
