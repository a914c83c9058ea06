"""The Neovim plugin's side of the tools (issue #18): chat tool and edit blocks, the edit keys,
the server's prompts through ``vim.ui.select`` and the ``qodeassist/diagnostics`` answer.

``plugin_tool_blocks`` plays the server's chat events into the plugin (no server), so the
rendering is pinned exactly; ``plugin_prompt`` has the real server ask
``window/showMessageRequest`` (the refactor guard's question) and answers it through the
plugin's own handler; ``plugin_edit_apply`` is the whole path: a model's ``edit_file`` call
replayed by the loopback provider, the diff in the chat buffer, the apply and undo keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.editors.conftest import DOC, RunPlugin, RunScenario
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, sse_reply

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
    # Issue 47: one prefix, the safe choice first, the diff beside the picker with its indentation.
    assert question["prompt"].startswith("QodeAssist refactor: "), question
    assert "repeats itself" in question["prompt"] and "\n" not in question["prompt"], question
    assert question["items"] == ["Discard", "Apply anyway"], question
    [detail] = question["floats"]
    assert detail[:3] == ["--- selection", "+++ result", "@@ -1,4 +1 @@"], detail
    assert "-    for x in xs:" in detail and "-        s = s + x" in detail, detail
    [command] = run.requests("workspace/executeCommand")
    assert command["result"]["refused"] is True, why
    assert command["result"]["applied"] is (answer == "Apply anyway"), why
    lines = run.snapshot("answered")["lines"]
    if answer == "Apply anyway":
        assert lines == ["def total(xs):", NUMBERS], why
    else:
        assert lines == TOTAL.splitlines() and not run.report["changed"], why


TOOL_AGENT = """schema_version = 1
extends      = "Embedded Chat"
name         = "Tool Chat"
enable_tools = true
"""
TOOL_PIPELINES = """[pipelines]
chat_assistant = ["Tool Chat", "Embedded Chat"]
"""


def with_tool_agent(config: Path) -> None:
    """Add the "Tool Chat" agent (the embedded chat with tools) to the chat agents."""
    (config / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
    (config / "pipelines.toml").write_text(TOOL_PIPELINES)


def tool_call_reply(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    """An OpenAI chat stream in which the model calls one tool (arguments in two pieces)."""
    text = json.dumps(arguments)
    half = len(text) // 2
    call = {"index": 0, "id": call_id, "type": "function", "function": {"name": name}}
    chunks: list[dict[str, Any]] = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "role": "assistant",
                        "tool_calls": [{**call, "function": {"name": name, "arguments": ""}}],
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": text[:half]}}]},
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": text[half:]}}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return sse_reply(body.encode())


@pytest.mark.parametrize("answer", ["Deny", "Allow once"])
def test_the_tool_kit_asks_the_plugin_for_diagnostics_and_permission(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path, answer: str
) -> None:
    with_tool_agent(tmp_path / "config")
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "diagnostics", {"path": "add.py"}),
            tool_call_reply("call_2", "terminal", {"command": "git --version"}),
            chat_reply("The file has one warning."),
        ],
    )
    run = plugin("plugin_tools", "0.12", agent="Tool Chat", message="Check add.py", answer=answer)
    why = run.explain()

    # Round 2 got the diagnostics the plugin answered from vim.diagnostic (1-based positions).
    diagnostics = replay.requests[1].json["messages"][-1]
    assert diagnostics["role"] == "tool" and diagnostics["tool_call_id"] == "call_1", diagnostics
    assert "add.py:2:5: warning: return without a value [testlint]" in diagnostics["content"]
    # The execute tool asked through the plugin's picker; the answer decided.
    [question] = run.report["ui"]
    assert question["ui_kind"] == "qodeassist.permission", question
    assert question["prompt"].startswith("QodeAssist: the model wants to run a program"), question
    assert "terminal" in question["prompt"], question
    assert question["items"] == ["Allow once", "Allow for this chat", "Deny"], question
    assert question["floats"] == [["$ git --version"]], question  # the command line, not JSON
    terminal = replay.requests[2].json["messages"][-1]
    assert terminal["tool_call_id"] == "call_2", terminal
    if answer == "Deny":
        assert "terminal was not run: the user" in terminal["content"], terminal
    else:
        assert "git version" in terminal["content"], terminal
    # The chat buffer shows both calls with their class, and their results.
    lines = run.snapshot("answered")["chat_lines"]
    assert "**🔧 diagnostics** · read `call_1`" in lines, why
    assert "**🔧 terminal** · execute `call_2`" in lines, why
    [diag_result] = [line for line in lines if line.startswith("**✅ diagnostics**")]
    assert "0 errors, 1 other diagnostics" in diag_result, why
    terminal_result = [line for line in lines if "terminal**:" in line]
    assert len(terminal_result) == 1, why
    assert terminal_result[0].startswith("**❌" if answer == "Deny" else "**✅"), terminal_result
    assert lines[-1] == "The file has one warning.", why


def test_an_edit_from_the_chat_is_applied_and_undone_with_its_keys(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path
) -> None:
    with_tool_agent(tmp_path / "config")
    edit = {
        "path": "add.py",
        "edits": [
            {
                "search": "def add(a, b):\n    return \n",
                "replace": "def add(a, b):\n    return a + b\n",
            }
        ],
    }
    replay.script(
        "/v1/chat/completions",
        [tool_call_reply("call_1", "edit_file", edit), chat_reply("I proposed the fix.")],
    )
    run = plugin(
        "plugin_edit_apply",
        "0.12",
        agent="Tool Chat",
        message="Make add return the sum",
        applied_line="    return a + b",
    )
    why = run.explain()

    # The write tool asked first, through the plugin's picker; the user allowed it once.
    [permission] = run.report["ui"]
    assert permission["ui_kind"] == "qodeassist.permission", permission
    assert "edit_file on add.py" in permission["prompt"], permission
    assert permission["items"] == ["Allow once", "Allow for this chat", "Deny"], permission
    assert permission["floats"] == [
        ["-def add(a, b):", "-    return ", "+def add(a, b):", "+    return a + b"]
    ], permission
    # The chat buffer shows the call, its result and the diff, pending, with the keys.
    proposed = run.snapshot("proposed")
    lines = proposed["chat_lines"]
    assert "**🔧 edit_file** · write `call_1`" in lines, why
    [header] = [line for line in lines if line.startswith("📝")]
    assert header.startswith("📝 **Edit** `add.py` · pending") and "ga apply" in header, why
    assert "-    return " in lines and "+    return a + b" in lines, why
    assert "I proposed the fix." in lines, why
    assert proposed["lines"] == DOC.splitlines(), why  # nothing written before `ga`
    # `ga` applied it to the open buffer (unsaved), `gu` gave the old text back.
    applied = run.snapshot("applied")
    assert applied["lines"] == ["def add(a, b):", "    return a + b", "", "print(add(1, 2))"], why
    assert any(line.startswith("📝 **Edit** `add.py` · applied") for line in applied["chat_lines"])
    undone = run.snapshot("undone")
    assert undone["lines"] == DOC.splitlines(), why
    assert any(line.startswith("📝 **Edit** `add.py` · undone") for line in undone["chat_lines"])
    [apply, undo] = run.requests("qodeassist/chat/editFile")
    chat_id = run.requests("qodeassist/chat/send")[0]["result"]["chatId"]
    assert apply["params"]["action"] == "apply" and undo["params"]["action"] == "undo", why
    assert apply["params"]["chatId"] == chat_id, why
    # The second round told the model what happened to its call.
    assert "edit_file" in json.dumps(replay.requests[1].json["messages"]), why


@pytest.mark.parametrize(("version", "answer"), [("0.12", "Cancel"), ("0.11", "Apply anyway")])
def test_an_edit_that_breaks_the_file_says_so_and_ga_asks_again(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path, version: str, answer: str
) -> None:
    # Issue 47: a `parseCheck: broken` edit looked like any other and `ga` applied it at once.
    with_tool_agent(tmp_path / "config")
    edit = {
        "path": "add.py",
        "edits": [
            {"search": "def add(a, b):\n    return \n", "replace": "def add(a, b):\nreturn a\n"}
        ],
    }
    replay.script(
        "/v1/chat/completions",
        [tool_call_reply("call_1", "edit_file", edit), chat_reply("I proposed a change.")],
    )
    run = plugin(
        "plugin_edit_broken", version, agent="Tool Chat", message="Change add", answer=answer
    )
    why = run.explain()

    lines = run.snapshot("proposed")["chat_lines"]
    header = next(i for i, line in enumerate(lines) if line.startswith("📝"))
    assert lines[header].startswith("📝 **Edit** `add.py` · pending"), why
    warning = lines[header + 1]
    assert warning.startswith("> ⚠ **This edit breaks the file**: "), why
    assert "IndentationError" in warning, why
    _, confirm = run.report["ui"]
    assert confirm["ui_kind"] == "qodeassist.confirm", confirm
    assert confirm["prompt"] == "QodeAssist: this edit breaks add.py. Apply it anyway?", confirm
    assert confirm["items"] == ["Cancel", "Apply anyway"], confirm
    answered = run.snapshot("answered")
    sent = run.requests("qodeassist/chat/editFile")
    if answer == "Cancel":
        assert sent == [] and answered["lines"] == DOC.splitlines(), why
        assert any(
            line.startswith("📝 **Edit** `add.py` · pending") for line in answered["chat_lines"]
        )
    else:
        assert [r["params"]["action"] for r in sent] == ["apply"], why
        assert answered["lines"] == ["def add(a, b):", "return a", "", "print(add(1, 2))"], why
