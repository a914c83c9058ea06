"""One problem found while reading configuration, and a "did you mean" helper.

Every config reader (settings, agents, providers, the ignore file) reports what it could not use as
``ConfigProblem`` values instead of raising, so the server keeps running on the valid rest and can
show each problem as ``file:line: severity: message`` in a log, the CLI or editor diagnostics.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable
from typing import Literal

Severity = Literal["error", "warning"]
"""How bad a problem is: an error means a value was rejected, a warning that it was ignored."""

_SEPARATORS = re.compile(r"[-_\s]")


@dataclasses.dataclass(frozen=True, slots=True)
class ConfigProblem:
    """A rejected or ignored piece of configuration, located as precisely as known."""

    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    key: str | None = None

    def format(self) -> str:
        """Render as ``<file>:<line>: <severity>: <message>``, leaving out unknown parts."""
        location = ""
        if self.file is not None:
            location = self.file if self.line is None else f"{self.file}:{self.line}"
            location += ": "
        return f"{location}{self.severity}: {self.message}"

    def __str__(self) -> str:
        return self.format()


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """Return the candidate ``name`` most likely meant, or None if nothing is close enough.

    Case, ``_`` and ``-`` are ignored first, so ``debounceMs`` finds ``debounce_ms``; then the
    best fuzzy match by ``difflib`` wins.
    """
    by_norm: dict[str, str] = {}
    for candidate in candidates:
        by_norm.setdefault(_normalise(candidate), candidate)
    wanted = _normalise(name)
    if wanted in by_norm:
        return by_norm[wanted]
    matches = difflib.get_close_matches(wanted, list(by_norm), n=1, cutoff=0.6)
    return by_norm[matches[0]] if matches else None


def _normalise(name: str) -> str:
    return _SEPARATORS.sub("", name).lower()


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Return ``"; did you mean 'X'?"`` for the closest candidate, or ``""`` when none is close."""
    suggestion = closest(name, candidates)
    return f"; did you mean {suggestion!r}?" if suggestion else ""
