"""Idle cache warming: the extra context is sent while the user is idle, not on the next key.

A prompt starts with the extra-context ring (``extra_context``), then the cursor window. When the
ring has changed since the last request to a model server (a document was opened, the user moved
on from an edited one), the next request has to process the new chunks first: on a small local
model that is seconds of prompt processing the user waits for. llama.vim sends the ring with
``n_predict: 0`` when the user is idle; this does the same for any agent that uses the ring.

After ``[completion] warm_idle_ms`` without an edit or a completion request, the warmer plans
a request at the last known cursor of the last active document (its last completion request;
for a document just opened the cursor is not known, and its chunks are not matched against a
window) and, when the agent runs on this machine (a loopback provider: a cloud provider would
bill the prompt) and its body uses ``ctx.files_metadata``, sends that agent's request with the
ring and an empty prefix and suffix. The stream is closed at
the first event (``Generation`` with ``warm=True``): by then the model server has processed and
cached the ring, and a completion request that comes meanwhile simply replaces it. Nothing is
sent when the ring is the one the provider instance was last sent, or while a request to it
is still running.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.context.documents import Document, DocumentStore
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.completion.context_builder import Cursor
from qodeassist_lsp.features.completion.extra_context import ExtraFile
from qodeassist_lsp.features.completion.generation import Anchor
from qodeassist_lsp.features.completion.prompt_plan import PromptPlan, PromptPlanner
from qodeassist_lsp.features.completion.requests import CompletionRequest, CompletionResult
from qodeassist_lsp.features.completion.routing import route, serves_locally
from qodeassist_lsp.features.completion.settings import COMPLETION_SETTINGS

__all__ = ["CacheWarmer", "Launch", "uses_extra_context"]

log = logging.getLogger("qodeassist.completion")

Launch = Callable[[AgentProfile, Anchor, PromptPlan], object]
"""Starts a warm-up generation for an agent (``CompletionService._launch`` with ``warm``)."""
_RING_NAMES = ("files_metadata", "fim_prompt(")


def uses_extra_context(profile: AgentProfile) -> bool:
    """Whether ``profile``'s body sends the extra context (``ctx.files_metadata``)."""

    def mentions(value: Any) -> bool:
        if isinstance(value, str):
            return any(name in value for name in _RING_NAMES)
        if isinstance(value, dict):
            return any(mentions(item) for item in value.values())
        if isinstance(value, list):
            return any(mentions(item) for item in value)
        return False

    return mentions(profile.body)


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
        self._sent: dict[str, tuple[str, tuple[ExtraFile, ...]]] = {}
        self._target: tuple[str, int | None, int] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.warm_ups = 0
        """Warm-up requests sent (``qodeassist/status`` ``warmUps``)."""

    def note_sent(self, instance: str, agent: str, extra: tuple[ExtraFile, ...]) -> None:
        """Remember the ring last sent to provider ``instance`` (by any request)."""
        self._sent[instance] = (agent, extra)

    def arm(self, uri: str, line: int | None, character: int = 0) -> None:
        """Make ``uri`` at (line, character) the place to warm once idle (line None: unknown)."""
        self._target = (uri, line, character)
        self.postpone()

    def postpone(self) -> None:
        """Restart the idle timer (an edit or a request: the user is not idle)."""
        self.cancel()
        delay_ms = self._backend.settings.section(COMPLETION_SETTINGS).warm_idle_ms
        if self._target is None or delay_ms <= 0:
            return
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
        """Send the ring for a completion at (line, character) of ``uri``; True if it was sent."""
        settings = self._backend.settings
        cs = settings.section(COMPLETION_SETTINGS)
        document = self._documents.get(uri)
        if (
            document is None
            or not settings.general.enabled
            or cs.extra_context_chunks <= 0
            or self._is_ignored(document)
        ):
            return False
        lines = document.text.split("\n")
        row = min(max(line or 0, 0), len(lines) - 1)
        request = CompletionRequest(document, row, min(max(character, 0), len(lines[row])))
        configuration = self._backend.configuration
        profile = route(configuration, request)
        if (
            isinstance(profile, CompletionResult)
            or not serves_locally(configuration, profile)
            or not uses_extra_context(profile)
            or self._busy(profile.provider_instance)
        ):
            return False
        cursor = None
        if line is not None:
            cursor = Cursor.at_position(document.text, row, request.character, request.offset)
        plan = self._planner.plan(profile, document, cursor, cs)
        extra = plan.context.extra
        if not extra or self._sent.get(profile.provider_instance) == (profile.name, extra):
            return False
        context = dataclasses.replace(plan.context, prefix="", suffix="")
        self._launch(profile, Anchor(uri, row, "", ""), dataclasses.replace(plan, context=context))
        self.warm_ups += 1
        return True
