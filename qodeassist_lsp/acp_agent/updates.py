"""Session events and stored messages as ACP ``session/update`` payloads, and stop reasons.

Pure functions: `event_updates` maps one `SessionEvent` of a running turn, `replay_updates` one
stored message of a chat being loaded (a refused or failed tool is ``failed`` there too),
`stop_reason` a terminal event. A tool's ACP ``kind`` comes from its name (known tools) or its
permission class; a ``path`` argument is its location.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    PlanEntryStatus,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UserMessageChunk,
)

from qodeassist_lsp.core.content import Message, TextBlock, ToolResultBlock, ToolUseBlock
from qodeassist_lsp.core.events import (
    FileEditEvent,
    FinishedEvent,
    PlanUpdatedEvent,
    SessionEvent,
    TerminalEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
)

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | AgentPlanUpdate
)
DiffOf = Callable[[FileEditEvent], tuple[str, str | None, str | None] | None]
"""Returns (path, old text, new text) of an edit event, None once the edit is forgotten."""

TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_folder": "read",
    "git_status": "read",
    "git_diff": "read",
    "git_log": "read",
    "diagnostics": "read",
    "load_skill": "read",
    "find_files": "search",
    "search_text": "search",
    "create_file": "edit",
    "edit_file": "edit",
    "delete_file": "delete",
    "terminal": "execute",
    "build": "execute",
    "todo": "think",
}
PLAN_STATUSES: dict[str, PlanEntryStatus] = {
    "running": "in_progress",
    "done": "completed",
    "skipped": "completed",
}
"""ACP's plan entry status of a step's (pending, failed: ``pending``, to run again)."""
_BY_PERMISSION: dict[str, ToolKind] = {"read": "read", "write": "edit", "execute": "execute"}
_TITLE_ARGUMENTS = 80


def tool_kind(name: str, permission: str) -> ToolKind:
    """Return the ACP kind of tool ``name`` (by name, else by its permission class)."""
    return TOOL_KINDS.get(name) or _BY_PERMISSION.get(permission, "other")


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """Return the one-line title shown for a call: the tool and its arguments, cut short."""
    shown = json.dumps(arguments, ensure_ascii=False) if arguments else ""
    if len(shown) > _TITLE_ARGUMENTS:
        shown = shown[: _TITLE_ARGUMENTS - 1] + "…"
    return f"{name} {shown}".strip()


def locations(arguments: dict[str, Any], cwd: Path) -> list[ToolCallLocation] | None:
    """Return the file a call names (its ``path`` argument, made absolute), if any."""
    raw = arguments.get("path", arguments.get("filepath"))
    if not isinstance(raw, str) or not raw.strip():
        return None
    path = Path(raw).expanduser()
    return [ToolCallLocation(path=str(path if path.is_absolute() else cwd / path))]


def call_start(event: ToolCallEvent, cwd: Path) -> ToolCallStart:
    """Return the ``tool_call`` update of a call the model made."""
    return start_tool_call(
        event.id,
        tool_title(event.name, event.arguments),
        kind=tool_kind(event.name, event.permission),
        status="pending",
        locations=locations(event.arguments, cwd),
        raw_input=event.arguments,
    )


def event_updates(
    event: SessionEvent, cwd: Path, diff_of: DiffOf, diffed: set[str]
) -> list[Update]:
    """Return the updates one event of a running turn becomes (none for usage, terminals).

    ``diffed`` collects the calls whose content is an edit's diff: their result keeps it.
    """
    if isinstance(event, TextEvent) and event.text:
        return [update_agent_message_text(event.text)]
    if isinstance(event, ThinkingEvent) and event.text:
        return [update_agent_thought_text(event.text)]
    if isinstance(event, ToolCallEvent):
        return [call_start(event, cwd)]
    if isinstance(event, PlanUpdatedEvent):
        return plan_updates(event)
    if isinstance(event, FileEditEvent) and event.call_id:
        diff = diff_of(event)
        if diff is None:
            return []
        path, old, new = diff
        diffed.add(event.call_id)
        status: ToolCallStatus = "failed" if event.status == "failed" else "in_progress"
        return [
            update_tool_call(
                event.call_id,
                status=status,
                content=[tool_diff_content(path, new or "", old)],
                locations=[ToolCallLocation(path=path)],
            )
        ]
    if isinstance(event, ToolResultEvent):
        if event.tool_use_id not in diffed:
            return [result_content(event)]
        done: ToolCallStatus = "failed" if event.is_error else "completed"
        return [update_tool_call(event.tool_use_id, status=done, raw_output=event.content)]
    return []


def plan_updates(event: PlanUpdatedEvent) -> list[Update]:
    """Return the ``plan`` update of a plan (a note in the answer when it is invalid)."""
    if event.state == "invalid":
        why = event.error.message if event.error is not None else "no plan"
        return [update_agent_message_text(f"\n\n[No plan: {why}]")]
    entries = [
        plan_entry(step.title, status=PLAN_STATUSES.get(step.status, "pending"))
        for step in event.steps
    ]
    return [update_plan(entries)]


def result_content(event: ToolResultEvent) -> ToolCallProgress:
    """Return the update that shows a (non-edit) tool's result text."""
    return update_tool_call(
        event.tool_use_id,
        status="failed" if event.is_error else "completed",
        content=[tool_content(text_block(event.content))],
        raw_output=event.content,
    )


def replay_updates(message: Message, cwd: Path) -> list[Update]:
    """Return the updates that show one stored message again (``session/load``)."""
    updates: list[Update] = []
    for block in message.blocks:
        if isinstance(block, TextBlock) and block.text:
            if message.role == "user":
                updates.append(update_user_message_text(block.text))
            else:
                updates.append(update_agent_message_text(block.text))
        elif isinstance(block, ToolUseBlock):
            call = ToolCallEvent("", block.id, block.name, dict(block.input))
            updates.append(call_start(call, cwd))
        elif isinstance(block, ToolResultBlock):
            result = ToolResultEvent(
                "", block.tool_use_id, block.name, block.content, block.is_error
            )
            updates.append(result_content(result))
    return updates


def stop_reason(event: TerminalEvent) -> str | None:
    """Return the ACP ``stopReason`` of a terminal event; None for a failure to report."""
    if isinstance(event, FinishedEvent):
        if event.stop_reason == "max_tokens":
            return "max_tokens"
        if event.stop_reason in ("refusal", "content_filter"):
            return "refusal"
        return "end_turn"
    if event.kind == "cancelled":
        return "cancelled"
    if "tool continuation limit" in event.error.message:
        return "max_turn_requests"
    return None
