"""The request and result types of next-edit suggestions."""

from __future__ import annotations

import enum
import itertools
import os
from dataclasses import dataclass

from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.features.next_edit.prompts import DiagnosticNote
from qodeassist_lsp.features.next_edit.rewrite import TextChange
from qodeassist_lsp.wire.errors import ErrorInfo

__all__ = ["NextEditRequest", "NextEditResult", "Outcome", "SuggestedEdit"]

_IDS = itertools.count(1)
_PREFIX = os.urandom(3).hex()


class Outcome(enum.StrEnum):
    """How a next-edit request ended; only ``suggested`` carries edits."""

    SUGGESTED = "suggested"
    NO_CHANGE = "no_change"
    UNDO = "undo"
    MALFORMED = "malformed"
    STALE = "stale"
    LATE = "late"
    SUPERSEDED = "superseded"
    YIELDED = "yielded"
    """The provider instance was serving inline completion, which comes first."""
    DISABLED = "disabled"
    IGNORED = "ignored"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class NextEditRequest:
    """A next edit wanted near a cursor (0-based line, code-point column)."""

    document: Document
    line: int
    character: int
    diagnostics: tuple[DiagnosticNote, ...] = ()


@dataclass(frozen=True, slots=True)
class SuggestedEdit:
    """One suggested edit of a document version (offsets in code points)."""

    id: str
    uri: str
    version: int
    change: TextChange
    agent: str
    text_before: str
    """The document text the edit was computed on (to rebase it exactly)."""

    @classmethod
    def issue(cls, document: Document, change: TextChange, agent: str) -> SuggestedEdit:
        """Return a new edit of ``document`` with a fresh id."""
        return cls(
            f"ne-{_PREFIX}-{next(_IDS)}",
            document.uri,
            document.version,
            change,
            agent,
            document.text,
        )


@dataclass(frozen=True, slots=True)
class NextEditResult:
    """What one request produced."""

    outcome: Outcome
    edits: tuple[SuggestedEdit, ...] = ()
    agent: str = ""
    reason: str = ""
    error: ErrorInfo | None = None
    elapsed_ms: float = 0.0
