"""Session events and stored messages as ACP updates; terminal events as stop reasons."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.acp_agent.updates import (
    event_updates,
    replay_updates,
    stop_reason,
    tool_kind,
    tool_title,
)
from qodeassist_lsp.core.content import Message, TextBlock, ToolResultBlock, ToolUseBlock
from qodeassist_lsp.core.events import (
    CancelledEvent,
    FailedEvent,
    FileEditEvent,
    FinishedEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

CWD = Path("/work/project")


def no_diff(_event: FileEditEvent) -> None:
    return None


def test_text_and_thinking_become_message_and_thought_chunks() -> None:
    [text] = event_updates(TextEvent("r", "Hi"), CWD, no_diff, set())
    [thought] = event_updates(ThinkingEvent("r", "hmm"), CWD, no_diff, set())
    assert (text.session_update, text.content.text) == ("agent_message_chunk", "Hi")
    assert (thought.session_update, thought.content.text) == ("agent_thought_chunk", "hmm")
    assert event_updates(ThinkingEvent("r", "", signature="s"), CWD, no_diff, set()) == []
    assert event_updates(UsageEvent("r", 1, 2), CWD, no_diff, set()) == []


def test_a_tool_call_has_its_kind_title_and_location() -> None:
    call = ToolCallEvent("r", "c1", "read_file", {"path": "src/a.py"}, "read")
    [start] = event_updates(call, CWD, no_diff, set())
    assert (start.session_update, start.tool_call_id, start.kind) == ("tool_call", "c1", "read")
    assert start.status == "pending" and start.raw_input == {"path": "src/a.py"}
    assert start.locations[0].path == "/work/project/src/a.py"
    assert start.title.startswith('read_file {"path"')


def test_kinds_come_from_the_name_else_the_permission_class() -> None:
    assert tool_kind("edit_file", "write") == "edit"
    assert tool_kind("delete_file", "write") == "delete"
    assert tool_kind("search_text", "read") == "search"
    assert tool_kind("srv__deploy", "execute") == "execute"
    assert tool_kind("srv__touch", "write") == "edit"
    assert tool_kind("srv__odd", "") == "other"
    assert len(tool_title("x", {"text": "y" * 500})) < 100


def test_an_edit_shows_its_diff_and_the_result_keeps_it() -> None:
    diffed: set[str] = set()
    edit = FileEditEvent("r", "e1", "file:///p/a.py", "-a\n+b\n", "applied", call_id="c2")
    [update] = event_updates(edit, CWD, lambda _e: ("/p/a.py", "a\n", "b\n"), diffed)
    diff = update.content[0]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", "/p/a.py", "a\n", "b\n")
    [done] = event_updates(ToolResultEvent("r", "c2", "edit_file", "Applied"), CWD, no_diff, diffed)
    assert done.status == "completed" and done.content is None
    [other] = event_updates(
        ToolResultEvent("r", "c3", "read_file", "text", is_error=True), CWD, no_diff, diffed
    )
    assert other.status == "failed" and other.content[0].content.text == "text"


def test_replay_shows_user_and_agent_text_and_tool_calls() -> None:
    user = Message("user", (TextBlock("Question"),))
    answer = Message(
        "assistant", (TextBlock("Let me look."), ToolUseBlock("c1", "read_file", {"path": "a"}))
    )
    result = Message("user", (ToolResultBlock("c1", "read_file", "contents"),))
    kinds = [u.session_update for m in (user, answer, result) for u in replay_updates(m, CWD)]
    assert kinds == ["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]
    [done] = replay_updates(result, CWD)
    refused = Message("user", (ToolResultBlock("c2", "edit_file", "Error: denied", True),))
    [failed] = replay_updates(refused, CWD)
    assert (done.status, failed.status) == ("completed", "failed")


def test_stop_reasons() -> None:
    assert stop_reason(FinishedEvent("r", "end_turn")) == "end_turn"
    assert stop_reason(FinishedEvent("r", "max_tokens")) == "max_tokens"
    assert stop_reason(FinishedEvent("r", "refusal")) == "refusal"
    assert stop_reason(FinishedEvent("r", "content_filter")) == "refusal"
    assert stop_reason(CancelledEvent("r")) == "cancelled"
    limit = ErrorInfo(ErrorCategory.TOOL, "tool continuation limit reached (3 rounds); raise …")
    assert stop_reason(FailedEvent("r", limit)) == "max_turn_requests"
    assert stop_reason(FailedEvent("r", ErrorInfo(ErrorCategory.NETWORK, "down"))) is None


def test_a_plan_is_a_plan_update_and_an_invalid_plan_a_note() -> None:
    from qodeassist_lsp.core.events import PlanStepInfo, PlanUpdatedEvent

    steps = tuple(
        PlanStepInfo(str(n), f"step {status}", status)
        for n, status in enumerate(["done", "running", "pending", "failed", "skipped"])
    )
    [update] = event_updates(PlanUpdatedEvent("r1", "running", steps), CWD, lambda _e: None, set())
    assert update.session_update == "plan"
    assert [(e.content, e.status) for e in update.entries] == [  # type: ignore[union-attr]
        ("step done", "completed"),
        ("step running", "in_progress"),
        ("step pending", "pending"),
        ("step failed", "pending"),
        ("step skipped", "completed"),
    ]
    error = ErrorInfo(ErrorCategory.VALIDATION, "not a plan")
    invalid = PlanUpdatedEvent("r1", "invalid", (), error)
    [note] = event_updates(invalid, CWD, lambda _e: None, set())
    assert note.session_update == "agent_message_chunk"
    assert "[No plan: not a plan]" in note.content.text  # type: ignore[union-attr]
