"""``qodeassist-lsp chat`` with tools, as a user runs it: a real process on a pseudo-terminal.

The model (the loopback replay server, speaking OpenAI) asks to run ``git --version`` with the
``terminal`` tool; the CLI asks on the terminal and the user types ``o`` (Allow once), so the
program runs and its output goes back to the model. With stdin a pipe nobody can answer, and
the program is not run. A server of the user's ``mcp.json`` (the SDK demo server) offers its
tools to the same chat.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, tool_call_reply
from tests.support.wire_cases import TARGETS
from tests.support.workspace import Workspace

TARGET = TARGETS["openai"]
CALL = {"command": "git --version"}


def _workspace(tmp_path: Path, replay: ReplayServer) -> Workspace:
    workspace = Workspace(tmp_path, replay.url)
    workspace.write(
        "agents/tools.toml",
        f'schema_version = 1\nextends = "{TARGET.agent}"\nname = "Tools"\nenable_tools = true\n',
    )
    replay.script(TARGET.route, [tool_call_reply("terminal", CALL), chat_reply("Done.")])
    return workspace


def _tool_result(replay: ReplayServer) -> str:
    second = [r for r in replay.requests if r.path.endswith(TARGET.route)][1]
    return str(second.json["messages"][-1]["content"])


def test_the_user_allows_a_program_on_the_terminal(tmp_path: Path, replay: ReplayServer) -> None:
    workspace = _workspace(tmp_path, replay)
    terminal, user = pty.openpty()
    os.write(terminal, b"o\n")  # typed ahead; the terminal keeps it until the question reads it
    done = subprocess.run(
        workspace.command("chat", "--agent", "Tools", "Which git do I have?"),
        env=workspace.env,
        cwd=workspace.project,
        stdin=user,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    os.close(user)
    os.close(terminal)
    assert done.returncode == 0, done.stderr
    assert "the model wants to run a program with the tool terminal" in done.stderr
    assert "[tool] terminal -> ok" in done.stderr, done.stderr
    assert done.stdout == "Done.\n"
    assert "git version" in _tool_result(replay)


def test_with_no_terminal_to_ask_the_program_is_not_run(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = _workspace(tmp_path, replay)
    result = workspace.run("chat", "--agent", "Tools", "Which git do I have?")
    assert result.returncode == 0, result.describe()
    assert "Allow it?" not in result.stderr
    assert "[tool] terminal -> error" in result.stderr, result.describe()
    assert "terminal was not run" in _tool_result(replay)


def test_the_servers_of_mcp_json_offer_their_tools(tmp_path: Path, replay: ReplayServer) -> None:
    workspace = Workspace(tmp_path, replay.url)
    demo = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_demo_server"],
        "cwd": str(Path(__file__).resolve().parents[2]),
    }
    workspace.write("mcp.json", json.dumps({"mcpServers": {"demo": demo}}))
    replay.script(
        TARGET.route, [tool_call_reply("demo__echo", {"text": "hi"}), chat_reply("It echoed.")]
    )
    result = workspace.run("chat", "--agent", TARGET.agent, "Echo hi")
    assert result.returncode == 0, result.describe()
    assert "[tool] demo__echo -> ok" in result.stderr, result.describe()
    assert "echo: hi" in _tool_result(replay)
    offered = [t["function"]["name"] for t in replay.requests[0].json["tools"]]
    assert "demo__echo" in offered and "read_file" in offered
