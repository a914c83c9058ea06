"""Claude Code as a provider: the bundled "Claude Code Chat" over our LSP chat, with a stand-in.

`tests/support/claude_standin.py` is put on PATH as ``claude``; it replays a recorded
``stream-json`` session (tests/fixtures/claude_code/, see SOURCES.md). The provider starts the
bundled instance's command with the message on stdin and maps Claude Code's output onto the chat
events: thinking, text, its own tool calls and their results, usage; a later message resumes
the chat's Claude Code session. A failed run, a cancel and a missing program end clearly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp.conftest import server_env
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.waiting import until

STANDIN = Path(__file__).resolve().parents[2] / "support/claude_standin.py"
SESSION = "5b7e2c1a-0d4f-4a8e-9c3b-1f2e3d4c5b6a"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    for key, value in server_env(lsp_home).items():
        monkeypatch.setenv(key, value)
    bin_dir = lsp_home / "bin"
    bin_dir.mkdir()
    if "missing" not in request.node.name:
        (bin_dir / "claude").symlink_to(STANDIN)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("CLAUDE_STANDIN_LOG", str(lsp_home / "claude.log"))
    # The server starts before the test body runs: what the stand-in does is set here.
    if "failed_run" in request.node.name:
        monkeypatch.setenv("CLAUDE_STANDIN_RECORDING", "stream_json_error_SYNTHETIC.jsonl")
    if "cancel" in request.node.name:
        monkeypatch.setenv("CLAUDE_STANDIN_HANG", "1")
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["Claude Code Chat"]\n'
    )


def runs(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (home / "claude.log").read_text().splitlines()]


async def send(client: Any, events: Any, message: str, **extra: Any) -> list[dict[str, Any]]:
    sent = await request(client, "chat/send", {"message": message, **extra})
    await events.terminal(sent["requestId"], within=30)
    return events.of(sent["requestId"])


async def test_a_recorded_session_becomes_our_chat_events(client, lsp_home):
    events = await start(client)
    streamed = await send(client, events, "Explain greet")
    assert [e["kind"] for e in streamed] == [
        "thinking", "text", "toolCall", "toolResult", "toolCall", "toolResult", "text",
        "usage", "finished",
    ], streamed  # fmt: skip
    thinking, _, read, read_result, bash, bash_result, *_ = streamed
    assert thinking["text"].startswith("The user wants") and thinking["signature"]
    assert (read["toolCallId"], read["name"], read["permission"]) == ("toolu_01A", "Read", "read")
    assert read["arguments"] == {"file_path": "/w/greet.py"}
    assert read_result["ok"] and "return 'hello ' + name" in read_result["content"]
    assert (bash["name"], bash["permission"]) == ("Bash", "execute")
    assert not bash_result["ok"] and "denied" in bash_result["summary"]
    assert (
        texts(streamed) == "Reading the file first.`greet` returns 'hello ' followed by the name."
    )
    usage = streamed[-2]
    assert (usage["inputTokens"], usage["outputTokens"], usage["cachedTokens"]) == (10, 126, 27700)
    assert streamed[-1]["stopReason"] == "end_turn"
    [run] = runs(lsp_home)
    assert run["argv"] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert run["prompt"] == "Explain greet"

    again = await send(client, events, "And now?", chatId=streamed[0]["chatId"])
    assert again[-1]["kind"] == "finished"
    second = runs(lsp_home)[1]
    assert second["argv"][-2:] == ["--resume", SESSION] and second["prompt"] == "And now?"


async def test_a_failed_run_is_a_failed_event_in_claude_codes_words(client):
    events = await start(client)
    failed = await send(client, events, "Hi")
    assert [e["kind"] for e in failed] == ["failed"]
    message = failed[0]["error"]["message"]
    assert message == "provider 'Claude Code': Claude Code: Invalid API key · Please run /login"


async def test_cancel_stops_the_run_and_its_process(client, lsp_home):
    events = await start(client)
    sent = await request(client, "chat/send", {"message": "Work for ever"})
    await until(lambda: (lsp_home / "claude.log").exists())
    [run] = runs(lsp_home)
    assert await request(client, "chat/cancel", {"chatId": sent["chatId"]}) is None
    assert (await events.terminal(sent["requestId"], within=30))["kind"] == "cancelled"
    await until(lambda: not alive(run["pid"]))
    assert not alive(run["pid"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


async def test_a_missing_claude_is_a_configuration_error_naming_the_npm_package(client):
    events = await start(client)
    [failed] = await send(client, events, "Hi")
    assert failed["kind"] == "failed" and failed["error"]["category"] == "config"
    assert "'claude' is not on PATH" in failed["error"]["message"]
    assert "npm install -g @anthropic-ai/claude-code" in failed["error"]["message"]
