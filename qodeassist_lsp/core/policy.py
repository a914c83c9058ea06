"""Per-pipeline request policy: timeouts, retries and the tool-round limit.

Timeouts are feature policy, never agent configuration: completion wants to fail fast, chat may
wait minutes for a reasoning model's first token. Retries happen only before the first byte.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from qodeassist_lsp.config.settings import (
    ChatSettings,
    CompletionSettings,
    NextEditSettings,
    RefactorSettings,
    Settings,
)
from qodeassist_lsp.wire.client import Timeouts
from qodeassist_lsp.wire.retry import RetryPolicy


class Pipeline(enum.StrEnum):
    """The features that send requests."""

    COMPLETION = "code_completion"
    CHAT = "chat_assistant"
    COMPRESSION = "chat_compression"
    ROUTER = "chat_router"
    REFACTOR = "quick_refactor"
    NEXT_EDIT = "next_edit"


@dataclass(frozen=True)
class RequestPolicy:
    """How one pipeline's requests are sent."""

    timeouts: Timeouts = field(default_factory=Timeouts)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_tool_rounds: int = 30


def _seconds(value: float) -> float | None:
    return None if value <= 0 else float(value)


def policy_for(pipeline: Pipeline, settings: Settings) -> RequestPolicy:
    """Return the request policy of ``pipeline`` under ``settings``."""
    section: CompletionSettings | ChatSettings | RefactorSettings | NextEditSettings
    section = settings.chat
    if pipeline is Pipeline.COMPLETION:
        section = settings.completion
    elif pipeline is Pipeline.REFACTOR:
        section = settings.refactor
    elif pipeline is Pipeline.NEXT_EDIT:
        section = settings.next_edit
    timeouts = Timeouts(
        connect=_seconds(section.connect_timeout_s),
        first_byte=_seconds(section.first_byte_timeout_s),
        inactivity=_seconds(section.request_timeout_s),
    )
    # A completion or next edit is worthless after a retry's back-off, and a late router is
    # worse than its fallback; only chat-like work retries.
    once = pipeline in (Pipeline.COMPLETION, Pipeline.NEXT_EDIT, Pipeline.ROUTER)
    retry = RetryPolicy(max_attempts=1) if once else RetryPolicy()
    return RequestPolicy(timeouts, retry, settings.tools.max_tool_continuations)
