"""Idle cache warming: what the next request will need is sent while the user is idle.

On a small local model, reading a prompt the server has not cached is seconds the user waits
for (about 5 ms a token on two cores: an 80-line window of Python is two to four seconds).
llama.vim sends its extra context with ``n_predict: 0`` when the user is idle; this does the same
for any agent on this machine (`ProviderInstance.is_local`: a cloud provider would bill the prompt).

After ``[completion] warm_idle_ms`` without an edit or a completion request (``OPEN_DELAY_MS``
after a document is opened, or a caret told right after that: the user is not typing in it
yet), the warmer plans a request at the last known cursor of the last active document: its last
completion request, or a caret the editor showed (``DocumentStore.note_cursor``: the
``qodeassist/didMoveCursor`` notification, a code-action request with an empty range), or, for
a document just opened, its end (where a file grows). What it sends depends on the agent's body:

- one that uses the extra-context ring (``ctx.files_metadata``): the ring, with an empty prefix
  and suffix, since the window moves with every key and the ring does not;
- any other (the Embedded Completion agent continues the last 80 lines before the cursor), with
  ``warm_cursor_window`` on and not in manual mode: the whole request at that cursor, so that
  the first key there reuses all but its own line (nothing when that window is empty).

The stream is closed at the first event (``Generation`` with ``warm=True``): by then the model
server has processed and cached the prompt. A completion request that comes meanwhile closes it
at once (``Generation.supersede``: the guess may be wrong, and llama.cpp keeps what it read).
Nothing is sent when the same prompt was the provider instance's last one; while a request to
it is running, the warm-up waits for another idle period.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.context.documents import Document, DocumentStore
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.completion.context_builder import CompletionContext, Cursor
from qodeassist_lsp.features.completion.extra_context import ExtraFile
from qodeassist_lsp.features.completion.generation import Anchor
from qodeassist_lsp.features.completion.prompt_plan import (
    PromptPlan,
    PromptPlanner,
    mentions,
    uses_extra_context,
)
from qodeassist_lsp.features.completion.requests import CompletionRequest, CompletionResult
from qodeassist_lsp.features.completion.routing import route, serves_locally
from qodeassist_lsp.features.completion.settings import COMPLETION_SETTINGS

__all__ = ["OPEN_DELAY_MS", "CacheWarmer", "Launch", "uses_extra_context"]

log = logging.getLogger("qodeassist.completion")

Launch = Callable[[AgentProfile, Anchor, PromptPlan], object]
"""Starts a warm-up generation for an agent (``CompletionService._launch`` with ``warm``)."""
_SUFFIX_NAMES = ("suffix", "fim_prompt(")
OPEN_DELAY_MS = 50
"""The wait after a document is opened: a burst of opens (a restored session) warms the last."""


class CacheWarmer:
    """Waits for the user to be idle, then sends the extra context to a local model server."""

    def __init__(
        self,
        documents: DocumentStore,
        planner: PromptPlanner,
        backend: RuntimeView,
        *,
        launch: Launch,
        busy: Callable[[str], bool],
        is_ignored: Callable[[Document], bool],
    ) -> None:
        """Warm through ``launch``; ``busy(instance)``: a request to it is still running."""
        self._documents = documents
        self._planner = planner
        self._backend = backend
        self._launch = launch
        self._busy = busy
        self._is_ignored = is_ignored
        self._sent: dict[str, tuple[str, tuple[ExtraFile, ...], str, str]] = {}
        self._target: tuple[str, int | None, int] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.warm_ups = 0
        """Warm-up requests sent (``qodeassist/status`` ``warmUps``)."""

    def note_sent(self, instance: str, agent: str, context: CompletionContext) -> None:
        """Remember the prompt last sent to provider ``instance`` (by any request)."""
        self._sent[instance] = (agent, context.extra, context.prefix, context.suffix)

    def arm(self, uri: str, line: int | None, character: int = 0, *, opened: bool = False) -> None:
        """Make ``uri`` at (line, character) the place to warm once idle (line None: unknown)."""
        pending = self._target if self._timer is not None else None
        # The caret of a document still waiting for its open's warm-up: as soon as that.
        opened = opened or (pending is not None and pending[0] == uri and pending[1] is None)
        self._target = (uri, line, character)
        self.postpone(opened=opened)

    def postpone(self, *, opened: bool = False) -> None:
        """Restart the idle timer (an edit or a request: the user is not idle)."""
        self.cancel()
        delay_ms = self._backend.settings.section(COMPLETION_SETTINGS).warm_idle_ms
        if self._target is None or delay_ms <= 0:
            return
        if opened:
            delay_ms = min(delay_ms, OPEN_DELAY_MS)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous caller): nothing can be sent anyway
        self._timer = loop.call_later(delay_ms / 1000.0, self._fire)

    def forget(self, uri: str) -> None:
        """Stop warming ``uri`` (closed)."""
        if self._target is not None and self._target[0] == uri:
            self._target = None
            self.cancel()

    def cancel(self) -> None:
        """Stop the idle timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        self._timer = None
        target, self._target = self._target, None  # once per idle period
        if target is None:
            return
        if not self._backend.loaded:  # opened before the configuration loaded: wait for it
            self.arm(*target)
            return
        try:
            self.warm(*target)
        except Exception:  # a warm-up is an optimisation: it must never break the server
            log.exception("cache warm-up for %s failed", target[0])

    def warm(self, uri: str, line: int | None, character: int = 0) -> bool:
        """Send what a completion at (line, character) of ``uri`` needs; True if it was sent."""
        settings = self._backend.settings
        cs = settings.section(COMPLETION_SETTINGS)
        document = self._documents.get(uri)
        if document is None or not settings.general.enabled or self._is_ignored(document):
            return False
        lines = document.text.split("\n")
        known = line is not None
        if line is None:  # just opened: its end
            line, character = len(lines) - 1, len(lines[-1])
        row = min(max(line, 0), len(lines) - 1)
        request = CompletionRequest(document, row, min(max(character, 0), len(lines[row])))
        configuration = self._backend.configuration
        profile = route(configuration, request)
        if isinstance(profile, CompletionResult) or not serves_locally(configuration, profile):
            return False
        ring = uses_extra_context(profile)
        if ring and cs.extra_context_chunks <= 0:
            return False
        if not ring and (not cs.warm_cursor_window or cs.mode == "manual"):
            return False
        instance = effective_instance(configuration, profile)
        if self._busy(instance):  # try again once it is idle
            self.arm(uri, None if not known else row, character)
            return False
        cursor = None
        if known or not ring:  # the ring's chunks are not matched against a guessed window
            cursor = Cursor.at_position(document.text, row, request.character, request.offset)
        plan = self._planner.plan(profile, document, cursor, cs)
        context = plan.context
        if ring:
            if not context.extra:
                return False
            context = dataclasses.replace(context, prefix="", suffix="")
        elif not context.prefix.strip() and not (
            context.suffix.strip() and mentions(profile.body, _SUFFIX_NAMES)
        ):
            return False  # nothing before the caret (1:1) and nothing after it that is sent
        key = (profile.name, context.extra, context.prefix, context.suffix)
        compared = 2 if ring else 4  # the ring's agents: the window is not what is warmed
        if self._sent.get(instance, ())[:compared] == key[:compared]:
            return False
        self._launch(profile, Anchor(uri, row, "", ""), dataclasses.replace(plan, context=context))
        self.warm_ups += 1
        return True
