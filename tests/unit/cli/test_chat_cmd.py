"""``qodeassist-lsp chat`` on the default (Embedded Chat) agent, against the replay server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, tool_call_reply

LOOP = "I am a helpful software engineer who writes clean code.\n"
TOOL_AGENT = """schema_version = 1
extends      = "Embedded Chat"
name         = "Tool Chat"
enable_tools = true
"""


def test_a_looping_answer_is_cut_and_said_so(run_cli, replay) -> None:
    # Issue 15: `chat "hi"` printed a kilobyte of repeated persona text.
    replay.script("/v1/chat/completions", chat_reply("Hello!\n", *[LOOP] * 30))
    code, out, err = run_cli("chat", "hi")
    assert code == 0, err
    assert out.count(LOOP) == 3
    assert "[stopped: the answer started repeating itself]" in err


def test_the_stop_reason_is_in_the_events(run_cli, replay) -> None:
    replay.script("/v1/chat/completions", chat_reply(*[LOOP] * 30))
    code, out, _err = run_cli("chat", "--events", "jsonl", "hi")
    assert code == 0
    last = json.loads(out.splitlines()[-1])
    assert last["kind"] == "finished" and last["stopReason"] == "repetition"


def test_a_demo_model_says_so_once_on_stderr(run_cli, replay, config_dir: Path) -> None:
    instruct = config_dir / "providers" / "embedded_instruct.toml"
    instruct.write_text(instruct.read_text() + "demo = true\n")
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    code, out, err = run_cli("chat", "hi")
    assert code == 0, err
    assert out == "Hello!\n"
    notices = [line for line in err.splitlines() if "offline demo model" in line]
    assert len(notices) == 1 and "`qodeassist-lsp setup`" in notices[0]


def test_a_real_provider_has_no_demo_notice(run_cli, replay) -> None:
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    code, _out, err = run_cli("chat", "hi")
    assert code == 0 and "demo" not in err


def test_a_starting_servers_download_progress_shows_on_stderr(
    run_cli, config_dir: Path, tmp_path: Path
) -> None:
    from tests.support.tiny_launch import Tiny

    tiny = Tiny(tmp_path)
    (config_dir / "providers").mkdir(exist_ok=True)
    (config_dir / "providers" / "embedded_instruct.toml").write_text(
        tiny.provider_file("Embedded Instruct", "--progress")
    )
    code, out, err = run_cli("chat", "hi")
    assert code == 0, err
    assert out == "pong\n"
    assert [line for line in err.splitlines() if "%" in line] == [
        f"qodeassist-lsp: Embedded Instruct: {p}% downloading model.gguf: {p} of 100 MiB"
        for p in (0, 50, 100)
    ]


@pytest.fixture
def tool_agent(config_dir: Path) -> None:
    (config_dir / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
    (config_dir / "pipelines.toml").write_text('[pipelines]\nchat_assistant = ["Tool Chat"]\n')


def tool_result(replay: ReplayServer) -> str:
    """What the model was told the tool did (the second request's last message)."""
    chats = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    assert len(chats) == 2, chats
    return str(chats[1].json["messages"][-1]["content"])


def test_an_agent_with_tools_reads_a_file_of_the_workspace(
    run_cli, replay: ReplayServer, tool_agent: None, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    replay.script(
        "/v1/chat/completions",
        [tool_call_reply("read_file", {"path": "notes.txt"}), chat_reply("It says 42.")],
    )
    code, out, err = run_cli("chat", "What do my notes say?")
    assert code == 0, err
    assert out == "It says 42.\n"
    assert '[tool] read_file({"path": "notes.txt"})' in err and "[tool] read_file -> ok" in err
    assert "the answer is 42" in tool_result(replay)


def test_a_file_outside_the_workspace_is_refused(
    run_cli, replay: ReplayServer, tool_agent: None, tmp_path: Path
) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "secret.txt").write_text("hunter2\n")
    replay.script(
        "/v1/chat/completions",
        [tool_call_reply("read_file", {"path": "../secret.txt"}), chat_reply("No.")],
    )
    code, _out, err = run_cli("chat", "--workspace", str(tmp_path / "inside"), "Read it")
    assert code == 0, err
    assert "[tool] read_file -> error" in err
    assert "hunter2" not in tool_result(replay)


def test_without_a_terminal_a_program_is_not_run(
    run_cli, replay: ReplayServer, tool_agent: None
) -> None:
    replay.script(
        "/v1/chat/completions",
        [tool_call_reply("terminal", {"command": "git --version"}), chat_reply("Denied.")],
    )
    code, _out, err = run_cli("chat", "Which git?")
    assert code == 0, err
    result = tool_result(replay)
    assert "terminal was not run" in result and "git version" not in result


class _Terminal(io.StringIO):
    """A stdin that is a terminal, with the user's answers typed in advance."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_user_is_asked_and_allows_it(
    run_cli, replay: ReplayServer, tool_agent: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal("o\n"))
    replay.script(
        "/v1/chat/completions",
        [tool_call_reply("terminal", {"command": "git --version"}), chat_reply("Git it is.")],
    )
    code, _out, err = run_cli("chat", "Which git?")
    assert code == 0, err
    assert "the model wants to run a program with the tool terminal" in err
    assert "[o] Allow once  [c] Allow for this chat  [d] Deny (default: Deny): " in err
    assert "git version" in tool_result(replay)


def test_no_tools_offers_none(run_cli, replay: ReplayServer, tool_agent: None) -> None:
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    assert run_cli("chat", "--no-tools", "hi")[0] == 0
    assert "tools" not in replay.requests[-1].json
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    assert run_cli("chat", "hi")[0] == 0
    assert {t["function"]["name"] for t in replay.requests[-1].json["tools"]} >= {
        "read_file",
        "terminal",
    }


OTHER_AGENT = """schema_version = 1
extends      = "Embedded Chat"
name         = "Other Chat"
model        = "other-model"
"""


def test_the_chat_is_saved_and_continued_with_its_id(
    run_cli, replay: ReplayServer, config_dir: Path
) -> None:
    # Like the other doors, the CLI chat is a saved chat; --chat ID goes on with it, and with
    # its agent (here one outside pipelines.chat_assistant) unless --agent names another.
    (config_dir / "agents" / "other.toml").write_text(OTHER_AGENT)
    replay.script("/v1/chat/completions", chat_reply("Hello, Ada."))
    code, out, err = run_cli("chat", "--agent", "Other Chat", "--events", "jsonl", "I am Ada.")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    chat_ids = {event["chatId"] for event in events}
    assert len(chat_ids) == 1 and events[-1]["kind"] == "finished", events
    [chat_id] = chat_ids

    replay.script("/v1/chat/completions", chat_reply("You are Ada."))
    code, out, err = run_cli("chat", "--chat", chat_id, "Who am I?")
    assert code == 0, err
    assert out == "You are Ada.\n"
    sent = replay.requests[-1].json
    assert sent["model"] == "other-model"
    said = [(m["role"], str(m["content"])) for m in sent["messages"] if m["role"] != "system"]
    assert [role for role, _ in said] == ["user", "assistant", "user"], said
    assert "I am Ada." in said[0][1] and "Hello, Ada." in said[1][1] and "Who am I?" in said[2][1]


def test_an_unknown_chat_is_refused(run_cli, replay: ReplayServer) -> None:
    code, out, err = run_cli("chat", "--chat", "no-such-chat", "hi")
    assert code == 1 and out == ""
    assert "qodeassist-lsp: no chat 'no-such-chat' is saved in " in err
    assert not replay.requests


def test_on_a_terminal_the_saved_chat_is_named(
    run_cli, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    code, _out, err = run_cli("chat", "hi")
    assert code == 0, err
    [line] = [line for line in err.splitlines() if "--chat" in line]
    chat_id = line.rsplit(" ", 1)[1]
    assert line == f"qodeassist-lsp: saved as chat {chat_id}; continue it with --chat {chat_id}"


def test_a_mentioned_file_is_attached_and_an_ignored_one_refused(
    run_cli, replay: ReplayServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    (tmp_path / "secret.txt").write_text("hunter2\n")
    (tmp_path / ".qodeassistignore").write_text("secret.txt\n")
    code, out, err = run_cli("chat", "what about @secret.txt")
    assert code == 1 and out == "", err
    assert "secret.txt is excluded by" in err and ".qodeassistignore" in err, err
    assert not replay.requests
    replay.script("/v1/chat/completions", chat_reply("42."))
    code, _out, err = run_cli("chat", "what does @notes.txt:1 say")
    assert code == 0, err
    sent = str(replay.requests[-1].json["messages"][-1]["content"])
    assert "notes.txt" in sent and "the answer is 42" in sent, sent
