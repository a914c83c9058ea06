"""Key rotation: several API keys for one provider instance, used round-robin.

A provider may list several keys (``api_key_ref`` / ``api_key_env`` as lists). Requests take
them in turn. A key the provider rejects (401/403) is parked until the configuration changes (a
reload builds a new rotation); a key that is rate limited (429) rests for the provider's
``Retry-After`` (``DEFAULT_REST_S`` without one) while the others serve. When every key is parked
or resting, the one whose rest ends first is used anyway: the provider's own error then tells the
user what is wrong, which is better than refusing unsent. Key values never leave this module's
callers: the snapshot names keys by their ``api_key_ref`` / ``api_key_env``.
"""

from __future__ import annotations

import enum
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

DEFAULT_REST_S = 60.0


class KeyState(enum.StrEnum):
    """Whether a key serves."""

    READY = "ready"
    RESTING = "resting"
    """Rate limited: it serves again after its rest."""
    PARKED = "parked"
    """Rejected: it serves again after the configuration changes."""


@dataclass
class _Slot:
    ref: str
    env: str
    state: KeyState = KeyState.READY
    until: float = 0.0
    reason: str = ""


def is_key_failure(info: ErrorInfo) -> bool:
    """Whether ``info`` is about the key used (rejected or rate limited), not the provider."""
    return info.category is ErrorCategory.AUTH or info.status == 429


class KeyRotation:
    """Round-robin over a provider's keys, resting the rate-limited and parking the rejected."""

    def __init__(
        self,
        slots: Sequence[tuple[str, str]],
        resolve: Callable[[str, str], str | None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Rotate over ``slots`` (``(ref, env)`` pairs), reading values through ``resolve``."""
        self._slots = [_Slot(ref, env) for ref, env in slots]
        self._resolve = resolve
        self._clock = clock
        self._turn = itertools.count()

    def __len__(self) -> int:
        """Return how many keys the provider lists."""
        return len(self._slots)

    def _ready(self, slot: _Slot) -> bool:
        if slot.state is KeyState.RESTING and self._clock() >= slot.until:
            slot.state, slot.reason = KeyState.READY, ""
        return slot.state is KeyState.READY

    def next_key(self) -> str | None:
        """Return the next ready key with a value (None when the provider has no key)."""
        if not self._slots:
            return None
        start = next(self._turn)
        count = len(self._slots)
        order = [self._slots[(start + i) % count] for i in range(count)]
        candidates = [slot for slot in order if self._ready(slot)]
        if not candidates:  # every key is out: the one back soonest (parked ones last)
            candidates = sorted(order, key=lambda s: (s.state is KeyState.PARKED, s.until))
        for slot in candidates:
            value = self._resolve(slot.ref, slot.env)
            if value:
                return value
        return None

    def has_value(self) -> bool:
        """Whether any listed key resolves to a value, whatever its state."""
        return any(self._resolve(slot.ref, slot.env) for slot in self._slots)

    def has_ready_spare(self, used: str | None) -> bool:
        """Whether a ready key other than ``used`` exists (worth retrying the request with)."""
        return any(
            self._ready(slot) and self._resolve(slot.ref, slot.env) not in (None, "", used)
            for slot in self._slots
        )

    def record_failure(self, key: str | None, info: ErrorInfo) -> None:
        """Park ``key`` after a 401/403, rest it after a 429; other failures leave it alone."""
        if key is None or len(self._slots) < 2 or not is_key_failure(info):
            return  # a single key is never taken out: there is nothing else to use
        for slot in self._slots:
            if self._resolve(slot.ref, slot.env) != key:
                continue
            if info.category is ErrorCategory.AUTH:
                slot.state, slot.reason = KeyState.PARKED, info.message
            else:
                rest = info.retry_after if info.retry_after is not None else DEFAULT_REST_S
                slot.state, slot.until = KeyState.RESTING, self._clock() + rest
                slot.reason = info.message

    def snapshot(self) -> list[dict[str, Any]]:
        """Return each key's state for status reports, named by its ref/env, never its value."""
        out = []
        for slot in self._slots:
            self._ready(slot)
            entry: dict[str, Any] = {
                "ref": slot.ref or None,
                "env": slot.env or None,
                "state": str(slot.state),
            }
            if slot.state is KeyState.RESTING:
                entry["until"] = slot.until
            if slot.reason:
                entry["reason"] = slot.reason
            out.append(entry)
        return out
