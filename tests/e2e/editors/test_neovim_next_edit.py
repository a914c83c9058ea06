"""Neovim 0.12 with the plugin: a next edit is shown, jumped to and accepted with real keys.

The scenario (``lua/plugin_next_edit.lua``) renames a function in its definition with real
keystrokes; after the edit pause the plugin asks the server with
``textDocument/copilotInlineEdit`` (the loopback provider answers with the recorded rewrite),
shows the edit (the replaced range highlighted, the line after the edit as a virtual line),
``<Tab>`` jumps to it and ``<Tab>`` again applies it and runs its command.
"""

from __future__ import annotations

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

WINDOW = "def plus(a, b):\n    return \n\nprint(plus(1, 2))\n"


def test_a_next_edit_is_shown_jumped_to_and_accepted(plugin, replay: ReplayServer) -> None:
    replay.script("/v1/chat/completions", chat_reply(f"<updated>\n{WINDOW}</updated>", repeat=4))
    run = plugin(
        "plugin_next_edit",
        "0.12",
        setup={
            "inline": {"enabled": False},
            "next_edit": {"enabled": True, "debounce_ms": 100},
        },
    )
    why = run.explain()

    asked = [r for r in run.requests("textDocument/copilotInlineEdit") if r.get("result")]
    assert asked, "the plugin never asked for a next edit" + why
    [edit] = asked[-1]["result"]["edits"]
    assert edit["text"] == "plus" and edit["range"] == {
        "start": {"line": 3, "character": 6},
        "end": {"line": 3, "character": 9},
    }, edit
    # The server got the rename as an original/updated block.
    prompt = replay.last_to("/v1/chat/completions").json["messages"][-1]["content"]
    assert "original:\ndef add(a, b):\nupdated:\ndef plus(a, b):" in prompt, prompt

    shown = run.snapshot("shown")
    assert shown["lines"][3] == "print(add(1, 2))", why  # nothing applied yet
    highlight = next(m for m in shown["marks"] if m.get("hl_group"))
    assert (highlight["row"], highlight["col"], highlight["end_col"]) == (3, 6, 9), shown
    virtual = next(m for m in shown["marks"] if m.get("virt_lines"))
    assert virtual["virt_lines"] == ["print(plus(1, 2))"], shown

    assert run.snapshot("jumped")["cursor"] == [4, 6], why
    accepted = run.snapshot("accepted")
    assert accepted["lines"] == WINDOW.splitlines(), why
    assert accepted["marks"] == [], why
    [command] = run.requests("workspace/executeCommand")
    assert command["params"]["command"] == "qodeassist.nextEditAccepted", command
    assert command["result"] is True, why
    status = run.report["status"]["nextEdit"]
    assert status["accepted"] == 1 and status["shown"] >= 1, status
