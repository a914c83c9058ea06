"""`ClaudeCodeProvider`'s reading of stream-json lines (the recorded fixtures)."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.core.agent_process.claude_code import ClaudeCodeProvider, _Reader
from qodeassist_lsp.wire.events import (
    AgentToolCall,
    AgentToolResult,
    MessageStop,
    StreamError,
    TextDelta,
    ThinkingDelta,
    Usage,
    WireEvent,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures/claude_code"


def provider(tmp_path: Path) -> ClaudeCodeProvider:
    instance = ProviderInstance(name="CC", client_api="Claude Code", command=("claude",))
    return ClaudeCodeProvider(instance, SecretStore(tmp_path))


def read_all(reader: _Reader, name: str) -> list[WireEvent]:
    lines = (FIXTURES / name).read_bytes().splitlines()
    return [event for line in lines for event in reader.read(line)]


def test_a_recorded_session_maps_onto_wire_events(tmp_path: Path) -> None:
    cc = provider(tmp_path)
    reader = _Reader(cc, "chat")
    events = read_all(reader, "stream_json_tool_use_SYNTHETIC.jsonl")
    assert [type(e) for e in events] == [
        ThinkingDelta, TextDelta, AgentToolCall, AgentToolResult, AgentToolCall, AgentToolResult,
        TextDelta, Usage, MessageStop,
    ]  # fmt: skip
    assert events[2] == AgentToolCall("toolu_01A", "Read", {"file_path": "/w/greet.py"}, "read")
    assert isinstance(events[5], AgentToolResult) and events[5].is_error
    assert events[7] == Usage(10, 126, 27700)
    assert reader.ended
    assert cc._sessions == {"chat": "5b7e2c1a-0d4f-4a8e-9c3b-1f2e3d4c5b6a"}


def test_a_failed_result_is_a_final_error_and_junk_lines_are_skipped(tmp_path: Path) -> None:
    reader = _Reader(provider(tmp_path), "chat")
    assert reader.read(b"not json") == [] and reader.read(b"[1]") == []
    events = read_all(reader, "stream_json_error_SYNTHETIC.jsonl")
    assert isinstance(events[-1], StreamError) and events[-1].final
    assert events[-1].error.message.endswith("Invalid API key · Please run /login")
