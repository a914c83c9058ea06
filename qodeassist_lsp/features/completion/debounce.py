"""Server-side, adaptive debounce for automatic completion requests.

Editors ask for an inline completion on nearly every keystroke; sending each one upstream
wastes tokens and queues requests on local models. The delay follows the user's rhythm (Tabby's
debouncer): the median of recent keystroke intervals times a rate, clamped between
``debounce_min_ms`` and ``debounce_ms`` — a fast typist's pause is noticed sooner, a slow typist
is not interrupted between keys. Only intervals between keys of one burst are rhythm: an
interval longer than ``_BURST_GAP_S``, or the one after a suggestion was shown (the user read
it), starts a new burst and is not recorded. A user who types two keys, reads the suggestion
for most of a second and types on has one key interval and one reading pause per burst; with
the pauses counted the median sat between the two and the delay at its cap (issue 27). Of the
intervals kept, the median, not the mean. Time already spent since the last keystroke counts,
so a request that arrives after a pause is sent at once; invoked requests never wait.
The clock is injectable so tests need no sleeping.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import deque
from collections.abc import Callable
from typing import Final

from qodeassist_lsp.features.completion.settings import CompletionSettings

__all__ = ["AdaptiveDebouncer", "PendingRequest"]

_RATE: Final = 3.0
"""Delay in keystroke intervals before the user is considered to have paused."""
_EAGER_RATE: Final = 1.5
"""Shorter wait where a suggestion is clearly wanted (fresh line, after ``{ ( , = …``)."""
_BURST_GAP_S: Final = 0.6
"""Intervals longer than this are reading or thinking pauses, not typing rhythm."""


class AdaptiveDebouncer:
    """Learns the typing rhythm from keystrokes and says how long a request should wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, window: int = 20) -> None:
        """Follow the last ``window`` keystroke intervals; ``clock`` gives monotonic seconds."""
        self._clock = clock
        self._intervals: deque[float] = deque(maxlen=window)
        self._last: float | None = None
        self._answered = False

    @property
    def typical_interval_ms(self) -> float | None:
        """The median recent keystroke interval, or None before two keystrokes."""
        if not self._intervals:
            return None
        return 1000.0 * statistics.median(self._intervals)

    def note_keystroke(self) -> None:
        """Record a keystroke now."""
        now = self._clock()
        if self._last is not None and not self._answered and 0 <= now - self._last <= _BURST_GAP_S:
            self._intervals.append(now - self._last)
        self._last = now
        self._answered = False

    def note_answer_shown(self) -> None:
        """Record that a suggestion was shown: the next keystroke starts a new burst."""
        self._answered = True

    def delay_ms(
        self, settings: CompletionSettings, *, eager: bool = False, local: bool = False
    ) -> float:
        """Return the full debounce delay for an automatic request under ``settings``."""
        high = float(settings.debounce_ms)
        if local:
            return float(min(settings.local_debounce_ms, settings.debounce_ms))
        if not settings.adaptive_debounce:
            return high
        low = float(min(settings.debounce_min_ms, settings.debounce_ms))
        typical = self.typical_interval_ms
        if typical is None:
            return high
        return min(max(typical * (_EAGER_RATE if eager else _RATE), low), high)

    def remaining_s(
        self,
        settings: CompletionSettings,
        *,
        eager: bool = False,
        invoked: bool = False,
        local: bool = False,
    ) -> float:
        """Return how long a request arriving now should still wait, in seconds."""
        if invoked:
            return 0.0
        delay = self.delay_ms(settings, eager=eager, local=local) / 1000.0
        if self._last is None:
            return delay
        return max(0.0, delay - (self._clock() - self._last))


class PendingRequest:
    """A request waiting in ``complete``; a newer one for the same document supersedes it."""

    __slots__ = ("superseded", "wake")

    def __init__(self) -> None:
        self.superseded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.wake: asyncio.Future[None] | None = None
        """What the request awaits while a generation runs; superseding resolves it too."""

    def supersede(self) -> None:
        """Wake the request: a newer one for its document has arrived."""
        for future in (self.superseded, self.wake):
            if future is not None and not future.done():
                future.set_result(None)

    async def wait(self, delay_s: float) -> bool:
        """Sleep ``delay_s`` seconds; return True if superseded meanwhile."""
        done, _ = await asyncio.wait([self.superseded], timeout=delay_s)
        return bool(done)
