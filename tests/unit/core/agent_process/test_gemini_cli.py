"""`GeminiCliProvider`'s reading of Gemini CLI stream-json lines (a recorded-shape fixture)."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.core.agent_process.gemini_cli import GeminiReader
from qodeassist_lsp.wire.events import (
    AgentToolCall,
    AgentToolResult,
    MessageStop,
    StreamError,
    TextDelta,
    Usage,
)

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures/claude_code"


def test_a_recorded_run_maps_onto_wire_events() -> None:
    reader = GeminiReader("Gemini CLI")
    lines = (FIXTURE / "gemini_stream_json_tool_use_SYNTHETIC.jsonl").read_bytes().splitlines()
    events = [event for line in lines for event in reader.read(line)]
    assert events == [
        AgentToolCall("read_file-1-1", "read_file", {"absolute_path": "/w/greet.py"}, "read"),
        AgentToolResult(
            "read_file-1-1", "read_file", "def greet(name):\n    return 'hello ' + name\n"
        ),
        TextDelta("`greet` returns "),
        TextDelta("'hello ' plus the name."),
        Usage(1250, 40),
        MessageStop("end_turn"),
    ]
    assert reader.ended


def test_a_failed_result_is_a_final_error() -> None:
    reader = GeminiReader("Gemini CLI")
    line = b'{"type":"result","status":"error","error":{"type":"Auth","message":"Please log in"}}'
    [error] = reader.read(line)
    assert isinstance(error, StreamError) and error.final
    assert error.error.message == "provider 'Gemini CLI': Gemini CLI: Please log in"
