"""Tool calls over ACP: ``tool_call`` updates, ``session/request_permission``, edits, ``fs/*``.

The model (a replayed OpenAI stream) calls ``edit_file`` on ``greet.py``; write tools are
``ask``. An allowed edit is applied at once after the checkpoint; a rejected or unanswered one
changes nothing; a client with ``fs`` is the file's truth and writes it; a failed client write
leaves everything as it was and the call ``failed``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from acp import text_block

from tests.e2e.acp.conftest import Editor, running_agent
from tests.e2e.lsp.test_file_edits import tool_call_reply
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

ROUTE = "/v1/chat/completions"
OLD = "def greet(name):\n    return 'hello ' + name\n"
NEW = "def greet(name):\n    return f'hello {name}'\n"
EDITS = (
    "<<<<<<< SEARCH\n    return 'hello ' + name\n=======\n    return f'hello {name}'\n"
    ">>>>>>> REPLACE\n"
)


def script_edit(replay: ReplayServer, calls: int = 1) -> None:
    for index in range(calls):
        replay.script(
            ROUTE,
            [
                tool_call_reply(f"call_{index}", "edit_file", {"path": "greet.py", "edits": EDITS}),
                chat_reply("Done."),
            ],
        )


def editing(
    home: Path, replay: ReplayServer, disk: str = OLD, calls: int = 1
) -> tuple[Path, Editor]:
    """``greet.py`` holding ``disk``, the model scripted to edit it, and a fresh editor."""
    target = home / "project/greet.py"
    target.write_text(disk)
    script_edit(replay, calls=calls)
    return target, Editor()


async def one_turn(home: Path, editor: Editor, *args: str, prompts: int = 1) -> list[str]:
    reasons = []
    async with running_agent(home, editor, *args) as conn:
        session = await conn.new_session(cwd=str(home / "project"), mcp_servers=[])
        for _ in range(prompts):
            answer = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("Use an f-string")]
            )
            reasons.append(answer.stop_reason)
    return reasons


def told(replay: ReplayServer) -> str:
    """What the model was told about its call (the tool message of the last request)."""
    tools = [m for m in replay.last.json["messages"] if m["role"] == "tool"]
    return str(tools[-1]["content"])


def last_status(editor: Editor, call_id: str) -> Any:
    updates = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == call_id]
    return updates[-1].status


async def test_an_allowed_edit_is_applied_at_once_after_its_checkpoint(
    acp_home: Path, replay: ReplayServer
) -> None:
    target, editor = editing(acp_home, replay)
    assert await one_turn(acp_home, editor) == ["end_turn"]

    [start] = editor.of_kind("tool_call")
    assert (start.tool_call_id, start.kind, start.status) == ("call_0", "edit", "pending")
    assert start.locations[0].path == str(acp_home / "project/greet.py")
    [(asked, options)] = editor.permission_requests
    assert [o.option_id for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert asked.tool_call_id == "call_0"
    diff = asked.content[0]
    assert (diff.type, diff.old_text, diff.new_text) == ("diff", OLD, NEW)
    assert target.read_text() == NEW
    assert last_status(editor, "call_0") == "completed"
    shown = [u for u in editor.of_kind("tool_call_update") if u.content]
    assert shown[0].content[0].type == "diff" and shown[0].content[0].new_text == NEW
    assert told(replay).startswith("Applied: change greet.py")
    checkpoints = list((acp_home / "data/checkpoints").rglob("*"))
    assert any(p.is_file() and p.read_bytes() == OLD.encode() for p in checkpoints)


async def test_a_rejected_edit_changes_nothing_and_loads_as_failed(
    acp_home: Path, replay: ReplayServer
) -> None:
    target, editor = editing(acp_home, replay)
    editor.answer = "reject_once"
    async with running_agent(acp_home, editor) as conn:
        cwd = str(acp_home / "project")
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Edit")])
        assert answer.stop_reason == "end_turn"
        assert target.read_text() == OLD
        assert last_status(editor, "call_0") == "failed"
        assert "the user denied it" in told(replay)
        editor.updates.clear()
        await conn.load_session(cwd=cwd, session_id=session.session_id, mcp_servers=[])
    # session/load replays the refused call as it ended: failed, not completed.
    assert last_status(editor, "call_0") == "failed"


async def test_an_unanswered_permission_question_times_out_as_a_reject(
    acp_home: Path, replay: ReplayServer
) -> None:
    target, editor = editing(acp_home, replay)
    editor.answer = None
    reasons = await one_turn(acp_home, editor, "--permission-timeout", "1")
    assert reasons == ["end_turn"]
    assert target.read_text() == OLD
    assert "did not answer" in told(replay)


async def test_allow_for_the_session_is_asked_once(acp_home: Path, replay: ReplayServer) -> None:
    target, editor = editing(acp_home, replay, calls=2)
    editor.answer = "allow_always"
    # The second call's blocks no longer match (the file was changed): the model is told.
    assert await one_turn(acp_home, editor, prompts=2) == ["end_turn", "end_turn"]
    assert len(editor.permission_requests) == 1
    assert target.read_text() == NEW


async def test_with_fs_the_editor_buffer_is_read_and_written(
    acp_home: Path, replay: ReplayServer
) -> None:
    target, editor = editing(acp_home, replay, "stale disk copy\n")
    editor.fs = True
    editor.buffers[str(target)] = OLD  # unsaved in the editor: the truth
    assert await one_turn(acp_home, editor) == ["end_turn"]
    assert editor.writes == [(str(target), NEW)]
    assert target.read_text() == "stale disk copy\n"
    [(asked, _options)] = editor.permission_requests
    assert asked.content[0].old_text == OLD


async def test_a_failed_client_write_reports_the_edit_failed_and_writes_nothing(
    acp_home: Path, replay: ReplayServer
) -> None:
    target, editor = editing(acp_home, replay)
    editor.fs = True
    editor.fail_writes = True
    assert await one_turn(acp_home, editor) == ["end_turn"]
    assert editor.writes == [] and editor.buffers == {}
    assert target.read_text() == OLD
    assert last_status(editor, "call_0") == "failed"
    assert "the buffer is read-only" in told(replay)


async def test_with_fs_read_file_reads_the_editor_buffer(
    acp_home: Path, replay: ReplayServer
) -> None:
    target = acp_home / "project/greet.py"
    target.write_text("on disk\n")
    replay.script(
        ROUTE,
        [tool_call_reply("call_r", "read_file", {"path": "greet.py"}), chat_reply("Read it.")],
    )
    editor = Editor()
    editor.fs = True
    editor.buffers[str(target)] = "unsaved in the editor\n"
    assert await one_turn(acp_home, editor) == ["end_turn"]
    assert "unsaved in the editor" in told(replay) and "on disk" not in told(replay)
    [start] = editor.of_kind("tool_call")
    assert start.kind == "read" and editor.permission_requests == []  # read = allow


async def test_with_a_terminal_commands_run_in_the_editor(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(
        ROUTE,
        [tool_call_reply("call_t", "terminal", {"command": "git status --short"}),
         chat_reply("Clean.")],
    )  # fmt: skip
    editor = Editor()
    editor.terminal = True
    assert await one_turn(acp_home, editor) == ["end_turn"]
    [(program, args, cwd)] = editor.commands  # git runs with its safety options first
    assert program == "git" and args[-2:] == ["status", "--short"]
    assert "core.hooksPath=/dev/null" in args and cwd == str(acp_home / "project")
    assert editor.released == ["term-1"]
    assert "editor ran git " in told(replay) and "status --short" in told(replay)
    [start] = editor.of_kind("tool_call")
    assert start.kind == "execute"
    live = [
        u for u in editor.of_kind("tool_call_update") if u.content and u.tool_call_id == "call_t"
    ]
    assert live[0].content[0].type == "terminal" and live[0].content[0].terminal_id == "term-1"


async def test_with_a_terminal_the_build_runs_in_the_editor(
    acp_home: Path, replay: ReplayServer
) -> None:
    settings = acp_home / "config/settings.toml"
    settings.write_text('[tools]\nbuild_command = "make all"\n' + settings.read_text())
    replay.script(ROUTE, [tool_call_reply("call_b", "build", {}), chat_reply("Built.")])
    editor = Editor()
    editor.terminal = True
    assert await one_turn(acp_home, editor) == ["end_turn"]
    assert editor.commands == [("make", ["all"], str(acp_home / "project"))]
    assert "editor ran make all" in told(replay)


async def test_the_clients_mcp_servers_join_the_hub(acp_home: Path, replay: ReplayServer) -> None:
    from acp.schema import McpServerStdio

    replay.script(
        ROUTE,
        [tool_call_reply("call_m", "demo__echo", {"text": "from the editor"}), chat_reply("ok")],
    )
    editor = Editor()
    server = McpServerStdio(
        name="demo", command=sys.executable, args=["-m", "tests.support.mcp_demo_server"], env=[]
    )
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[server])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("echo")])
    assert answer.stop_reason == "end_turn"
    assert told(replay) == "echo: from the editor"


async def test_an_edit_outside_the_workspace_is_refused_before_the_user_is_asked(
    acp_home: Path, replay: ReplayServer
) -> None:
    outside = acp_home / "outside.py"
    outside.write_text(OLD)
    replay.script(
        ROUTE,
        [tool_call_reply("call_o", "edit_file", {"path": str(outside), "edits": EDITS}),
         chat_reply("Refused.")],
    )  # fmt: skip
    editor = Editor()
    editor.fs = True
    assert await one_turn(acp_home, editor) == ["end_turn"]
    assert editor.writes == [] and outside.read_text() == OLD
    assert told(replay).startswith("Error:") and "outside" in told(replay)
    # Refused before the user is asked: no question about a change that cannot happen.
    assert editor.permission_requests == []
    assert "the user was not asked" in told(replay).lower()
    assert last_status(editor, "call_o") == "failed"


async def test_too_many_tool_rounds_stop_with_max_turn_requests(
    acp_home: Path, replay: ReplayServer
) -> None:
    settings = acp_home / "config/settings.toml"
    settings.write_text("[tools]\nmax_tool_continuations = 1\n" + settings.read_text())
    (acp_home / "project/a.txt").write_text("a\n")
    call = {"path": "a.txt"}
    replay.script(
        ROUTE,
        [tool_call_reply("c1", "read_file", call), tool_call_reply("c2", "read_file", call)],
    )
    assert await one_turn(acp_home, Editor()) == ["max_turn_requests"]
