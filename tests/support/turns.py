"""Folding a parser's `WireEvent` list into one assistant turn, for assertions in wire tests.

Production folds events into the conversation history (``core.session``); the wire tests only
need a summary of one reply. Thinking blocks follow the rules in ``qodeassist_lsp.wire.events``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from qodeassist_lsp.wire.events import (
    MessageStop,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallEnd,
    Usage,
    WireEvent,
)


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """One reasoning block: its text and the opaque signature needed to replay it."""

    thinking: str
    signature: str = ""
    redacted: bool = False


@dataclass(slots=True)
class Turn:
    """Everything one reply contained (the tuples are lists while it is collected)."""

    text: str = ""
    thinking: Any = field(default_factory=list)
    tool_calls: Any = field(default_factory=list)
    usage: Usage | None = None
    stop: MessageStop | None = None
    errors: Any = field(default_factory=list)


def collect_turn(events: Iterable[WireEvent]) -> Turn:
    """Fold ``events`` into one `Turn` (an open thinking block ends without a signature)."""
    turn, open_thinking = Turn(), list[str]()
    for event in events:
        if isinstance(event, TextDelta):
            turn.text += event.text
        elif isinstance(event, ThinkingDelta) and event.redacted:
            if any(open_thinking):
                turn.thinking.append(ThinkingBlock("".join(open_thinking)))
            open_thinking = []
            turn.thinking.append(ThinkingBlock(event.thinking, event.signature, redacted=True))
        elif isinstance(event, ThinkingDelta):
            open_thinking.append(event.thinking)
            if event.signature:
                turn.thinking.append(ThinkingBlock("".join(open_thinking), event.signature))
                open_thinking = []
        elif isinstance(event, ToolCallEnd):
            turn.tool_calls.append(event)
        elif isinstance(event, Usage):
            turn.usage = event
        elif isinstance(event, MessageStop):
            turn.stop = event
        elif isinstance(event, StreamError):
            turn.errors.append(event.error)
    if any(open_thinking):
        turn.thinking.append(ThinkingBlock("".join(open_thinking)))
    turn.thinking, turn.tool_calls = tuple(turn.thinking), tuple(turn.tool_calls)
    turn.errors = tuple(turn.errors)
    return turn
