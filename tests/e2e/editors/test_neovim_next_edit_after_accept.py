"""Neovim with the plugin: accepting ghost text asks for the next edit at once and shows it.

The scenario (``lua/plugin_next_edit_after_accept.lua``) types in insert mode, accepts the
suggestion with ``<Tab>``; the plugin then sends ``textDocument/copilotInlineEdit`` right away
(its edit-pause debounce is set far beyond the test's time, so only the after-accept trigger
can ask), the server answers with the recorded rewrite (the accepted text is in the edit
history it sends), the edit is shown, and ``<Esc>`` ``<Tab>`` ``<Tab>`` jump to and apply it.
Both inline renderers: Neovim 0.12's native client and the plugin's extmarks on 0.11.
"""

from __future__ import annotations

import pytest

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

ACCEPTED = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"
TYPED = ACCEPTED.replace("def add(a, b)", "def add(a: int, b: int) -> int")


@pytest.mark.parametrize(
    ("version", "mode", "renderer"),
    [("0.12", "auto", "native"), ("0.11", "auto", "extmark")],
    ids=["0.12-native", "0.11-extmark"],
)
def test_accepting_ghost_text_shows_the_next_edit(
    plugin, replay: ReplayServer, version: str, mode: str, renderer: str
) -> None:
    replay.script("/v1/completions", [completion_reply(" + ", "b"), completion_reply(repeat=5)])
    replay.script("/v1/chat/completions", chat_reply(f"<updated>\n{TYPED}</updated>", repeat=3))
    run = plugin(
        "plugin_next_edit_after_accept",
        version,
        mode,
        typed="a",
        pause_after_insert=True,
        setup={"next_edit": {"enabled": True, "debounce_ms": 60000}},
    )
    why = run.explain()
    assert run.report["inline_mode"] == renderer, why

    asked = run.requests("textDocument/copilotInlineEdit")
    assert asked, "no next-edit request after the accept" + why
    first = asked[0]
    # Asked on the accepted text (version), at the cursor behind it, without the debounce.
    assert first["params"]["position"] == {"line": 1, "character": 16}, first
    answered = [r for r in asked if r.get("result") and r["result"]["edits"]]
    assert answered, why
    [edit] = answered[0]["result"]["edits"]
    assert edit["range"]["start"]["line"] == 0 and edit["range"]["end"]["line"] == 0, edit
    # The server saw the accepted completion as the user's last edit.
    chat = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    prompt = chat[0].json["messages"][-1]["content"]
    assert "updated:\n    return a + b" in prompt, prompt

    shown = run.snapshot("shown")
    assert shown["lines"][1] == "    return a + b", why
    assert shown["mode"] == "i", why  # shown while still typing, right after the accept
    virtual = next(m for m in shown["marks"] if m["virt_lines"])
    assert virtual["virt_lines"] == ["def add(a: int, b: int) -> int:"], shown

    applied = run.snapshot("applied")
    assert applied["lines"] == TYPED.splitlines(), why
    commands = [c["params"]["command"] for c in run.requests("workspace/executeCommand")]
    assert commands == ["qodeassist.accepted", "qodeassist.nextEditAccepted"], commands
    status = run.report["status"]
    assert status["completion"]["accepted"] == 1, status
    assert status["nextEdit"]["accepted"] == 1, status
