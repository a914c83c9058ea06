"""The session event stream: what a request produced, as features and clients see it.

Deltas (``text``, ``thinking``, ``toolCall``, ``toolResult``, ``fileEdit``, ``usage``) may
repeat (``agentChosen`` comes first, once, for a chat sent with ``agent: "auto"``;
``planUpdated`` tells a plan-mode chat's plan and its steps' states); exactly one
terminal event (``finished``, ``failed``, ``cancelled``) ends every request. ``to_json`` gives
the camelCase wire form used by ``qodeassist/chat/event`` and ``chat --events jsonl``.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from qodeassist_lsp.wire.errors import ErrorInfo

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def camel_json(value: DataclassInstance, tag: str = "") -> dict[str, Any]:
    """Return the fields of ``value`` under their camelCase names, its ``tag`` field first."""
    data: dict[str, Any] = {tag: None} if tag else {}  # the loop fills the tag's value in
    for item in fields(value):
        head, *rest = item.name.split("_")
        data[head + "".join(part.title() for part in rest)] = getattr(value, item.name)
    return data


class _CamelJson:
    """An event whose wire form is ``kind``, then each field under its camelCase name."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        return camel_json(self, "kind")


@dataclass(frozen=True)
class TextEvent(_CamelJson):
    """Answer text as it streams."""

    request_id: str
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingEvent(_CamelJson):
    """Reasoning as it streams; ``signature`` arrives on the delta that closes a block."""

    request_id: str
    text: str
    signature: str = ""
    redacted: bool = False
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class ToolCallEvent:
    """The model called a tool (arguments complete)."""

    request_id: str
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    permission: str = ""
    """The tool's permission class (``read``, ``write``, ``execute``); empty if not offered."""
    kind: Literal["toolCall"] = "toolCall"

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form (``id`` is kept beside SPEC's ``toolCallId``)."""
        head = {"kind": self.kind, "requestId": self.request_id, "toolCallId": self.id}
        return {**head, **camel_json(self)}


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool finished; its result goes back to the model."""

    request_id: str
    tool_use_id: str
    name: str
    content: str
    is_error: bool = False
    kind: Literal["toolResult"] = "toolResult"

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form: SPEC's ``toolCallId``/``ok``/``summary`` and the text."""
        return {
            "kind": self.kind,
            "requestId": self.request_id,
            "toolCallId": self.tool_use_id,
            "toolUseId": self.tool_use_id,
            "name": self.name,
            "ok": not self.is_error,
            "summary": summarize(self.content),
            "content": self.content,
            "isError": self.is_error,
        }


SUMMARY_CHARS = 160
"""The longest ``summary`` of a tool result: its first line, cut to this many characters."""


def summarize(content: str) -> str:
    """Return the first non-blank line of ``content``, cut to `SUMMARY_CHARS`."""
    line = next((line.strip() for line in content.splitlines() if line.strip()), "")
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


ParseStatus = Literal["ok", "broken", "unchecked"]
"""A whole-file parse check: ``ok``, ``broken`` (the change adds syntax errors) or ``unchecked``."""


@dataclass(frozen=True)
class FileEditEvent:
    """A tool proposed (or applied, undid, rejected) an edit of one file."""

    request_id: str
    edit_id: str
    uri: str
    diff: str
    status: str
    """``pending``, ``applied``, ``rejected``, ``undone`` or ``failed``."""
    call_id: str = ""
    """The tool call that proposed the edit (the ACP host shows the edit on that call)."""
    parse_check: ParseStatus = "unchecked"
    """Whether the file parses after the edit at least as well as before (``broken``: not)."""
    parse_reason: str = ""
    """Why the check says ``broken`` (empty otherwise)."""
    kind: Literal["fileEdit"] = "fileEdit"

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        shown = camel_json(self, "kind")
        del shown["callId"]  # for the ACP host only
        if not self.parse_reason:
            del shown["parseReason"]
        return shown


@dataclass(frozen=True)
class UsageEvent(_CamelJson):
    """Token counts, summed over every round of the request."""

    request_id: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True)
class AgentChosenEvent(_CamelJson):
    """Which agent ``agent: "auto"`` picked for the request, and the router's one-line reason."""

    request_id: str
    agent: str
    reason: str
    fallback: bool = False
    """True when the router failed or was late and the first chat agent answers instead."""
    kind: Literal["agentChosen"] = "agentChosen"


@dataclass(frozen=True)
class PlanStepInfo:
    """One step of a plan as clients see it."""

    id: str
    title: str
    status: str
    """``pending``, ``running``, ``done``, ``failed`` or ``skipped``."""
    request_id: str = ""
    """The chat request that carries the step out (once it started)."""
    checkpoint_id: str = ""
    """The checkpoint of the step's turn (the files as they were before its edits)."""
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        shown = camel_json(self).items()
        return {key: value for key, value in shown if value or key in ("id", "title", "status")}


@dataclass(frozen=True)
class PlanUpdatedEvent:
    """A plan-mode chat's plan changed: proposed, edited, a step started or ended, or invalid."""

    request_id: str
    """The request that changed it (the planning turn or a step's); empty for a user's edit."""
    state: str
    """``proposed``, ``running``, ``cancelled``, ``failed``, ``done`` or ``invalid``."""
    steps: tuple[PlanStepInfo, ...] = ()
    error: ErrorInfo | None = None
    kind: Literal["planUpdated"] = "planUpdated"

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "requestId": self.request_id,
            "state": self.state,
            "steps": [step.to_json() for step in self.steps],
        }
        if self.error is not None:
            data["error"] = self.error.brief()
        return data


@dataclass(frozen=True)
class FinishedEvent:
    """Terminal: the model finished (``stop_reason`` normalised: end_turn, max_tokens, …)."""

    request_id: str
    stop_reason: str
    agent: str = ""
    """The agent that answered: the session's own, or one of its ``fallback`` agents."""
    kind: Literal["finished"] = "finished"

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        data = {"kind": self.kind, "requestId": self.request_id, "stopReason": self.stop_reason}
        if self.agent:
            data["agent"] = self.agent
        return data


@dataclass(frozen=True)
class FailedEvent:
    """Terminal: the request failed with a typed error."""

    request_id: str
    error: ErrorInfo
    kind: Literal["failed"] = "failed"

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form."""
        error: dict[str, Any] = self.error.brief()
        if self.error.provider_detail:
            error["providerDetail"] = self.error.provider_detail
        if self.error.retry_after is not None:
            error["retryAfter"] = self.error.retry_after
        return {"kind": self.kind, "requestId": self.request_id, "error": error}


@dataclass(frozen=True)
class CancelledEvent(_CamelJson):
    """Terminal: the request was cancelled (not an error)."""

    request_id: str
    kind: Literal["cancelled"] = "cancelled"


SessionEvent = (
    TextEvent
    | ThinkingEvent
    | ToolCallEvent
    | ToolResultEvent
    | FileEditEvent
    | UsageEvent
    | AgentChosenEvent
    | PlanUpdatedEvent
    | FinishedEvent
    | FailedEvent
    | CancelledEvent
)
TerminalEvent = FinishedEvent | FailedEvent | CancelledEvent
TERMINAL_KINDS = frozenset({"finished", "failed", "cancelled"})
