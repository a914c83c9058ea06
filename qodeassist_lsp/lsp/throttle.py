"""Rate limiting for messages shown to the user: the same problem is shown once per window."""

from __future__ import annotations

import time
from collections.abc import Callable


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
