"""``CompletionService``: one inline completion request, from cursor to suggestion items.

The L5 handlers for ``textDocument/inlineCompletion`` and ``textDocument/completion`` (and the
``complete`` CLI command) call ``complete`` with a ``CompletionRequest``. The path, cheapest
first:

1. switched off, manual mode (automatic triggers), ``.qodeassistignore`` → no items;
2. cancel-previous: a newer request for the same document answers the older one empty;
3. the typed-ahead cache answers with no upstream request;
4. a generation still running for this line whose output starts with what was typed since is
   attached to instead of starting a new one; any other running generation is cancelled;
5. automatic triggers pass smart suppression and the character threshold, then wait out the
   adaptive debounce (and give up if the document changed meanwhile);
6. the agent is routed, prefix/suffix and the ``completion.context`` layer are built and a
   ``Generation`` streams; automatic requests get at most ``time_budget_ms`` (then the complete
   lines streamed so far are returned), invoked ones several items. One generation per
   provider instance goes upstream at a time: a new one cancels the previous one on the same
   instance and sends its request once that stream is closed (a local model server has one
   slot; a second request would queue behind the first). ``answer`` turns what the generation
   streamed into the result.

When the user is idle, ``warming`` sends what the next request will need; a shown suggestion
makes ``prefetch`` ask for the one after it. ``requests`` has the (re-exported) types.

Every await is a cancellation point: cancelling ``complete`` (``$/cancelRequest``) detaches
from the generation, whose upstream stream is closed after a short grace period unless a
follow-up request attaches. ``CancelledError`` is never swallowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.config.pipelines import CODE_COMPLETION
from qodeassist_lsp.context.documents import (
    Document,
    DocumentEvent,
    DocumentEventKind,
    DocumentStore,
)
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.completion.answer import answer, verdict
from qodeassist_lsp.features.completion.codebase_context import CodebaseContext, CodebaseLookup
from qodeassist_lsp.features.completion.context_builder import Cursor, HeaderCache
from qodeassist_lsp.features.completion.debounce import AdaptiveDebouncer, PendingRequest
from qodeassist_lsp.features.completion.extra_context import ExtraContextRing
from qodeassist_lsp.features.completion.generation import LOAD_WINDOW_S, Anchor, Generation
from qodeassist_lsp.features.completion.items import IssuedItems
from qodeassist_lsp.features.completion.languages import LanguageTable
from qodeassist_lsp.features.completion.postprocess import alternatives
from qodeassist_lsp.features.completion.prefetch import AcceptPrefetch
from qodeassist_lsp.features.completion.prompt_plan import PromptPlan, PromptPlanner
from qodeassist_lsp.features.completion.requests import (
    CompletionItem,
    CompletionRequest,
    CompletionResult,
    PathFilter,
    TriggerKind,
)
from qodeassist_lsp.features.completion.routing import route, serves_locally
from qodeassist_lsp.features.completion.settings import (
    COMPLETION_SETTINGS,
    CompletionSettings,
    CustomLanguage,
)
from qodeassist_lsp.features.completion.stand_down import StandDown
from qodeassist_lsp.features.completion.stats import CompletionStats, Outcome
from qodeassist_lsp.features.completion.triggers import TypingCounter, evaluate_trigger
from qodeassist_lsp.features.completion.typed_ahead import TypedAheadCache
from qodeassist_lsp.features.completion.warming import CacheWarmer

__all__ = [
    "CompletionItem",
    "CompletionRequest",
    "CompletionResult",
    "CompletionService",
    "PathFilter",
    "TriggerKind",
]

log = logging.getLogger("qodeassist.completion")


class CompletionService:
    """Inline completion over the core runtime; one instance per server."""

    def __init__(
        self,
        backend: RuntimeView,
        documents: DocumentStore,
        *,
        ignore: PathFilter | None = None,
        clock: Callable[[], float] = time.monotonic,
        reuse_grace_s: float = 0.25,
        load_window_s: float = LOAD_WINDOW_S,
        codebase: CodebaseLookup | None = None,
    ) -> None:
        """Create the service.

        Args:
            backend: The runtime (configuration, sessions and settings are read per request).
            documents: The open documents; the service listens to their edits and cursor hints.
            ignore: The project's ``.qodeassistignore`` filter.
            clock: Monotonic seconds for typing rhythm and debounce (injectable for tests).
            reuse_grace_s: How long an unwatched generation streams on (to be attached to).
            load_window_s: A request unanswered for this long may be loading the model: a
                cancel then waits for its answer to start (see ``Generation.cancel``).
            codebase: The index of a file's workspace, or None while it is off or not built
                (``codebase_context``); None: no definitions are added.
        """
        self._backend = backend
        self._documents = documents
        self.ignore = ignore
        """The ``.qodeassistignore`` filter; may be set once the workspace root is known."""
        self._clock = clock
        self.reuse_grace_s = reuse_grace_s
        """Seconds an unwaited generation keeps streaming for a follow-up to attach."""
        self.load_window_s = load_window_s
        """Seconds after which an unanswered request is not cut off (a model load)."""
        self.stats = CompletionStats()
        self._typing = TypingCounter(clock)
        self._debouncer = AdaptiveDebouncer(clock)
        self._cache = TypedAheadCache()
        self._headers = HeaderCache()
        self._pending: dict[str, PendingRequest] = {}
        self._generations: dict[str, Generation] = {}
        self._upstream: dict[str, Generation] = {}
        """The latest generation per provider instance (one slot: one request at a time)."""
        self._asked_again = 0
        """Generations that asked the model a second time (``ask_again``)."""
        self.upstream_listeners: list[Callable[[str, bool], None]] = []
        """Told ``(instance, busy)`` when a generation takes or frees a provider instance."""
        self._issued = IssuedItems()
        self._custom: list[CustomLanguage] | None = None
        self._stand_down = StandDown(lambda: self._backend.sessions)
        self._ring = ExtraContextRing(documents, is_ignored=self._is_ignored)
        self._planner = PromptPlanner(
            documents,
            self._headers,
            self._ring,
            self._is_ignored,
            lambda profile: serves_locally(self._backend.configuration, profile),
            CodebaseContext(codebase),
            held=self._ignores_held,
        )
        self._warmer = CacheWarmer(
            documents,
            self._planner,
            backend,
            launch=lambda profile, anchor, plan: self._launch(profile, anchor, plan, warm=True),
            busy=lambda instance: instance in self._upstream,
            is_ignored=self._is_ignored,
        )
        self._prefetch = AcceptPrefetch(
            self._planner,
            backend,
            launch=self._launch_for_document,
            may_start=lambda agent: self._stand_down.check(agent) is None,
        )
        documents.add_listener(self._on_document)
        documents.add_listener(self._ring.on_document)
        self._sync_documents(self._backend.settings.section(COMPLETION_SETTINGS))
        documents.add_cursor_listener(self._warmer.arm)
        for document in documents:  # opened before the service existed (it starts lazily)
            self._warmer.arm(document.uri, None, opened=True)

    # -- public API ----------------------------------------------------------------------------
    async def complete(self, request: CompletionRequest) -> CompletionResult:
        """Answer one completion request (cancellable at every await)."""
        uri = request.document.uri
        pending = PendingRequest()
        previous = self._pending.get(uri)
        if previous is not None:
            previous.supersede()
        self._pending[uri] = pending
        started = asyncio.get_running_loop().time()
        try:
            result = await self._complete(request, pending, started)
        except asyncio.CancelledError:
            self.stats.record(Outcome.CANCELLED)
            raise
        finally:
            if self._pending.get(uri) is pending:
                del self._pending[uri]
            self._warmer.arm(uri, request.line, request.character)
        if result.items:
            self._debouncer.note_answer_shown()
            self._prefetch.shown(request, result, self._documents.get(uri))
        elapsed = (asyncio.get_running_loop().time() - started) * 1000.0
        result = dataclasses.replace(result, elapsed_ms=elapsed)
        latency = elapsed if result.outcome in _MODEL_OUTCOMES else None
        self.stats.record(
            result.outcome, agent=result.agent, latency_ms=latency, error=result.error
        )
        log.debug("completion %s: %s %s (%.1f ms)", uri, result.outcome, result.reason, elapsed)
        return result

    @property
    def codebase(self) -> CodebaseLookup | None:
        """The index of a file's workspace (``codebase_context``); None: no definitions."""
        return self._planner.codebase.lookup

    @codebase.setter
    def codebase(self, lookup: CodebaseLookup | None) -> None:
        self._planner.codebase.lookup = lookup
        self._planner.codebase.clear()

    def accept(self, item_id: str) -> bool:
        """Record that the suggestion ``item_id`` was accepted (``qodeassist.accepted``)."""
        agent = self._issued.accepted(item_id)
        if agent is None:
            return False
        self.stats.record_accepted(agent)
        return True

    def status(self) -> dict[str, Any]:
        """Return the completion part of ``qodeassist/status`` (camelCase JSON)."""
        data = self.stats.to_json()
        data["inFlight"] = sum(1 for g in self._generations.values() if not g.done.done())
        data["cachedSuggestions"] = len(self._cache)
        data["typingIntervalMs"] = self._debouncer.typical_interval_ms
        data["warmUps"] = self._warmer.warm_ups
        data["prefetches"] = self._prefetch.started
        data["prefetchesAccepted"] = self._prefetch.accepted
        data["askedAgain"] = self._asked_again
        return data

    def reset(self) -> None:
        """Drop cached suggestions and cancel running generations (configuration reloaded)."""
        self._cache.clear()
        self._prefetch.clear()
        self._planner.codebase.clear()
        for generation in list(self._generations.values()):
            generation.cancel()

    def close(self) -> None:
        """Stop listening to documents and cancel everything in flight."""
        self._documents.remove_listener(self._on_document)
        self._documents.remove_listener(self._ring.on_document)
        self._documents.remove_cursor_listener(self._warmer.arm)
        for pending in list(self._pending.values()):
            pending.supersede()
        self._warmer.cancel()
        self.reset()

    # -- the request path ----------------------------------------------------------------------
    async def _complete(
        self, request: CompletionRequest, pending: PendingRequest, started: float
    ) -> CompletionResult:
        settings = self._backend.settings
        cs = settings.section(COMPLETION_SETTINGS)
        self._sync_documents(cs)
        document = request.document
        uri = document.uri
        invoked = request.trigger is TriggerKind.INVOKED
        if not settings.general.enabled:
            return CompletionResult(outcome=Outcome.DISABLED, reason="[general] enabled = false")
        if not invoked and (cs.mode == "manual" or not cs.auto_completion):
            return CompletionResult(outcome=Outcome.DISABLED, reason="automatic completion is off")
        if self._is_ignored(document):
            return CompletionResult(outcome=Outcome.IGNORED, reason=".qodeassistignore")
        cursor = Cursor.at_position(document.text, request.line, request.character, request.offset)

        if cs.typed_ahead_cache:
            hit = self._cache.lookup(uri, cursor.line, cursor.line_before, cursor.line_after)
            if hit is not None:
                self._cancel_generation_unless_serving(uri, cursor)
                items = self._items(hit.texts, cursor, cs, invoked, hit.agent)
                return CompletionResult(items, Outcome.TYPED_AHEAD, agent=hit.agent)

        running = self._generations.get(uri)
        if running is not None:
            typed = await verdict(running, cursor, pending)
            if pending.superseded.done():
                return CompletionResult(outcome=Outcome.SUPERSEDED, reason="a newer request")
            if typed is not None:
                return await answer(
                    running, typed, cursor, cs, invoked, pending, started, self._items, reused=True
                )
            running.supersede()

        eager = False
        if not invoked:
            typed_count = self._typing.count(
                uri, ignore_whitespace=cs.ignore_whitespace_in_char_count
            )
            decision = evaluate_trigger(cs, cursor.line_before, cursor.line_after, typed_count)
            if not decision.allowed:
                return CompletionResult(outcome=Outcome.SUPPRESSED, reason=decision.reason)
            eager = decision.eager
        configuration = self._backend.configuration
        profile = route(configuration, request)
        if isinstance(profile, CompletionResult):
            return profile
        if not invoked:
            local = serves_locally(configuration, profile)
            delay = self._debouncer.remaining_s(cs, eager=eager, local=local)
            if delay > 0 and await pending.wait(delay):
                return CompletionResult(outcome=Outcome.SUPERSEDED, reason="a newer request")
            current = self._documents.get(uri)
            if current is not None and current.version != document.version:
                return CompletionResult(outcome=Outcome.SUPERSEDED, reason="document changed")
        if self._backend.configuration is not configuration:  # reloaded during the debounce
            profile = route(self._backend.configuration, request)
            if isinstance(profile, CompletionResult):
                return profile
        generation = self._start(request, profile, cursor, cs)
        if isinstance(generation, CompletionResult):
            return generation
        return await answer(generation, "", cursor, cs, invoked, pending, started, self._items)

    def _start(
        self,
        request: CompletionRequest,
        profile: AgentProfile,
        cursor: Cursor,
        cs: CompletionSettings,
    ) -> Generation | CompletionResult:
        document = request.document
        if request.trigger is TriggerKind.AUTOMATIC:
            stand_down = self._stand_down.check(profile.name)
            if stand_down is not None:
                return stand_down
        plan = self._planner.plan(profile, document, cursor, cs)
        anchor = Anchor(document.uri, cursor.line, cursor.line_before, cursor.line_after)
        return self._launch_for_document(profile, anchor, plan)

    def _launch_for_document(
        self, profile: AgentProfile, anchor: Anchor, plan: PromptPlan
    ) -> Generation:
        generation = self._launch(profile, anchor, plan)
        self._generations[anchor.uri] = generation
        return generation

    def _launch(
        self, profile: AgentProfile, anchor: Anchor, plan: PromptPlan, *, warm: bool = False
    ) -> Generation:
        """Start a generation once the provider instance's previous one has closed its stream."""
        sessions = self._backend.sessions
        agent = profile.name
        instance = effective_instance(self._backend.configuration, profile)
        previous = self._upstream.get(instance)
        if previous is not None and previous.done.done():
            previous = None
        elif previous is not None:
            previous.supersede()
        generation = Generation(
            anchor,
            agent,
            lambda: sessions.acquire(agent, CODE_COMPLETION),
            plan.context,
            layer=plan.layer,
            language=plan.language,
            postprocessor=plan.postprocessor,
            grace_s=self.reuse_grace_s,
            on_done=self._generation_done,
            after=previous,
            load_window_s=self.load_window_s,
            warm=warm,
        )
        self._upstream[instance] = generation
        self._tell_upstream(instance, True)
        self._warmer.note_sent(instance, agent, plan.context)
        generation.one_slot = serves_locally(self._backend.configuration, profile)
        generation.start()
        return generation

    def _items(
        self,
        texts: Sequence[str],
        cursor: Cursor,
        cs: CompletionSettings,
        invoked: bool,
        agent: str,
    ) -> tuple[CompletionItem, ...]:
        return self._issued.issue(texts, cursor, cs.max_items_invoked if invoked else 1, agent)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _generation_done(self, generation: Generation) -> None:
        anchor = generation.anchor
        if generation.asked_again:
            self._asked_again += 1
        if self._generations.get(anchor.uri) is generation:
            del self._generations[anchor.uri]
        for instance, latest in list(self._upstream.items()):
            if latest is generation:
                del self._upstream[instance]
                self._tell_upstream(instance, False)
        if generation is not self._prefetch.waiting(anchor.uri):  # put once it is accepted
            self._remember(generation)

    def _remember(self, generation: Generation) -> None:
        """Put the answer of ``generation``, ended, in the typed-ahead cache."""
        if generation.error is not None or not generation.reusable or generation.cancelled:
            return
        anchor = generation.anchor
        cs = self._backend.settings.section(COMPLETION_SETTINGS)
        if not cs.typed_ahead_cache:
            return
        texts = alternatives(generation.result().text, cs.max_items_invoked)
        self._cache.put(
            anchor.uri, anchor.line, anchor.line_before, anchor.line_after, texts, generation.agent
        )

    def _tell_upstream(self, instance: str, busy: bool) -> None:
        for listener in list(self.upstream_listeners):
            try:
                listener(instance, busy)
            except Exception:  # another feature's bookkeeping must not break completion
                log.exception("upstream listener failed")

    def _cancel_generation_unless_serving(self, uri: str, cursor: Cursor) -> None:
        running = self._generations.get(uri)
        if (
            running is not None
            and running is not self._prefetch.waiting(uri)  # ends with any other edit
            and running.serves(cursor.line, cursor.line_before, cursor.line_after) is None
        ):
            running.cancel()

    def _on_document(self, event: DocumentEvent) -> None:
        uri = event.document.uri
        if event.kind is DocumentEventKind.OPENED:
            self._warmer.arm(uri, None, opened=True)
        elif event.kind is DocumentEventKind.CHANGED:
            self._warmer.postpone()
        if event.kind is DocumentEventKind.CLOSED:
            self._prefetch.cancel(uri)
            self._warmer.forget(uri)
            self._typing.reset(uri)
            self._cache.forget(uri)
            self._headers.forget(uri)
            self._planner.forget(uri)
            running = self._generations.get(uri)
            if running is not None:
                running.cancel()
            pending = self._pending.get(uri)
            if pending is not None:
                pending.supersede()
            return
        if event.kind is not DocumentEventKind.CHANGED or not event.edits:
            return
        accepted = self._prefetch.on_change(uri, event.document.text)
        window_s = self._backend.settings.section(COMPLETION_SETTINGS).typing_interval_ms / 1000.0
        for edit in event.edits:
            self._typing.note_insert(uri, edit.inserted, window_s)
        self._debouncer.note_keystroke()
        self._cache.note_edits(uri, event.edits)
        if accepted is not None and accepted.done.done():
            self._remember(accepted)
        running = self._generations.get(uri)
        if (
            running is not None
            and accepted is None
            and running is not self._prefetch.waiting(uri)
            and any(edit.multiline or edit.line != running.anchor.line for edit in event.edits)
        ):
            running.reusable = False

    def _is_ignored(self, document: Document) -> bool:
        return (
            bool(document.path)
            and self.ignore is not None
            and self.ignore.is_ignored(document.path)
        )

    def _ignores_held(self) -> AbstractContextManager[None]:
        """Return a scope checking the folders and ignore files once (for one prompt)."""
        return self.ignore.held() if self.ignore is not None else contextlib.nullcontext()

    def _sync_documents(self, cs: CompletionSettings) -> None:
        """Follow settings that shape long-lived state (changes cache size, languages)."""
        if self._documents.max_changes != cs.max_changes_cache_size:
            self._documents.max_changes = cs.max_changes_cache_size
        self._ring.configure(
            chunk_lines=cs.extra_context_chunk_lines,
            max_chunks=cs.extra_context_chunks,
            max_tokens=cs.extra_context_tokens,
        )
        if self._custom != cs.custom_languages:
            self._custom = list(cs.custom_languages)
            self._planner.languages = LanguageTable(cs.custom_languages)


_MODEL_OUTCOMES = frozenset({Outcome.MODEL, Outcome.REUSED, Outcome.EMPTY, Outcome.TIMEOUT})
