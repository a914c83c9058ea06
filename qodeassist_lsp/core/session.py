"""``Session``: one conversation's runtime and the only way anything is sent to a model.

``send(blocks)`` appends a user message and starts a request in a task of its own; it returns at
once. ``exchange(blocks, listener)`` runs a request in the caller's task instead, handing each
event to ``listener`` as it happens: for a caller that already has a task of its own (a
completion generation) that saves a task and an event-queue hop per request. A session has
at most one request in flight: a new send cancels the previous one. Every request ends in
exactly one of ``finished``, ``failed`` or ``cancelled``. Tool calls run inside the request: the
session executes them in order, appends their results to the history and re-renders the agent's
body from the history for the next round, up to the policy's round limit. If a request fails
before the provider sent anything, the history is rolled back to where it was before the send.
Failover: when the agent's provider fails before the first byte (no connection, 5xx, a rate
limit after retries, an open circuit), the request goes to the agent's ``fallback`` agents in
order; ``finished`` names the agent that answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.config.system_prompt import PromptRoots, SystemPromptError, SystemPromptRenderer
from qodeassist_lsp.config.templating import TemplateError
from qodeassist_lsp.core.agent import Agent
from qodeassist_lsp.core.breaker import fails_over
from qodeassist_lsp.core.content import (
    Block,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from qodeassist_lsp.core.context_assembler import ContentLoader, assemble_context
from qodeassist_lsp.core.events import (
    CancelledEvent,
    FailedEvent,
    FinishedEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from qodeassist_lsp.core.history import ConversationHistory
from qodeassist_lsp.core.keys import is_key_failure
from qodeassist_lsp.core.policy import RequestPolicy
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.repetition import REPETITION_STOP
from qodeassist_lsp.core.request import EventListener, Request, new_request_id
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.core.round_usage import RoundState, RoundUsage
from qodeassist_lsp.core.system_prompt_builder import AGENT_LAYER, SystemPromptBuilder
from qodeassist_lsp.core.tools import ToolContext, ToolRegistry
from qodeassist_lsp.wire import events as wire
from qodeassist_lsp.wire.errors import CategorizedError, ErrorCategory, ErrorInfo, WireError

log = logging.getLogger("qodeassist.session")


class ToolLimitError(CategorizedError):
    """A request asked for more tool rounds than ``tools.max_tool_continuations`` allows."""


class _Stopped(Exception):
    """An inline request was cancelled: end it as ``cancelled`` at the next event."""


class Session:
    """A conversation bound to an agent: history, system-prompt layers, tools, requests."""

    def __init__(
        self,
        agent: Agent,
        provider: GenericProvider,
        *,
        prompt_roots: PromptRoots,
        policy: RequestPolicy | None = None,
        history: ConversationHistory | None = None,
        language: str = "",
        fallbacks: Sequence[tuple[Agent, GenericProvider]] = (),
    ) -> None:
        self.agent = agent
        self.provider = provider
        self.fallbacks = tuple(fallbacks)
        """The agent's ``fallback`` agents with their providers, tried in order."""
        self.policy = policy or RequestPolicy()
        self.history = history if history is not None else ConversationHistory()
        self.system_prompt = SystemPromptBuilder()
        self.tools = ToolRegistry()
        self.scope = ""
        """The conversation this session serves (a chat id); tools key per-chat state on it."""
        self.language = language
        self.files_metadata: list[dict[str, str]] = []
        self.content_loader: ContentLoader | None = None
        """Loads stored attachments (``stored_image``/``stored_attachment``) when they are sent."""
        self.pinned: dict[str, Callable[[], Sequence[Block]]] = {}
        """Named providers of blocks that lead the last user message of every round."""
        self.workspace: Confinement | None = None
        """Where an agent-process provider may read and write files for this conversation."""
        self._renderer = SystemPromptRenderer(prompt_roots)
        self._current: Request | None = None
        self.listeners: list[EventListener] = []

    @property
    def serving_agent(self) -> Agent:
        """The agent serving the latest request: ``agent``, or a fallback after a failover."""
        return self._serving(self._current) if self._current is not None else self.agent

    @property
    def busy(self) -> bool:
        """Whether a request is in flight."""
        return self._current is not None and not self._current.done

    def reset(self) -> None:
        """Forget history, layers, tools and bindings (a pooled session handed out again)."""
        self.cancel()
        self.history.reset()
        self.system_prompt.clear()
        self.tools.clear()
        self.scope = ""
        self.files_metadata = []
        self.content_loader = None
        self.pinned = {}
        self.language = ""
        self.listeners = []
        self.workspace = None

    def cancel(self) -> None:
        """Cancel the request in flight, if any."""
        if self._current is not None:
            self._current.cancel()

    def send(self, blocks: Sequence[Block]) -> Request:
        """Append a user message of ``blocks`` and start a request; return it at once."""
        request = self._begin(blocks, inline=False)
        if request.done:
            return request
        rollback = len(self.history) - 1
        request.run(self._run(request, rollback))
        return request

    async def exchange(self, blocks: Sequence[Block], listener: EventListener) -> Request:
        """Send ``blocks`` and run the request in the calling task; return it once it ended.

        ``listener`` gets every event as it happens, the terminal one last. ``cancel()`` on the
        session (or the request) from the listener stops the stream after that event; the
        request then ends ``cancelled``. Cancelling the calling task cancels the request too,
        and the ``CancelledError`` propagates as always.
        """
        request = self._begin(blocks, inline=True, listener=listener)
        if not request.done:
            await self._run(request, len(self.history) - 1)
        return request

    def _begin(
        self, blocks: Sequence[Block], *, inline: bool, listener: EventListener | None = None
    ) -> Request:
        """Cancel what is in flight, create the request and append the user message."""
        self.cancel()
        listeners = [*self.listeners, listener] if listener else self.listeners
        request = Request(new_request_id(), inline=inline, listeners=listeners)
        self._current = request
        if not blocks:
            request.emit(
                FailedEvent(
                    request.id,
                    ErrorInfo(ErrorCategory.VALIDATION, "nothing to send: the message is empty"),
                )
            )
            return request
        self.history.append(Message("user", tuple(blocks)))
        return request

    def _serve_with(self, request: Request, agent: Agent, provider: GenericProvider) -> None:
        """Make ``agent`` the one serving ``request``: its provider and its system prompt."""
        request.agent, request.provider = agent, provider
        log.info("[%s] send to %s (%s)", request.id, agent.name, agent.model)
        self.system_prompt.set_layer(
            AGENT_LAYER,
            self._renderer.render(agent.profile.system_prompt, self.language),
            priority=0,
        )

    async def _first_round(self, request: Request, totals: RoundUsage) -> str:
        """Run the first round, going down the ``fallback`` agents while nothing has arrived."""
        candidates = [(self.agent, self.provider), *self.fallbacks]
        for index, (agent, provider) in enumerate(candidates):
            self._serve_with(request, agent, provider)
            try:
                return await self._round_rotating_keys(request, totals, provider)
            except CategorizedError as exc:
                last = index == len(candidates) - 1
                if last or request.received or not fails_over(exc.info):
                    raise
                log.warning(
                    "[%s] %s failed before answering (%s); trying %s",
                    request.id,
                    agent.name,
                    exc.info.message,
                    candidates[index + 1][0].name,
                )
        raise AssertionError("unreachable: the last candidate re-raises")

    async def _round_rotating_keys(
        self, request: Request, totals: RoundUsage, provider: GenericProvider
    ) -> str:
        """Run a round; a key refused before the first byte hands over to the next key."""
        for _ in range(len(provider.keys) - 1):
            try:
                return await self._round(request, totals)
            except CategorizedError as exc:
                # The failed key is out of the rotation now; any ready key is another one.
                if request.received or not is_key_failure(exc.info):
                    raise
                if not provider.keys.has_ready_spare(None):
                    raise
                log.warning("[%s] %s; trying the next key", request.id, exc.info.message)
        return await self._round(request, totals)

    async def _run(self, request: Request, rollback: int) -> None:
        rid = request.id
        totals = RoundUsage()  # over all rounds
        try:
            rounds = 0
            while True:
                if request.stop_requested:
                    raise _Stopped
                if rounds == 0:
                    stop = await self._first_round(request, totals)
                else:
                    stop = await self._round(request, totals)
                if request.done:  # the round ended the request when the model stopped
                    return
                if self._is_last_round(stop, request):
                    self._finish(request, totals, stop)
                    return
                rounds += 1
                if rounds > self.policy.max_tool_rounds:
                    raise ToolLimitError(
                        ErrorInfo(
                            ErrorCategory.TOOL,
                            f"tool continuation limit reached ({self.policy.max_tool_rounds} "
                            "rounds); raise tools.max_tool_continuations in settings.toml",
                        )
                    )
                await self._run_tools(request, self._pending_calls(rid))
        except asyncio.CancelledError:
            log.info("[%s] cancelled", rid)
            request.emit(CancelledEvent(rid))
            raise
        except _Stopped:
            log.info("[%s] cancelled", rid)
            request.emit(CancelledEvent(rid))
        except CategorizedError as exc:  # the provider, its [launch] server, the tool limit
            self._fail(request, exc.info, None if request.received else rollback)
        except SystemPromptError as exc:
            info = ErrorInfo(
                ErrorCategory.VALIDATION,
                f"agent {self._serving(request).name!r}: {exc}; fix its system_prompt",
            )
            self._fail(request, info, rollback)
        except TemplateError as exc:
            info = ErrorInfo(ErrorCategory.CONFIG, f"agent {self._serving(request).name!r}: {exc}")
            self._fail(request, info, rollback)
        except Exception as exc:  # the server must survive any failure of one request
            log.exception("[%s] unexpected failure", rid)
            info = ErrorInfo(ErrorCategory.PROVIDER, f"unexpected error: {exc}")
            self._fail(request, info, None if request.received else rollback)

    def _serving(self, request: Request) -> Agent:
        """Return the agent serving ``request`` (the session's own until a round started)."""
        return request.agent or self.agent

    def _is_last_round(self, stop: str, request: Request) -> bool:
        """Whether the conversation ends with this stop (no tool calls left to run)."""
        # Tools run only when they were offered: enabled on the agent and registered.
        if stop != "tool_use" or not (self._serving(request).enable_tools and self.tools):
            return True
        return not self._pending_calls(request.id)

    def _finish(self, request: Request, totals: RoundUsage, stop: str) -> None:
        """End ``request``: its usage (when the provider reported any), then ``finished``."""
        if totals.reported:  # no made-up zeros when the provider reported nothing
            request.emit(UsageEvent(request.id, *totals.counts()))
        request.emit(FinishedEvent(request.id, stop, self._serving(request).name))
        log.info("[%s] finished: %s", request.id, stop)

    def _fail(self, request: Request, info: ErrorInfo, rollback: int | None) -> None:
        # INFO: the failure is the request's result; whoever shows it to the user logs it.
        log.info("[%s] failed (%s): %s", request.id, info.category, info.message)
        if rollback is not None:
            self.history.truncate(rollback)
        request.emit(FailedEvent(request.id, info))

    async def _round(self, request: Request, totals: RoundUsage) -> str:
        """Send one request of the conversation so far; return the normalised stop reason.

        ``totals`` gets this round's usage. When the model stops for good, the request ends
        right there, before the stream is torn down.
        """
        rid = request.id
        agent, provider = self._serving(request), request.provider or self.provider
        ctx = assemble_context(
            self.history.messages,
            self.system_prompt.compose(),
            model=agent.model,
            language=self.language,
            files_metadata=self.files_metadata,
            loader=self.content_loader,
            pinned=[block for provide in self.pinned.values() for block in provide()],
        )
        key = provider.api_key()
        prepared = agent.build_request(ctx, key, self.tools.specs())
        state = RoundState()
        stream = provider.stream(
            prepared,
            timeouts=self.policy.timeouts,
            retry=self.policy.retry,
            request_id=rid,
            api_key=key,
            host=RequestHost(self.scope or rid, rid, self.tools, request.emit, self.workspace),
        )
        async with contextlib.aclosing(stream) as batches:
            async for batch in batches:
                for event in batch:
                    if self._take(request, event, state, totals):
                        # Let whoever waited for the end act on it (a completion is answered)
                        # before this stream's connection is pooled and its log written.
                        await asyncio.sleep(0)
                        if state.stop == REPETITION_STOP:
                            return state.stop  # leaving the loop closes the stream
                    if request.stop_requested:
                        raise _Stopped  # leaving the loop closes the stream
        totals.add_round(state.usage)  # a stream that ended without a stop event
        return state.stop

    def _take(
        self, request: Request, event: wire.WireEvent, state: RoundState, totals: RoundUsage
    ) -> bool:
        """Apply one wire event to the history and the request; True if it ended the request."""
        rid = request.id
        request.received = True
        if isinstance(event, wire.TextDelta):
            self.history.append_blocks(rid, [TextBlock(event.text)])
            request.emit(TextEvent(rid, event.text))
            if state.repetition.feed(event.text):
                log.warning(
                    "[%s] the answer repeats %r; stopped",
                    rid,
                    state.repetition.looping_line,
                )
                state.stop = REPETITION_STOP
                totals.add_round(state.usage)
                state.usage = RoundUsage()
                self._finish(request, totals, REPETITION_STOP)
                return True
        elif isinstance(event, wire.ThinkingDelta):
            block: Block = (
                RedactedThinkingBlock(event.signature)
                if event.redacted
                else ThinkingBlock(event.thinking, event.signature)
            )
            self.history.append_blocks(rid, [block])
            request.emit(ThinkingEvent(rid, event.thinking, event.signature, event.redacted))
        elif isinstance(event, wire.ToolCallEnd):
            self.history.append_blocks(
                rid, [ToolUseBlock(event.id, event.name, event.arguments, event.signature)]
            )
            permission = self.tools.permission_of(event.name)
            request.emit(ToolCallEvent(rid, event.id, event.name, event.arguments, permission))
        elif isinstance(event, wire.AgentToolCall):  # the agent runs it: shown, not kept
            request.emit(
                ToolCallEvent(rid, event.id, event.name, event.arguments, event.permission)
            )
        elif isinstance(event, wire.AgentToolResult):
            request.emit(ToolResultEvent(rid, event.id, event.name, event.content, event.is_error))
        elif isinstance(event, wire.Usage):
            state.usage.add(event)
        elif isinstance(event, wire.MessageStop):
            state.stop = event.stop_reason
            totals.add_round(state.usage)
            state.usage = RoundUsage()  # counted
            if self._is_last_round(state.stop, request):
                self._finish(request, totals, state.stop)
                return True
        elif isinstance(event, wire.StreamError):
            if event.final:
                raise WireError(event.error)
            log.warning("[%s] %s", rid, event.error.message)
            if event.call_id:
                self._report_unusable_call(request, event)
        return False

    def _report_unusable_call(self, request: Request, event: wire.StreamError) -> None:
        """Show a tool call that cannot run (arguments cut off or not JSON) as a failed call.

        It is not run and not kept in the history (the model gets no result for it); the user
        sees a ``toolCall`` with empty arguments and its error ``toolResult``.
        """
        rid, permission = request.id, self.tools.permission_of(event.call_name)
        request.emit(ToolCallEvent(rid, event.call_id, event.call_name, {}, permission))
        message = f"Error: {event.error.message} The call was not run."
        request.emit(ToolResultEvent(rid, event.call_id, event.call_name, message, True))

    def _pending_calls(self, request_id: str) -> list[ToolUseBlock]:
        last = self.history.messages[-1] if len(self.history) else None
        if last is None or last.role != "assistant" or last.id != request_id:
            return []
        return last.tool_uses()

    async def _run_tools(self, request: Request, calls: list[ToolUseBlock]) -> None:
        results: list[Block] = []
        for call in calls:
            context = ToolContext(self.scope or request.id, request.id, call.id, request.emit)
            output = await self.tools.execute(call.name, call.input, context)
            results.append(ToolResultBlock(call.id, call.name, output.content, output.is_error))
            request.emit(
                ToolResultEvent(request.id, call.id, call.name, output.content, output.is_error)
            )
        self.history.append(Message("user", tuple(results)))
