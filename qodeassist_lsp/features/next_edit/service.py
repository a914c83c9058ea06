"""``NextEditService``: one next-edit suggestion, from cursor to edit, within a time budget.

A request (the editor's ``textDocument/copilotInlineEdit``) or an edit pause (``edit_pause_ms``
after the last change, at the end of the newest edit) starts a *job*: gather the context, build
the prompt in the agent's format, ask the model, parse the rewritten window and diff it into
the smallest edit. A request whose document, version and cursor line match a job already
running or finished (the edit-pause prefetch) waits for that job instead of starting another.

Rules that keep it honest and cheap:

- typing cancels: a change of the document cancels its job (its answer would be stale);
- one job per provider instance at a time: a new one cancels the previous one on the same
  instance (a local model server has one slot), and ``yield_to`` tells the service that
  another feature (inline completion, whose ghost text comes first) is using an instance: a
  next edit waits for the instance (within its budget) and never queues in front of it, so a
  request right after an accepted completion is answered once that completion's work is done;
- every request is answered within ``time_budget_ms``: a model that is later gives an empty
  answer and its request is cancelled;
- no suggestion for an unchanged window (or an empty answer), an edit that only undoes the
  user's last edit, or a malformed answer; an answer that stops before the window's end never
  deletes the lines it left out (``fit_to_window``); the answer's line breaks (CRLF or LF)
  become the document's; an edit carries the version it was computed on and is rebased onto a
  newer text only when that is exact, else dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.config.pipelines import NEXT_EDIT
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.context.codebase.model import CodebaseIndex
from qodeassist_lsp.context.documents import (
    Document,
    DocumentEvent,
    DocumentEventKind,
    DocumentStore,
    line_end_offset,
    line_start_offset,
)
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.next_edit.asking import ask
from qodeassist_lsp.features.next_edit.definitions import CodebaseLookup
from qodeassist_lsp.features.next_edit.gather import display_path, gather
from qodeassist_lsp.features.next_edit.model_formats import (
    parse_sweep_answer,
    parse_zeta_answer,
    sweep_prompt,
    zeta_prompt,
)
from qodeassist_lsp.features.next_edit.prompts import (
    NextEditContext,
    PromptFormat,
    chat_prompt,
    format_for,
    parse_chat_answer,
)
from qodeassist_lsp.features.next_edit.recent import RecentFiles
from qodeassist_lsp.features.next_edit.results import (
    NextEditRequest,
    NextEditResult,
    Outcome,
    SuggestedEdit,
)
from qodeassist_lsp.features.next_edit.rewrite import rebase, smallest_change, undoes
from qodeassist_lsp.features.next_edit.settings import NEXT_EDIT_SETTINGS
from qodeassist_lsp.features.next_edit.stats import NextEditStats
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

__all__ = ["NextEditService"]

log = logging.getLogger("qodeassist.next_edit")

_PROMPTS = {PromptFormat.CHAT: chat_prompt, PromptFormat.SWEEP: sweep_prompt}
_PROMPTS[PromptFormat.ZETA] = zeta_prompt
_PARSERS = {PromptFormat.CHAT: parse_chat_answer, PromptFormat.SWEEP: parse_sweep_answer}
_PARSERS[PromptFormat.ZETA] = parse_zeta_answer


_RETRY = frozenset({Outcome.YIELDED, Outcome.ERROR, Outcome.SUPERSEDED})
"""Outcomes a later request for the same cursor does not share: it asks again."""


@dataclass(eq=False)
class _Job:
    """One computation of a next edit for a document version and cursor line."""

    uri: str
    version: int
    line: int
    instance: str = ""
    waiting: bool = False
    """Waiting for its provider instance, which another feature is using."""
    task: asyncio.Task[NextEditResult] | None = field(default=None, repr=False)

    def matches(self, request: NextEditRequest) -> bool:
        document = request.document
        return (self.uri, self.version, self.line) == (document.uri, document.version, request.line)

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()


class NextEditService:
    """Computes next edits; follows the documents for the history, prefetch and cancels."""

    def __init__(
        self,
        backend: RuntimeView,
        documents: DocumentStore,
        *,
        settings: Callable[[], Settings] | None = None,
        is_ignored: Callable[[Document], bool] | None = None,
        is_ready: Callable[[], bool] = lambda: True,
        codebase: CodebaseLookup | None = None,
    ) -> None:
        """Serve next edits from ``backend``'s agents for the ``documents``.

        ``is_ready`` says whether the configuration is loaded (no prefetch before);
        ``codebase``: the index of a file's workspace, or None while it is off or not built
        (the code behind the newest edit joins the prompt).
        """
        self._backend = backend
        self._documents = documents
        self._settings = settings or (lambda: backend.settings)
        self._is_ignored = is_ignored or (lambda _document: False)
        self._is_ready = is_ready
        self.codebase = codebase
        """The index of a file's workspace (``definitions``); None: no definitions."""
        self._recent = RecentFiles(documents, self._name, self._ignored)
        self._jobs: dict[str, _Job] = {}
        self._upstream: dict[str, _Job] = {}
        self._busy_elsewhere: set[str] = set()
        self._free: dict[str, asyncio.Event] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self.stats = NextEditStats()
        documents.add_listener(self._recent.on_document)
        documents.add_listener(self._on_document)

    # -- public API ----------------------------------------------------------------------------
    async def suggest(self, request: NextEditRequest) -> NextEditResult:
        """Answer one next-edit request within the time budget (cancellable)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        result = await self._suggest(request)
        result = replace(result, elapsed_ms=(loop.time() - started) * 1000.0)
        self.stats.record(result)
        log.debug(
            "next edit %s: %s %s (%.1f ms)",
            request.document.uri,
            result.outcome,
            result.reason,
            result.elapsed_ms,
        )
        return result

    def focus(self, uri: str) -> None:
        """Note that the editor focused ``uri`` (``textDocument/didFocus``)."""
        if uri in self._documents:
            self._recent.touch(uri)

    def yield_to(self, instance: str, busy: bool) -> None:
        """Tell the service another feature is (or no longer is) using provider ``instance``."""
        free = self._free.setdefault(instance, asyncio.Event())
        if busy:
            self._busy_elsewhere.add(instance)
            free.clear()
            running = self._upstream.get(instance)
            if running is not None:
                running.cancel()
        else:
            self._busy_elsewhere.discard(instance)
            free.set()

    def status(self) -> dict[str, object]:
        """Return the next-edit part of ``qodeassist/status``."""
        data = self.stats.to_json()
        data["pipeline"] = list(self._backend.configuration.pipelines.roster(NEXT_EDIT))
        data["inFlight"] = sum(1 for j in self._jobs.values() if j.task and not j.task.done())
        return data

    def reset(self) -> None:
        """Forget prepared answers (configuration reloaded); requests waiting still get theirs."""
        self._jobs.clear()

    def close(self) -> None:
        """Stop following the documents and cancel everything."""
        self._documents.remove_listener(self._on_document)
        self._documents.remove_listener(self._recent.on_document)
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for job in list(self._jobs.values()):
            job.cancel()
        self._jobs.clear()

    # -- one request ---------------------------------------------------------------------------
    async def _suggest(self, request: NextEditRequest) -> NextEditResult:
        settings = self._settings().section(NEXT_EDIT_SETTINGS)
        document = request.document
        if not settings.enabled:
            return NextEditResult(Outcome.DISABLED, reason="next_edit.enabled is false")
        if self._ignored(document):
            return NextEditResult(Outcome.IGNORED, reason=".qodeassistignore")
        job = self._jobs.get(document.uri)
        if job is None or not job.matches(request) or not _reusable(job):
            job = self._start(request)
        assert job.task is not None
        budget = settings.time_budget_ms / 1000.0
        try:
            done, _pending = await asyncio.wait([job.task], timeout=budget)
        except asyncio.CancelledError:
            job.cancel()
            raise
        if not done:
            job.cancel()
            if job.waiting:
                reason = f"the provider stayed busy with another feature for {budget:g} s"
                return NextEditResult(Outcome.YIELDED, reason=reason)
            return NextEditResult(Outcome.LATE, reason=f"no answer within {budget:g} s")
        if job.task.cancelled():
            return NextEditResult(Outcome.SUPERSEDED, reason="the document or provider moved on")
        return self._current(job.task.result())

    def _current(self, result: NextEditResult) -> NextEditResult:
        """Return ``result`` with its edits on the document as it is now (rebased or dropped)."""
        kept: list[SuggestedEdit] = []
        for edit in result.edits:
            document = self._documents.get(edit.uri)
            if document is None:
                continue
            if document.version == edit.version:
                kept.append(edit)
                continue
            change = rebase(edit.change, edit.text_before, document.text)
            if change is not None:
                kept.append(replace(edit, change=change, version=document.version))
        if result.edits and not kept:
            return replace(result, outcome=Outcome.STALE, edits=(), reason="the document changed")
        return replace(result, edits=tuple(kept))

    def _start(self, request: NextEditRequest) -> _Job:
        document = request.document
        old = self._jobs.get(document.uri)
        if old is not None:
            old.cancel()
        job = _Job(document.uri, document.version, request.line)
        job.task = asyncio.create_task(self._compute(job, request), name="qa-next-edit")
        self._jobs[document.uri] = job
        return job

    async def _compute(self, job: _Job, request: NextEditRequest) -> NextEditResult:
        configuration = self._backend.configuration
        document = request.document
        profile = self._pick(configuration.pipelines.roster(NEXT_EDIT), document)
        if isinstance(profile, NextEditResult):
            return profile
        instance = effective_instance(configuration, profile)
        while instance in self._busy_elsewhere:  # inline completion's turn: wait for it
            job.waiting = True
            await self._free[instance].wait()
        job.waiting = False
        previous = self._upstream.get(instance)
        if previous is not None and previous is not job:
            previous.cancel()  # one request per provider instance
        job.instance = instance
        self._upstream[instance] = job
        try:
            return await self._run(job, request, profile)
        finally:
            if self._upstream.get(instance) is job:
                del self._upstream[instance]

    async def _run(
        self, job: _Job, request: NextEditRequest, profile: AgentProfile
    ) -> NextEditResult:
        document = request.document
        settings = self._settings().section(NEXT_EDIT_SETTINGS)
        ctx = gather(
            self._documents,
            document,
            (request.line, request.character),
            settings,
            self._recent,
            self._name,
            self._ignored,
            request.diagnostics,
            index=self._index_of(document),
        )
        kind = format_for(profile)
        prompt = _PROMPTS[kind](ctx)
        sessions = self._backend.sessions
        answer = await ask(profile.name, lambda: sessions.acquire(profile.name, NEXT_EDIT), prompt)
        if answer.error is not None:
            return NextEditResult(
                Outcome.ERROR, agent=answer.agent, reason="provider", error=answer.error
            )
        return self._edit(document, ctx, kind, answer.text, answer.agent)

    def _edit(
        self, document: Document, ctx: NextEditContext, kind: PromptFormat, text: str, agent: str
    ) -> NextEditResult:
        # The window's lines carry no line breaks; the edit gets the document's (smallest_change).
        rewritten = _PARSERS[kind](text.replace("\r\n", "\n"), ctx.window)
        if rewritten is None:
            return NextEditResult(Outcome.MALFORMED, agent=agent, reason="no complete rewrite")
        change = smallest_change(document.text, ctx.window, rewritten)
        if change is None:
            return NextEditResult(Outcome.NO_CHANGE, agent=agent, reason="nothing to change")
        if undoes(document.text, change, self._documents.edit_history.last(document.uri)):
            return NextEditResult(Outcome.UNDO, agent=agent, reason="only undoes the last edit")
        edit = SuggestedEdit.issue(document, change, agent)
        return NextEditResult(Outcome.SUGGESTED, agent=agent, edits=(edit,))

    def _pick(self, roster: tuple[str, ...], document: Document) -> AgentProfile | NextEditResult:
        configuration = self._backend.configuration
        project = configuration.paths.project
        for name in roster:
            profile = configuration.agents.get(name)
            if profile is not None and profile.match.accepts(
                document.path or document.uri, project.name if project else ""
            ):
                return profile
        message = (
            "no next-edit agent is configured; set pipelines.next_edit"
            if not roster
            else "no next-edit agent accepts this file: none of "
            + ", ".join(repr(n) for n in roster)
            + " is loaded with a [match] that accepts it"
        )
        return NextEditResult(
            Outcome.ERROR, reason="no agent", error=ErrorInfo(ErrorCategory.CONFIG, message)
        )

    # -- documents -----------------------------------------------------------------------------
    def _on_document(self, event: DocumentEvent) -> None:
        uri = event.document.uri
        if event.kind is DocumentEventKind.OPENED:
            return
        job = self._jobs.pop(uri, None)
        if job is not None:
            job.cancel()  # typing cancels: the answer would be for an old version
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        if event.kind is DocumentEventKind.CHANGED:
            self._arm(event.document)

    def _arm(self, document: Document) -> None:
        """Compute the next edit once the document has been still for ``edit_pause_ms``."""
        settings = self._settings().section(NEXT_EDIT_SETTINGS)
        if not settings.enabled or settings.edit_pause_ms <= 0 or not self._is_ready():
            return
        last = self._documents.edit_history.last(document.uri)
        if last is None or self._ignored(document):
            return
        line = max(last.start, last.end - 1)
        loop = asyncio.get_running_loop()
        self._timers[document.uri] = loop.call_later(
            settings.edit_pause_ms / 1000.0, self._prefetch, document.uri, document.version, line
        )

    def _prefetch(self, uri: str, version: int, line: int) -> None:
        self._timers.pop(uri, None)
        document = self._documents.get(uri)
        if document is None or document.version != version:
            return
        running = self._jobs.get(uri)
        if running is not None and running.version == version and _reusable(running):
            return  # the editor already asked about this version
        text = document.text
        start = line_start_offset(text, line)
        column = line_end_offset(text, start) - start
        job = self._start(NextEditRequest(document, line, column))
        assert job.task is not None
        job.task.add_done_callback(_retrieve)

    def _index_of(self, document: Document) -> CodebaseIndex | None:
        if self.codebase is None or not document.path:
            return None
        try:
            return self.codebase(Path(document.path))
        except Exception:  # the prompt goes without definitions, never without an answer
            log.exception("the codebase index of %s failed", document.path)
            return None

    def _name(self, document: Document) -> str:
        return display_path(document, self._backend.configuration.paths.project)

    def _ignored(self, document: Document) -> bool:
        return self._is_ignored(document)


def _reusable(job: _Job) -> bool:
    """Whether ``job`` is running or ended with an answer another request may share."""
    task = job.task
    if task is None or task.cancelled() or task.cancelling():
        return False  # cancelling: a request that just gave up on it (its budget) ended it
    if not task.done():
        return True
    return task.exception() is None and task.result().outcome not in _RETRY


def _retrieve(task: asyncio.Task[NextEditResult]) -> None:
    """Consume a prefetch's outcome so that a failure is logged, not left unretrieved."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("next-edit prefetch failed: %s", task.exception())
