"""The chat's tools in Emacs, through both snippets (Eglot and lsp-mode) in a real Emacs 30.

An agent with tools calls ``terminal`` and ``edit_file``; the server asks permission with
``window/showMessageRequest``, which both LSP clients ask with ``completing-read`` (scripted) —
only because the snippets tell the server they answer it (``window.showMessage``), else the
server denies without asking. The proposed edit is a diff block in the chat buffer; its keys
send ``qodeassist/chat/editFile``, the server changes the buffer through
``workspace/applyEdit`` (apply, then undo), and the block's header follows the status.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.snippets.conftest import EDITORS
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, tool_call_reply

TOOL_AGENT = """schema_version = 1
extends      = "Embedded Chat"
name         = "Tool Chat"
enable_tools = true
"""
CALL = {"command": "git --version"}
EDIT = {
    "path": "add.py",
    "edits": [{"search": "    return \n", "replace": "    return a + b\n"}],
}


@pytest.mark.parametrize(("client", "answer"), [("eglot", "Deny"), ("lsp-mode", "Allow once")])
def test_permissions_and_an_edit_applied_and_undone_from_the_chat_buffer(
    run_emacs, replay: ReplayServer, home: Path, client: str, answer: str
) -> None:
    (home / "config" / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
    (home / "config" / "pipelines.toml").write_text('[pipelines]\nchat_assistant = ["Tool Chat"]\n')
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("terminal", CALL),
            tool_call_reply("edit_file", EDIT),
            chat_reply("Here it is."),
        ],
    )
    snippet = EDITORS / "emacs" / f"qodeassist-{client}.el"
    run = run_emacs("tools_scenario", client=client, snippet=str(snippet), answer=answer)
    report = run.report
    why = run.explain()

    # The server asked (the client claimed window.showMessage) through completing-read.
    terminal_question, edit_question = report["questions"]
    prompt, *choices = terminal_question
    assert "the model wants to run a program with the tool terminal" in prompt, why
    assert choices == ["Allow once", "Allow for this chat", "Deny"], why
    assert "the model wants to change files with the tool edit_file" in edit_question[0], why
    # lsp-mode asks for code actions at point, which also warms the completion model.
    chats = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    result = chats[1].json["messages"][-1]
    if answer == "Deny":
        assert "terminal was not run: the user" in result["content"], result
    else:
        assert "git version" in result["content"], result
    chat = report["proposed"]
    assert '[tool terminal (execute) {"command":"git --version"}]' in chat, why
    assert ("[✗ terminal: " if answer == "Deny" else "[✓ terminal: ") in chat, why
    assert "[tool edit_file (write) " in chat and "[✓ edit_file: Proposed: " in chat, why
    assert "Here it is." in chat and "[finished: end_turn]" in chat, why

    # The edit block: its header with the keys over the diff; `a` applied it to the buffer
    # (workspace/applyEdit), `u` gave the old text back, and the header followed each time.
    assert "📝 Edit add.py: pending (a: apply, r: reject)\n--- a/add.py\n+++ b/add.py\n" in chat
    assert "\n-    return \n+    return a + b\n" in chat, why
    applied = "📝 Edit add.py: applied — applied to add.py (u: undo)\n--- a/add.py"
    assert applied in report["applied"], why
    assert "📝 Edit add.py: undone" in report["final"], why
    assert report["final"].count("📝") == 1, why
    edits = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    assert len(edits) == 3, why


@pytest.mark.parametrize("client", ["eglot", "lsp-mode"])
def test_the_diagnostics_tool_gets_what_the_editor_shows(
    run_emacs, replay: ReplayServer, home: Path, client: str
) -> None:
    (home / "config" / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
    (home / "config" / "pipelines.toml").write_text('[pipelines]\nchat_assistant = ["Tool Chat"]\n')
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("diagnostics", {"path": "add.py"}),
            tool_call_reply("diagnostics", {}),
            chat_reply("x is undefined."),
        ],
    )
    snippet = EDITORS / "emacs" / f"qodeassist-{client}.el"
    run = run_emacs("diagnostics_scenario", client=client, snippet=str(snippet))
    why = run.explain()

    assert "[finished: end_turn]" in run.report["chat"], why
    chats = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    assert len(chats) == 3, why
    # Eglot's comes from Flymake (column 12, the `x`), lsp-mode's from a server's publish.
    for request in chats[1:]:
        result = request.json["messages"][-1]["content"]
        assert "add.py:2:12: error: undefined name 'x'" in result, result
