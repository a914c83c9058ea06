"""When and how long to wait before re-sending a request that failed before its first byte.

Retrying is only safe while nothing has been streamed: once the provider has started to
answer, a second request would bill twice and show the user a different answer. So the
policy covers connection failures and "come back later" statuses, honours the provider's
``Retry-After`` (giving up when it asks for too long), and otherwise backs off
exponentially with jitter, capped.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

_RNG = random.Random()
_RETRYABLE_EXCEPTIONS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Capped exponential backoff with jitter, applied only before the first byte."""

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 30.0
    jitter: float = 0.25
    retry_statuses: frozenset[int] = field(default=frozenset({429, 503, 529}))

    def retries_status(self, status: int, headers: Mapping[str, str]) -> bool:
        """Whether a response with ``status`` may be retried (``x-should-retry`` wins)."""
        hint = {k.lower(): v for k, v in headers.items()}.get("x-should-retry", "").lower()
        if hint in ("true", "false"):
            return hint == "true"
        return status in self.retry_statuses

    def retries_exception(self, exc: BaseException) -> bool:
        """Whether a transport failure before any response may be retried."""
        return isinstance(exc, _RETRYABLE_EXCEPTIONS)

    def delay(
        self, attempt: int, retry_after: float | None, rng: random.Random | None = None
    ) -> float | None:
        """Seconds to wait after failed ``attempt`` (1-based), or None to give up."""
        if attempt >= self.max_attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        spread = (rng or _RNG).random()
        return backoff * (1.0 - self.jitter * spread)


NO_RETRY = RetryPolicy(max_attempts=1)
