"""The chat's tools in Emacs, through both snippets (Eglot and lsp-mode) in a real Emacs 30.

An agent with tools calls ``terminal``; the server asks permission with
``window/showMessageRequest``, which both LSP clients ask with ``completing-read`` (scripted) —
only because the snippets tell the server they answer it (``window.showMessage``), else the
server denies without asking. A ``fileEdit`` event is shown as a diff block; its keys send
``qodeassist/chat/editFile`` and rewrite its header, as a later event of the same edit does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.snippets.conftest import EDITORS
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, sse_reply

TOOL_AGENT = """schema_version = 1
extends      = "Embedded Chat"
name         = "Tool Chat"
enable_tools = true
"""
CALL = {"command": "git --version"}


def terminal_call() -> bytes:
    """An OpenAI chat stream in which the model calls ``terminal``."""
    call = {"index": 0, "id": "call_1", "type": "function"}
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                **call,
                                "function": {"name": "terminal", "arguments": json.dumps(CALL)},
                            }
                        ]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


@pytest.mark.parametrize(("client", "answer"), [("eglot", "Deny"), ("lsp-mode", "Allow once")])
def test_permission_prompt_and_edit_blocks(
    run_emacs, replay: ReplayServer, home: Path, client: str, answer: str
) -> None:
    (home / "config" / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
    (home / "config" / "pipelines.toml").write_text('[pipelines]\nchat_assistant = ["Tool Chat"]\n')
    replay.script("/v1/chat/completions", [sse_reply(terminal_call()), chat_reply("Here it is.")])
    snippet = EDITORS / "emacs" / f"qodeassist-{client}.el"
    run = run_emacs("tools_scenario", client=client, snippet=str(snippet), answer=answer)
    report = run.report
    why = run.explain()

    # The server asked (the client claimed window.showMessage) through completing-read.
    prompt, *choices = report["asked"]
    assert prompt and "the model wants to run a program with the tool terminal" in prompt, why
    assert choices == ["Allow once", "Allow for this chat", "Deny"], why
    result = replay.requests[1].json["messages"][-1]
    if answer == "Deny":
        assert "terminal was not run: the user" in result["content"], result
    else:
        assert "git version" in result["content"], result
    chat = report["chatBuffer"]
    assert '[tool terminal (execute) {"command":"git --version"}]' in chat, why
    assert ("[✗ terminal: " if answer == "Deny" else "[✓ terminal: ") in chat, why
    assert "Here it is." in chat and "[finished: end_turn]" in chat, why

    # The edit block: header with keys over the diff; `a` then `u` sent editFile and rewrote it.
    assert report["proposed"].endswith(
        "📝 Edit add.py: pending (a: apply, r: reject)\n--- a/add.py\n+++ b/add.py\n"
        "@@ -2 +2 @@\n-    return \n+    return a + b\n"
    ), why
    assert "📝 Edit add.py: applied (u: undo)\n--- a/add.py" in report["applied"], why
    assert report["sent"] == [["e1", "apply"], ["e1", "undo"]], why
    assert "📝 Edit add.py: rejected\n--- a/add.py" in report["final"], why
    assert report["final"].count("📝") == 1, why
