"""``RefactorService``: one quick refactor of a selection through the refactor pipeline.

The flow is the original ``QuickRefactorHandler``'s: the ``pipelines.quick_refactor`` agent (or
an instruction's own agent) lends a pooled session, the ``refactor`` system layer describes the
selection, the user message is the instruction, and the last assistant text is cleaned into the
replacement. What the port adds is safety: the document version is captured when the request
starts and a result for an edited (or closed) document is never offered; an empty answer never
deletes code; the replaced range is exactly the selection (the original replaced the rest of
the line on multi-line inserts); a selection of whole lines keeps its last line break. The
service returns a result and applies nothing — the LSP layer turns an ``ok`` result into one
labelled ``WorkspaceEdit``. ``CancelledError`` is never swallowed: cancelling the caller's task
cancels the session's request and its HTTP stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import QUICK_REFACTOR
from qodeassist_lsp.context import rules_files
from qodeassist_lsp.context.documents import Document, DocumentStore, position_at
from qodeassist_lsp.core.agent import AgentNotAvailable
from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import CancelledEvent, FailedEvent, TextEvent, ToolCallEvent
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.refactor.cleaner import clean_response
from qodeassist_lsp.features.refactor.guard import ResultGuard, Verdict
from qodeassist_lsp.features.refactor.instructions import Instruction, default_instruction
from qodeassist_lsp.features.refactor.prompt import (
    CURSOR,
    SELECTION_END,
    SELECTION_START,
    Selection,
    build_refactor_layer,
)
from qodeassist_lsp.features.refactor.settings import REFACTOR_SETTINGS
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

__all__ = [
    "DEFAULT_INSTRUCTION",
    "REFACTOR_LAYER",
    "LastInstruction",
    "Outcome",
    "RefactorRequest",
    "RefactorResult",
    "RefactorService",
    "replacement_text",
]

log = logging.getLogger("qodeassist.refactor")

REFACTOR_LAYER: Final = "refactor"
REFACTOR_LAYER_PRIORITY: Final = 100
DEFAULT_INSTRUCTION: Final = "Refactor the code to improve its quality and maintainability."
"""The original's instruction when the user gave none and the library has no default."""
_STRAY_MARKERS: Final = (SELECTION_START, SELECTION_END, CURSOR, "</cursor>")

Outcome = Literal["ok", "refused", "empty", "stale", "failed", "cancelled"]
"""``ok``: apply ``new_text`` to the range; anything else: apply nothing, tell ``message``.

``refused``: the guard judged ``new_text`` unfit (``verdict`` says why); it is kept so that the
user can see it as a diff and apply it anyway."""


@dataclass(frozen=True, slots=True)
class RefactorRequest:
    """Refactor a range of a document (0-based, code points); an empty range inserts."""

    document: Document
    start_line: int
    start_character: int
    end_line: int
    end_character: int
    instruction: str | None = None
    """The user's own words (appended to the library instruction when both are given)."""
    instruction_id: str | None = None
    """An instruction of the library (its body, and its agent override)."""
    cursor_at_start: bool = False
    """The selection was made backwards: ``<cursor>`` goes before it."""


@dataclass(frozen=True, slots=True)
class RefactorResult:
    """What a refactor produced; only an ``ok`` result may be applied."""

    outcome: Outcome
    new_text: str
    start_line: int
    start_character: int
    end_line: int
    end_character: int
    agent: str
    document_version: int
    message: str
    error: ErrorInfo | None = None
    verdict: Verdict | None = None
    """Why a ``refused`` result was refused."""


@dataclass(frozen=True, slots=True)
class LastInstruction:
    """The instruction of the last refactor sent, for "repeat last"."""

    instruction: str | None
    instruction_id: str | None


class RefactorService:
    """Runs quick refactors; holds the instruction library accessor and the last instruction."""

    def __init__(
        self,
        backend: RuntimeView,
        documents: DocumentStore,
        instructions: Callable[[], list[Instruction]] | None = None,
        *,
        is_ignored: Callable[[Document], bool] | None = None,
        guard: ResultGuard | None = None,
        rules: rules_files.RulesFinder | None = None,
    ) -> None:
        """Create the service.

        Args:
            backend: The ``Runtime`` (configuration and sessions are read per request).
            documents: The open documents (the version guard reads the current version here).
            instructions: Returns the current instruction library; default: none.
            is_ignored: Documents never sent: refused, and left out of the open-files context.
            guard: Judges answers before they are offered; default: a ``ResultGuard``.
            rules: Finds the project's rules files for the document; default: none.
        """
        self._backend = backend
        self._documents = documents
        self._instructions = instructions or list
        self._is_ignored = is_ignored or (lambda _document: False)
        self._last: LastInstruction | None = None
        self._guard = guard or ResultGuard()
        self._rules = rules

    @property
    def last_instruction(self) -> LastInstruction | None:
        """The instruction of the last refactor that was sent, or ``None``."""
        return self._last

    def list_instructions(self) -> list[Instruction]:
        """Return the instruction library, sorted by name."""
        return list(self._instructions())

    def _find(self, instruction_id: str) -> Instruction | None:
        return next((i for i in self._instructions() if i.id == instruction_id), None)

    async def refactor(
        self, request: RefactorRequest, progress: Callable[[str], None] | None = None
    ) -> RefactorResult:
        """Run one refactor and return its result (nothing is applied here)."""
        document = request.document
        version = document.version
        selection = Selection.of(
            document,
            request.start_line,
            request.start_character,
            request.end_line,
            request.end_character,
            request.cursor_at_start,
        )
        start = position_at(document.text, selection.start)
        end = position_at(document.text, selection.end)

        def result(
            outcome: Outcome,
            message: str,
            agent: str = "",
            new_text: str = "",
            error: ErrorInfo | None = None,
            verdict: Verdict | None = None,
        ) -> RefactorResult:
            return RefactorResult(
                outcome, new_text, *start, *end, agent, version, message, error, verdict
            )

        def failed(category: ErrorCategory, message: str, agent: str = "") -> RefactorResult:
            return result("failed", message, agent, error=ErrorInfo(category, message))

        if self._is_ignored(document):
            return failed(
                ErrorCategory.VALIDATION,
                f"{Path(document.path or document.uri).name} is excluded by .qodeassistignore; "
                "its code is never sent to a model (remove it from .qodeassistignore to refactor)",
            )
        library = None
        if request.instruction_id:
            library = self._find(request.instruction_id)
            if library is None:
                known = ", ".join(i.id for i in self._instructions()) or "none"
                return failed(
                    ErrorCategory.VALIDATION,
                    f"unknown instruction {request.instruction_id!r} (known: {known})",
                )
        configuration = self._backend.configuration
        agent = (library.agent if library else None) or configuration.pipelines.agent(
            QUICK_REFACTOR
        )
        if not agent:
            return failed(
                ErrorCategory.CONFIG,
                "no quick refactor agent configured: set quick_refactor in pipelines.toml",
            )
        text = self._instruction_text(request, library, configuration)
        self._last = LastInstruction(request.instruction, request.instruction_id)
        layer = build_refactor_layer(
            document,
            selection,
            configuration.settings.section(REFACTOR_SETTINGS),
            self._open_files(document),
        )
        if progress is not None:
            progress(f"Refactoring with {agent}…")
        try:
            answer = await self._ask(agent, layer, self._rules_of(document), text, progress)
        except AgentNotAvailable as exc:
            return failed(ErrorCategory.CONFIG, f"quick refactor agent {agent!r}: {exc}", agent)
        if isinstance(answer, CancelledEvent):
            return result("cancelled", "the refactor was cancelled", agent)
        if isinstance(answer, FailedEvent):
            return result("failed", answer.error.message, agent, error=answer.error)
        current = self._documents.get(document.uri)
        if current is None:
            return result("stale", "the document was closed while the refactor ran", agent)
        if current.version != version:
            return result(
                "stale",
                "the document changed while the refactor ran; nothing was applied",
                agent,
            )
        cleaned = replacement_text(answer, document.text, selection.start, selection.end)
        if not cleaned.strip():
            return result("empty", "the model returned no usable code; nothing was changed", agent)
        verdict = self._guard.check(
            document.text,
            selection.start,
            selection.end,
            cleaned,
            language_id=document.language_id,
            path=document.path,
            instruction=text,
        )
        if verdict is not None:
            log.info("refused the answer of %s: %s", agent, verdict.reason)
            return result(
                "refused",
                f"the answer of {agent} was not applied: {verdict.reason}",
                agent,
                new_text=cleaned,
                verdict=verdict,
            )
        return result("ok", f"Refactored with {agent}", agent, new_text=cleaned)

    def _instruction_text(
        self,
        request: RefactorRequest,
        library: Instruction | None,
        configuration: Configuration,
    ) -> str:
        own = (request.instruction or "").strip()
        if library is not None:
            return f"{library.body}\n\n{own}" if own else library.body
        if own:
            return own
        configured = configuration.settings.section(REFACTOR_SETTINGS).default_instruction
        if configured and configured != DEFAULT_INSTRUCTION:
            return configured  # the user changed the setting: it beats the library's default
        fallback = default_instruction(self._instructions())
        if fallback is not None:
            return fallback.body
        return configured or DEFAULT_INSTRUCTION

    def _open_files(self, document: Document) -> list[Document]:
        return [d for d in self._documents if d.uri != document.uri and not self._is_ignored(d)]

    def _rules_of(self, document: Document) -> rules_files.RulesSet:
        if self._rules is None:
            return rules_files.RulesSet()
        return self._rules.find(Path(document.path) if document.path else None)

    async def _ask(
        self,
        agent: str,
        layer: str,
        rules: rules_files.RulesSet,
        instruction: str,
        progress: Callable[[str], None] | None,
    ) -> str | FailedEvent | CancelledEvent:
        async with self._backend.sessions.acquire(agent, QUICK_REFACTOR) as session:
            session.system_prompt.set_layer(REFACTOR_LAYER, layer, REFACTOR_LAYER_PRIORITY)
            rules_files.set_layer(session.system_prompt, rules)
            sent = session.send(user_text(instruction))
            try:
                receiving = False
                async for event in sent.events():
                    if progress is None:
                        continue
                    if isinstance(event, TextEvent) and not receiving:
                        receiving = True
                        progress("Receiving the answer…")
                    elif isinstance(event, ToolCallEvent):
                        progress(f"Running tool {event.name}…")
                terminal = await sent.wait()
            except asyncio.CancelledError:
                sent.cancel()
                raise
            if isinstance(terminal, (FailedEvent, CancelledEvent)):
                return terminal
            return session.history.last_assistant_text()


def replacement_text(answer: str, text: str, start: int, end: int) -> str:
    """Return the code ``answer`` puts in place of ``text[start:end]`` (may be blank).

    The answer is cleaned (``cleaner.py``) and stray markers are removed; new lines inserted
    before existing code end with a line break, and so does the replacement of whole lines.
    """
    cleaned = _without_markers(clean_response(answer))
    if not cleaned.strip():
        return cleaned
    if start == end and _starts_nonempty_line(text, start):
        # New lines inserted before existing code must not run into it.
        cleaned = cleaned if cleaned.endswith("\n") else cleaned + "\n"
    return _keep_line_break(text[start:end], cleaned)


def _without_markers(text: str) -> str:
    # Models sometimes echo the prompt's position markers around their code.
    for marker in _STRAY_MARKERS:
        text = text.replace(marker, "")
    return text


def _keep_line_break(selected: str, new_text: str) -> str:
    """End ``new_text`` with the line break a linewise selection ended with.

    A selection of whole lines ends at column 0 of the next line (Shift+Down, Vim's ``V``), so
    it holds its last line break; the cleaned answer never ends with one, and the next line
    would be joined onto it (``return a + bprint(…)``).
    """
    for line_break in ("\r\n", "\n", "\r"):
        if selected.endswith(line_break):
            return new_text if new_text.endswith(("\n", "\r")) else new_text + line_break
    return new_text


def _starts_nonempty_line(text: str, offset: int) -> bool:
    """Whether ``offset`` is at the start of a line that has code after it."""
    at_line_start = offset == 0 or text[offset - 1] == "\n"
    end = text.find("\n", offset)
    rest = text[offset : len(text) if end < 0 else end]
    return at_line_start and bool(rest.strip())
