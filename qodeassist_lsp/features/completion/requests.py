"""What a completion request carries and what it returns, and what the service needs around it.

``CompletionRequest`` in, ``CompletionResult`` (with ``CompletionItem`` suggestions) out; the
``PathFilter`` protocol is the ignore check ``CompletionService`` is given (the runtime it reads
is ``core.runtime_view.RuntimeView``).
"""

from __future__ import annotations

import enum
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from qodeassist_lsp.context.documents import Document, offset_at
from qodeassist_lsp.features.completion.stats import Outcome
from qodeassist_lsp.wire.errors import ErrorInfo

__all__ = [
    "CompletionItem",
    "CompletionRequest",
    "CompletionResult",
    "PathFilter",
    "TriggerKind",
]


class TriggerKind(enum.StrEnum):
    """Why the editor asked: an explicit gesture, or typing."""

    INVOKED = "invoked"
    AUTOMATIC = "automatic"


class PathFilter(Protocol):
    """Answers whether a file is excluded by ``.qodeassistignore`` (``IgnoreFilter`` does)."""

    def is_ignored(self, path: str) -> bool:
        """Whether ``path`` must not be read or sent to a model."""
        ...

    def held(self) -> AbstractContextManager[None]:
        """Return a scope in which the rules are read once for many checks (one prompt's)."""
        ...


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One request: the document snapshot, the cursor (code points) and the trigger."""

    document: Document
    line: int
    character: int
    """Column in code points (the server converts from UTF-16)."""
    trigger: TriggerKind = TriggerKind.AUTOMATIC
    offset: int = -1
    """Offset of the cursor in ``document.text``; computed from line/character when < 0."""
    project_name: str | None = None
    """Project name for agent ``[match]`` rules; default: the configured project's folder."""

    def __post_init__(self) -> None:
        if self.offset < 0:
            offset = offset_at(self.document.text, self.line, self.character)
            object.__setattr__(self, "offset", offset)
            object.__setattr__(
                self, "character", offset - (self.document.text.rfind("\n", 0, offset) + 1)
            )


@dataclass(frozen=True, slots=True)
class CompletionItem:
    """One suggestion: insert ``insert_text`` over [start, end) of ``line`` (code points)."""

    id: str
    """Pass back through ``qodeassist.accepted`` for acceptance statistics."""
    insert_text: str
    line: int
    start_character: int
    end_character: int
    """End of the replaced range: the cursor plus the overlap with the text right of it."""


@dataclass(frozen=True, slots=True)
class CompletionResult:
    """The items (possibly none) and how the request ended."""

    items: tuple[CompletionItem, ...] = ()
    outcome: Outcome = Outcome.EMPTY
    reason: str = ""
    """Why there are no items (suppressed, ignored, superseded, …), for logs."""
    agent: str = ""
    error: ErrorInfo | None = None
    """Set when the outcome is ``error``: the typed error to show (rate-limited) to the user."""
    elapsed_ms: float = 0.0
