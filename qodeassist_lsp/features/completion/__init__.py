"""Inline code completion: triggers, context, one upstream call per suggestion, cleanup.

The L5 handlers only need ``CompletionService`` and its request/result types, re-exported
here; the modules hold one concern each (``languages``, ``context_builder``, ``triggers``,
``debounce``, ``extra_context``, ``postprocess``, ``overlap``, ``typed_ahead``, ``generation``,
``stats``, ``service``). See ``docs/completion.md``.
"""

from qodeassist_lsp.features.completion.service import (
    CompletionItem,
    CompletionRequest,
    CompletionResult,
    CompletionService,
    PathFilter,
    TriggerKind,
)
from qodeassist_lsp.features.completion.stats import Outcome

__all__ = [
    "CompletionItem",
    "CompletionRequest",
    "CompletionResult",
    "CompletionService",
    "Outcome",
    "PathFilter",
    "TriggerKind",
]
