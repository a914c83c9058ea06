"""One problem found while reading configuration, a "did you mean" helper, and typed names.

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

from qodeassist_lsp.wire.errors import QodeAssistError

Severity = Literal["error", "warning"]
"""How bad a problem is: an error means a value was rejected, a warning that it was ignored."""

_SEPARATORS = re.compile(r"[-_\s\u2013\u2014]")
_DASHES = re.compile(r"\s*(?:[\u2013\u2014]|-+)\s*")
_SPACES = re.compile(r"\s+")


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


class UnknownName(QodeAssistError, LookupError):
    """A typed name that means none, or more than one, of the loaded names; ``str()`` says so."""


def typed_form(name: str) -> str:
    """Return ``name`` as it compares with a typed one: no case, ``—``/``–``/``--`` as ``-``.

    Spaces around a dash and runs of white space do not count either, so ``claude chat -
    sonnet`` and ``Claude Chat -- Sonnet`` both mean ``Claude Chat — Sonnet``.
    """
    return _SPACES.sub(" ", _DASHES.sub("-", name.casefold())).strip()


def resolve_name(typed: str, names: Iterable[str], what: str) -> str:
    """Return the one name of ``names`` that ``typed`` means, or raise `UnknownName`.

    An exact name wins; else the names equal to it in `typed_form` (the bundled agents use an
    em dash, which nobody types): one is the answer, several are an ambiguity that lists them,
    none is an error with the closest name. ``what`` names the kind (``usable agent``,
    ``provider instance``) in the message.
    """
    candidates = list(names)
    if typed in candidates:
        return typed
    wanted = typed_form(typed)
    matches = [name for name in candidates if typed_form(name) == wanted]
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(repr(name) for name in sorted(matches))
        raise UnknownName(
            f"{typed!r} matches {len(matches)} {what}s ({listed}): give the full name"
        )
    raise UnknownName(f"no {what} named {typed!r}{did_you_mean(typed, candidates)}")
