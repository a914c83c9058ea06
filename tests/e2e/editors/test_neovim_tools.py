"""The Neovim plugin's side of the tools (issue #18): chat tool and edit blocks, the edit keys,
the server's prompts through ``vim.ui.select`` and the ``qodeassist/diagnostics`` answer.

``plugin_tool_blocks`` plays the server's chat events into the plugin (no server), so the
rendering is pinned exactly; ``plugin_prompt`` has the real server ask
``window/showMessageRequest`` (the refactor guard's question) and answers it through the
plugin's own handler; ``plugin_edit_apply`` is the whole path: a model's ``edit_file`` call
replayed by the loopback provider, the diff in the chat buffer, the apply and undo keys.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.editors.conftest import RunPlugin, RunScenario
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

DIFF_LINES = ["--- a/add.py", "+++ b/add.py", "@@ -2 +2 @@", "-    return ", "+    return a + b"]


@pytest.mark.parametrize("version", ["0.12", "0.11"])
def test_chat_buffer_shows_tool_and_edit_blocks(neovim: RunScenario, version: str) -> None:
    run = neovim("plugin_tool_blocks", version=version)
    why = run.explain()

    rendered = run.snapshot("rendered")
    assert rendered["chat_lines"] == [
        "**🔧 read_file** · read `call_1`",
        "```json",
        '{"path":"add.py"}',
        "```",
        "",
        "**✅ read_file**: def add(a, b):",
        "````result",
        "def add(a, b):",
        "    return ",
        "",
        "````",
        "",
        "📝 **Edit** `add.py` · pending · ga apply · gr reject",
        "```diff",
        *DIFF_LINES,
        "```",
        "",
        "I changed add.",
    ], why
    # The tool's output is folded away under its summary line.
    assert rendered["folds"] == [[7, 11, "📄 result (3 lines)"]], why
    assert {"ga", "gr", "gu"} <= set(rendered["maps"]), rendered["maps"]
    # A later status of the same edit (from another request) rewrote its block in place.
    applied = run.snapshot("applied")["chat_lines"]
    assert applied[12] == "📝 **Edit** `add.py` · applied · gu undo", why
    assert applied[:12] == rendered["chat_lines"][:12], why
    assert applied[13:] == rendered["chat_lines"][13:], why
    # qodeassist/diagnostics: loaded the file's buffer and answered from vim.diagnostic.
    error = {
        "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}},
        "severity": 1,
        "message": "'(' was never closed",
        "source": "pyright",
        "code": "syntax",
    }
    [answer] = run.report["diagnostics"]["items"]
    assert answer["uri"].endswith("/other.py") and answer["diagnostics"] == [error], answer
    # With a null uri: every loaded buffer that has diagnostics.
    assert run.report["all_diagnostics"] == {"items": [answer]}, run.report["all_diagnostics"]


NUMBERS = ", ".join(f"{i}.0" for i in range(1, 88))
"""An answer the refactor guard refuses (it repeats itself): the server asks before applying."""
TOTAL = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"


@pytest.mark.parametrize(("version", "answer"), [("0.12", "Apply anyway"), ("0.11", "Discard")])
def test_server_questions_are_asked_with_vim_ui_select(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path, version: str, answer: str
) -> None:
    source = tmp_path / "project" / "total.py"
    source.write_text(TOTAL)
    replay.script("/v1/chat/completions", chat_reply(NUMBERS))
    run = plugin("plugin_prompt", version, file=str(source), answer=answer)
    why = run.explain()

    _, _, question = run.report["ui"]
    assert question["ui_kind"] == "qodeassist.permission", question
    assert question["prompt"].startswith("QodeAssist: ") and "repeats itself" in question["prompt"]
    assert "\n" not in question["prompt"], question
    assert question["items"] == ["Apply anyway", "Discard"], question
    [command] = run.requests("workspace/executeCommand")
    assert command["result"]["refused"] is True, why
    assert command["result"]["applied"] is (answer == "Apply anyway"), why
    lines = run.snapshot("answered")["lines"]
    if answer == "Apply anyway":
        assert lines == ["def total(xs):", NUMBERS], why
    else:
        assert lines == TOTAL.splitlines() and not run.report["changed"], why
