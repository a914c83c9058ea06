"""Per-round bookkeeping of a session's request: token usage, stop reason, repetition watch.

Split out of ``core/session.py``: a request runs one or more rounds (tool continuations), and
totals over rounds are sums while a provider's reports within a round are running totals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qodeassist_lsp.core.repetition import RepetitionWatch
from qodeassist_lsp.wire import events as wire


@dataclass
class RoundUsage:
    """Token usage of one round (or the sum of finished rounds).

    Within a round providers report running totals, so the largest values are kept.
    """

    values: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    reported: bool = False

    def add(self, usage: wire.Usage) -> None:
        """Take a usage report of this round (a running total)."""
        self.reported = True
        new = (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens)
        self.values = [max(a, b) for a, b in zip(self.values, new, strict=True)]

    def add_round(self, other: RoundUsage) -> None:
        """Add the usage of a finished round (totals over rounds are sums)."""
        self.reported = self.reported or other.reported
        self.values = [a + b for a, b in zip(self.values, other.values, strict=True)]

    def counts(self) -> tuple[int, int, int, int]:
        """Return input, output, cached and reasoning tokens."""
        values = self.values
        return values[0], values[1], values[2], values[3]


@dataclass
class RoundState:
    """What one round has seen so far: its usage and the stop reason."""

    usage: RoundUsage = field(default_factory=RoundUsage)
    stop: str = "end_turn"
    repetition: RepetitionWatch = field(default_factory=RepetitionWatch)
