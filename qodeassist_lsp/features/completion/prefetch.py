"""The suggestion after an accept, prefetched while the user reads the current one.

llama.vim's speculative FIM: when a suggestion is shown, the completion for the position after
accepting it is requested at once, so that accepting and going on shows the next suggestion
without waiting for the model. The service launches that generation on the document as it will
be after the accept (the suggestion inserted, the cursor at its end); the request that follows
the accept attaches to it or finds its answer in the typed-ahead cache, where a prefetch that
ended before its accept is put only then: its answer is for a line that may not exist before
(a suggestion that writes the next line), and the edits that lead there, the user typing the
suggestion's first characters, would drop it as an edit elsewhere. The prefetch answers one
line (after a finished line: the next one), even where a request would get several: a 270M
model writes about 35 tokens a second on two cores, and a several-line answer would still be
running when the user, having read the suggestion, accepts it. A word the suggestion ends in is
not healed (``healing.heal_word``): the model ended it there, it is whole.

An accept is recognised by its result, not by the editor's command: a ``didChange`` after the
suggestion was shown must leave the document exactly as the accept would. Typing the
suggestion's first characters keeps the prefetch; any other change (the user typed something
else, moved on, undid) cancels it, so it never keeps the model's only slot from a real
request; a real request also takes the slot from it, like any newer generation does
(``CompletionService._launch``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.context.documents import Document, position_at
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.completion.context_builder import Cursor
from qodeassist_lsp.features.completion.generation import Anchor, Generation
from qodeassist_lsp.features.completion.postprocess import Postprocessor
from qodeassist_lsp.features.completion.prompt_plan import PromptPlan, PromptPlanner
from qodeassist_lsp.features.completion.requests import (
    CompletionItem,
    CompletionRequest,
    CompletionResult,
    TriggerKind,
)
from qodeassist_lsp.features.completion.routing import route, serves_locally
from qodeassist_lsp.features.completion.settings import COMPLETION_SETTINGS
from qodeassist_lsp.features.completion.stats import Outcome

log = logging.getLogger("qodeassist.completion")

_SHOWN = frozenset({Outcome.MODEL, Outcome.REUSED, Outcome.TYPED_AHEAD})
"""Answers whose generation has ended."""

Launch = Callable[[AgentProfile, Anchor, PromptPlan], Generation]
"""Starts the prefetch's generation and makes it the document's running one."""

__all__ = ["AcceptPrefetch", "Accepted", "after_accept", "one_line"]


@dataclasses.dataclass(frozen=True, slots=True)
class Accepted:
    """The document after accepting a suggestion, and the cursor there (code points)."""

    document: Document
    line: int
    character: int
    head: str = ""
    """The text before the suggestion's range."""
    insert: str = ""
    """The suggestion."""
    after: str = ""
    """The text from the cursor on, before the accept (the range's overlap included)."""

    def typed_along(self, text: str) -> bool:
        """Whether ``text`` is the document with the first characters of the suggestion typed."""
        middle_end = len(text) - len(self.after)
        return (
            middle_end >= len(self.head)
            and text.startswith(self.head)
            and text.endswith(self.after)
            and self.insert.startswith(text[len(self.head) : middle_end])
        )


def after_accept(document: Document, item: CompletionItem) -> Accepted:
    """Return ``document`` with ``item`` inserted over its range, the cursor at its end."""
    start = document.offset_at(item.line, item.start_character)
    end = document.offset_at(item.line, item.end_character)
    text = document.text[:start] + item.insert_text + document.text[end:]
    line, character = position_at(text, start + len(item.insert_text))
    accepted = dataclasses.replace(document, text=text, version=document.version + 1)
    head, after = document.text[:start], document.text[start:]
    return Accepted(accepted, line, character, head, item.insert_text, after)


def one_line(plan: PromptPlan) -> PromptPlan:
    """``plan`` answering one line: a prefetch must be ready by the time the user accepts."""
    options = plan.postprocessor.options
    if options.single_line:
        return plan
    single = dataclasses.replace(options, single_line=True)
    return dataclasses.replace(plan, postprocessor=Postprocessor(single))


class AcceptPrefetch:
    """The prefetches waiting for their accept, one per document."""

    def __init__(
        self,
        planner: PromptPlanner,
        backend: RuntimeView,
        *,
        launch: Launch,
        may_start: Callable[[str], bool],
    ) -> None:
        """Prefetch through ``launch``; ``may_start(agent)``: the agent is not standing down."""
        self._planner = planner
        self._backend = backend
        self._launch = launch
        self._may_start = may_start
        self._waiting: dict[str, tuple[Accepted, Generation]] = {}
        self.started = 0
        """Prefetches launched (``qodeassist/status`` ``prefetches``)."""
        self.accepted = 0
        """Prefetches whose suggestion was accepted."""

    def shown(
        self, request: CompletionRequest, result: CompletionResult, current: Document | None
    ) -> Generation | None:
        """Prefetch the completion after accepting ``result``, just shown for ``request``.

        For automatic requests whose generation has ended (the prefetch takes the model's
        slot), only for a model on this machine (a cloud provider would bill a request the user
        may never see) and only while the document (``current``) is still the one the answer
        was made for.
        """
        cs = self._backend.settings.section(COMPLETION_SETTINGS)
        if (
            not cs.prefetch_after_accept
            or not cs.typed_ahead_cache
            or not result.items
            or result.outcome not in _SHOWN
            or request.trigger is not TriggerKind.AUTOMATIC
            or current is None
            or current.version != request.document.version
        ):
            return None
        item = result.items[0]
        try:
            accepted = after_accept(request.document, item)
            follow = CompletionRequest(
                accepted.document,
                accepted.line,
                accepted.character,
                project_name=request.project_name,
            )
            configuration = self._backend.configuration
            profile = route(configuration, follow)
            if (
                isinstance(profile, CompletionResult)
                or not serves_locally(configuration, profile)
                or not self._may_start(profile.name)
            ):
                return None
            text = accepted.document.text
            cursor = Cursor.at_position(text, follow.line, follow.character, follow.offset)
            # The model ended its suggestion there, so a word it ends in is whole: not healed.
            whole = cs.model_copy(update={"heal_words": False})
            plan = one_line(self._planner.plan(profile, accepted.document, cursor, whole))
            anchor = Anchor(
                request.document.uri, cursor.line, cursor.line_before, cursor.line_after
            )
            waiting = self.waiting(anchor.uri)
            if waiting is not None and waiting.anchor == anchor and not waiting.cancelled:
                return waiting  # shown again (typed along, asked again): already prefetching
            generation = self._launch(profile, anchor, plan)
            # The model has just answered: a slow answer is no model load, and a cancel (the
            # user typed on) must free the slot at once rather than wait for it.
            generation.load_window_s = math.inf
        except Exception:  # a prefetch is an optimisation: it must never break an answer
            log.exception("prefetch after accept for %s failed", request.document.uri)
            return None
        self.expect(request.document.uri, accepted, generation)
        return generation

    def expect(self, uri: str, accepted: Accepted, generation: Generation) -> None:
        """Wait for the accept that makes ``accepted``; ``generation`` prefetches for it."""
        self.cancel(uri)
        self._waiting[uri] = (accepted, generation)
        self.started += 1

    def waiting(self, uri: str) -> Generation | None:
        """Return the prefetch still waiting for its accept in ``uri``, if any."""
        entry = self._waiting.get(uri)
        return entry[1] if entry is not None else None

    def on_change(self, uri: str, text: str) -> Generation | None:
        """Note that ``uri`` became ``text``: the prefetch it accepted, or None.

        Typing the suggestion's first characters keeps the prefetch (its answer still follows
        the same accept); any other change cancels it.
        """
        entry = self._waiting.get(uri)
        if entry is None:
            return None
        accepted, generation = entry
        if text == accepted.document.text:
            del self._waiting[uri]
            self.accepted += 1
            return generation
        if not accepted.typed_along(text):
            del self._waiting[uri]
            generation.cancel()
        return None

    def cancel(self, uri: str) -> None:
        """Cancel the prefetch waiting in ``uri`` (closed, or replaced)."""
        entry = self._waiting.pop(uri, None)
        if entry is not None:
            entry[1].cancel()

    def clear(self) -> None:
        """Cancel every waiting prefetch."""
        for uri in list(self._waiting):
            self.cancel(uri)
