"""An edit that breaks its file, in Emacs through both snippets (issue 47).

An agent with tools proposes an ``edit_file`` change that leaves ``add.py`` unparsable (the
server's ``parseCheck`` is ``broken``). The permission question reaches ``completing-read``
readable: the title line, then the change as diff lines with their indentation, and Eglot
offers the first action as the initial input. The chat buffer's edit block shows the warning
under its header, and ``a`` asks again with ``yes-or-no-p``: "no" leaves the edit pending and
the buffer as it was, "yes" applies it.
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
BEFORE = "def add(a, b):\n    return \n"
BROKEN = {
    "path": "add.py",
    "edits": [{"search": "def add(a, b):\n    return \n", "replace": "def add(a, b):\nreturn a\n"}],
}


@pytest.mark.parametrize(("client", "answer"), [("eglot", "no"), ("lsp-mode", "yes")])
def test_an_edit_that_breaks_the_file_warns_and_asks_again(
    run_emacs, replay: ReplayServer, home: Path, client: str, answer: str
) -> None:
    (home / "config" / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
    (home / "config" / "pipelines.toml").write_text('[pipelines]\nchat_assistant = ["Tool Chat"]\n')
    replay.script(
        "/v1/chat/completions", [tool_call_reply("edit_file", BROKEN), chat_reply("Done.")]
    )
    snippet = EDITORS / "emacs" / f"qodeassist-{client}.el"
    run = run_emacs("edit_broken_scenario", client=client, snippet=str(snippet), answer=answer)
    report = run.report
    why = run.explain()

    # The permission question: readable lines, indentation kept, not JSON.
    [[prompt, initial, *choices]] = report["questions"]
    assert choices == ["Allow once", "Allow for this chat", "Deny"], why
    title = "QodeAssist: the model wants to change files with the tool edit_file on add.py."
    assert title in prompt, prompt
    assert "\n-def add(a, b):\n-    return \n+def add(a, b):\n+return a" in prompt, prompt
    if client == "eglot":  # Eglot proposes the first action (RET takes it)
        assert initial == "Allow once", why

    # The block warns under its header; `a` asked again.
    chat = report["proposed"]
    assert "📝 Edit add.py: pending (a: apply, r: reject)\n⚠ This edit breaks the file: " in chat
    warning = chat.split("⚠ This edit breaks the file: ", 1)[1].split("\n", 1)[0]
    assert "IndentationError" in warning, why
    [confirm] = report["confirmed"]
    assert confirm.startswith("QodeAssist: this edit breaks add.py (the file compiled"), confirm
    assert confirm.endswith("Apply it anyway? "), confirm
    if answer == "no":
        assert report["buffer"] == BEFORE, why
        assert "📝 Edit add.py: pending" in report["final"], why
    else:
        assert report["buffer"] == "def add(a, b):\nreturn a\n", why
        # The rewritten header keeps the warning under it, once.
        assert "📝 Edit add.py: applied" in report["final"], why
        assert report["final"].count("⚠ This edit breaks the file") == 1, why
