"""Rate limiting for messages shown to the user: once per window, or once per outage."""

from __future__ import annotations

import time
from collections.abc import Callable

from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo


class MessageThrottle:
    """Lets a message key through at most once per ``window`` seconds."""

    def __init__(self, window: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = window
        self._clock = clock
        self._last: dict[str, float] = {}

    def allow(self, key: str) -> bool:
        """Return whether the message ``key`` may be shown now (and remember that it was)."""
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self._window:
            return False
        self._last[key] = now
        return True


class BackgroundOutage:
    """The failures of background features (inline completion, next edit): one notice each.

    A failed background request is not the user's action, so it is not shown per request:
    the status says ``degraded`` with the reason and the fix while the outage lasts, and the
    user is told once per outage; a request that succeeds again ends the outage.
    """

    def __init__(self) -> None:
        self.failure: dict[str, str] | None = None
        """``{feature, agent, category, reason, fix}`` of the last failure, while it lasts."""

    def failed(self, feature: str, agent: str, error: ErrorInfo) -> bool:
        """Record a failure; return whether the user should be told now (once per outage)."""
        first = self.failure is None
        self.failure = {
            "feature": feature,
            "agent": agent,
            "category": str(error.category),
            "reason": error.message,
            "fix": fix_for(error.category),
        }
        return first

    def succeeded(self) -> bool:
        """Record a success; return whether it ended an outage."""
        ended = self.failure is not None
        self.failure = None
        return ended


def fix_for(category: ErrorCategory) -> str:
    """Return what the user can do about a failure of ``category``."""
    if category is ErrorCategory.AUTH:
        return "check the provider's API key, then run `qodeassist-lsp doctor`"
    if category is ErrorCategory.NETWORK:
        return "check that the provider is running and reachable, then run `qodeassist-lsp doctor`"
    if category is ErrorCategory.CONFIG:
        return "fix the configuration (`qodeassist-lsp agents validate` lists the problems)"
    return "run `qodeassist-lsp doctor` to probe the provider; the server log has the details"
