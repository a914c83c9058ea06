"""Next-edit statistics for ``qodeassist/status``: outcomes, shown, accepted, latency."""

from __future__ import annotations

import statistics
from collections import Counter, OrderedDict, deque
from typing import Final

from qodeassist_lsp.features.next_edit.results import NextEditResult, Outcome

__all__ = ["NextEditStats"]

_REMEMBERED: Final = 200
"""Issued edits remembered for ``shown``/``accepted`` (older ids are forgotten)."""
_MODEL_OUTCOMES: Final = frozenset(
    {Outcome.SUGGESTED, Outcome.NO_CHANGE, Outcome.UNDO, Outcome.MALFORMED, Outcome.STALE}
)


class NextEditStats:
    """Counts per outcome, edits shown and accepted per agent, model latency."""

    def __init__(self) -> None:
        """Start from zero."""
        self.outcomes: Counter[str] = Counter()
        self.shown: Counter[str] = Counter()
        self.accepted: Counter[str] = Counter()
        self._issued: OrderedDict[str, str] = OrderedDict()
        self._latencies: deque[float] = deque(maxlen=100)

    def record(self, result: NextEditResult) -> None:
        """Count one answered request."""
        self.outcomes[result.outcome.value] += 1
        if result.outcome in _MODEL_OUTCOMES:
            self._latencies.append(result.elapsed_ms)
        for edit in result.edits:
            self._issued[edit.id] = edit.agent
            while len(self._issued) > _REMEMBERED:
                self._issued.popitem(last=False)

    def record_shown(self, edit_id: str) -> bool:
        """Count that the editor showed ``edit_id``; False for an unknown id."""
        agent = self._issued.get(edit_id)
        if agent is None:
            return False
        self.shown[agent] += 1
        return True

    def record_accepted(self, edit_id: str) -> bool:
        """Count that the user accepted ``edit_id`` (once); False for an unknown id."""
        agent = self._issued.pop(edit_id, None)
        if agent is None:
            return False
        self.accepted[agent] += 1
        return True

    def to_json(self) -> dict[str, object]:
        """Return the statistics as camelCase JSON."""
        latencies = sorted(self._latencies)
        return {
            "requests": sum(self.outcomes.values()),
            "outcomes": dict(self.outcomes),
            "shown": sum(self.shown.values()),
            "accepted": sum(self.accepted.values()),
            "acceptedByAgent": dict(self.accepted),
            "latencyMsP50": round(statistics.median(latencies), 1) if latencies else None,
        }
