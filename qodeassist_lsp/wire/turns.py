"""Folding a stream of `WireEvent` into one assistant turn.

The continuation builders need the whole turn (text, thinking blocks with their signatures,
tool calls) to replay it; tests and the CLI need the same summary. The folding rules for
thinking blocks are the ones documented in `qodeassist_lsp.wire.events`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from qodeassist_lsp.wire.errors import ErrorInfo
from qodeassist_lsp.wire.events import (
    MessageStop,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    WireEvent,
)
from qodeassist_lsp.wire.tools import ToolCall


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """One reasoning block: its text and the opaque signature needed to replay it."""

    thinking: str
    signature: str = ""
    redacted: bool = False


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """Everything one reply contained, in a shape the continuation builders consume."""

    text: str = ""
    thinking: tuple[ThinkingBlock, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    stop: MessageStop | None = None
    errors: tuple[ErrorInfo, ...] = ()


class TurnCollector:
    """Accumulates events into an `AssistantTurn`."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._blocks: list[ThinkingBlock] = []
        self._open_thinking: list[str] = []
        self._calls: list[ToolCall] = []
        self._started: dict[str, str] = {}
        self._usage: Usage | None = None
        self._stop: MessageStop | None = None
        self._errors: list[ErrorInfo] = []

    def add(self, event: WireEvent) -> None:
        """Fold one event into the turn."""
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ThinkingDelta):
            self._add_thinking(event)
        elif isinstance(event, ToolCallStart):
            self._started[event.id] = event.name
        elif isinstance(event, ToolCallEnd):
            self._calls.append(ToolCall(event.id, event.name, event.arguments, event.signature))
        elif isinstance(event, Usage):
            self._usage = event
        elif isinstance(event, MessageStop):
            self._stop = event
        elif isinstance(event, StreamError):
            self._errors.append(event.error)

    def _add_thinking(self, event: ThinkingDelta) -> None:
        if event.redacted:
            self._close_thinking("")
            self._blocks.append(ThinkingBlock(event.thinking, event.signature, redacted=True))
            return
        if event.thinking:
            self._open_thinking.append(event.thinking)
        if event.signature:
            self._close_thinking(event.signature, force=True)

    def _close_thinking(self, signature: str, *, force: bool = False) -> None:
        if self._open_thinking or force:
            self._blocks.append(ThinkingBlock("".join(self._open_thinking), signature))
        self._open_thinking = []

    def turn(self) -> AssistantTurn:
        """Return the turn so far (an open thinking block has no signature yet)."""
        blocks = list(self._blocks)
        if self._open_thinking:
            blocks.append(ThinkingBlock("".join(self._open_thinking)))
        return AssistantTurn(
            text="".join(self._text),
            thinking=tuple(blocks),
            tool_calls=tuple(self._calls),
            usage=self._usage,
            stop=self._stop,
            errors=tuple(self._errors),
        )


def collect_turn(events: Iterable[WireEvent]) -> AssistantTurn:
    """Fold ``events`` into one `AssistantTurn`."""
    collector = TurnCollector()
    for event in events:
        collector.add(event)
    return collector.turn()
