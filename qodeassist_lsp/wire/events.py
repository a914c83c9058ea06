"""The one typed event stream every protocol parser produces.

Seven wire protocols describe text, reasoning, tool calls, usage and the end of a reply in
seven ways; the parsers translate all of them into these frozen dataclasses, so the layers
above handle one stream. Conventions every parser keeps:

* deltas are increments, never accumulated snapshots;
* a thinking block is a run of `ThinkingDelta` texts closed by the delta that carries its
  ``signature`` (opaque, protocol-specific, must be sent back verbatim); a redacted block is a
  single delta with empty text, the opaque data as ``signature`` and ``redacted=True``;
* `ToolCallStart` precedes its `ToolCallEnd`; arguments arrive parsed, complete, in the end;
* a finished reply ends with `Usage` (when the provider reported any) then `MessageStop`;
* a local agent process (ACP, Claude Code) runs its own tools: it reports them as
  `AgentToolCall`/`AgentToolResult`, which are shown but neither run nor sent back;
* a failed reply ends with a `StreamError`; the only one with ``final=False`` reports a single
  unusable tool call (bad or cut-off arguments) and the reply's usage and stop still follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from qodeassist_lsp.wire.errors import ErrorInfo

StopReason = Literal[
    "end_turn",
    "max_tokens",
    "tool_use",
    "stop_sequence",
    "refusal",
    "content_filter",
    "pause_turn",
    "other",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the visible answer."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning, or the signature that closes a thinking block."""

    thinking: str
    signature: str = ""
    redacted: bool = False
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model began a call of tool ``name``."""

    id: str
    name: str
    kind: Literal["tool_call_start"] = "tool_call_start"


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A complete tool call with parsed arguments (and Gemini's thought signature, if any)."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    signature: str = ""
    kind: Literal["tool_call_end"] = "tool_call_end"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of the reply as the provider reported them (final values, not sums)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True)
class MessageStop:
    """The reply finished; ``stop_reason`` is normalised, ``raw`` is the provider's value."""

    stop_reason: StopReason
    raw: str = ""
    kind: Literal["message_stop"] = "message_stop"


@dataclass(frozen=True, slots=True)
class StreamError:
    """The reply failed (``final``), or one tool call in it was unusable (not ``final``)."""

    error: ErrorInfo
    final: bool = True
    call_id: str = ""
    """The unusable tool call's id (a non-``final`` error about one call)."""
    call_name: str = ""
    kind: Literal["error"] = "error"


@dataclass(frozen=True, slots=True)
class AgentToolCall:
    """A tool call an agent process made and runs itself (shown, never run or kept by us)."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    permission: str = ""
    """``read``, ``write`` or ``execute`` as the agent classified the call; "" if unknown."""
    kind: Literal["agent_tool_call"] = "agent_tool_call"


@dataclass(frozen=True, slots=True)
class AgentToolResult:
    """The outcome of an `AgentToolCall`, as the agent process reported it."""

    id: str
    name: str
    content: str
    is_error: bool = False
    kind: Literal["agent_tool_result"] = "agent_tool_result"


WireEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStart
    | ToolCallEnd
    | AgentToolCall
    | AgentToolResult
    | Usage
    | MessageStop
    | StreamError
)
