"""The Neovim plugin (``editors/neovim``) on Neovim 0.12 and 0.11 against the real server.

Each test runs a headless Neovim whose init file (a scenario in ``lua/plugin_*.lua``) puts the
plugin on the runtime path and calls ``require("qodeassist").setup{cmd = …}``: the plugin
starts the server through ``vim.lsp.config``/``vim.lsp.enable``, the bundled agents talk to the
loopback replay provider, and the scenario drives the editor with real keystrokes. Inline
completion runs natively on 0.12 (``vim.lsp.inline_completion``) and through the plugin's own
extmark renderer on 0.11, or on 0.12 when ``inline.mode = "extmark"`` forces it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.editors.conftest import DOC, NeovimRun, RunPlugin
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, completion_reply, sse_reply

INLINE = "textDocument/inlineCompletion"
EXECUTE = "workspace/executeCommand"

# (Neovim version, inline.mode passed to setup, the renderer the plugin must pick)
NATIVE_012 = pytest.param(("0.12", "auto", "native"), id="0.12-native")
EXTMARK_012 = pytest.param(("0.12", "extmark", "extmark"), id="0.12-extmark")
EXTMARK_011 = pytest.param(("0.11", "auto", "extmark"), id="0.11-extmark")
EXTMARK_EDITORS = [EXTMARK_012, EXTMARK_011]
VERSIONS = [pytest.param("0.12", id="0.12"), pytest.param("0.11", id="0.11")]

Editor = tuple[str, str, str]


def multi_line_everywhere(home: Path) -> None:
    """Let the server suggest several lines after ``return a`` (``smart`` keeps one there)."""
    settings = home / "config" / "settings.toml"
    settings.write_text(settings.read_text() + 'multi_line = "always"\n')


def ghosts(state: dict[str, Any]) -> list[tuple[int, int, str, list[str]]]:
    """The ghost texts of a snapshot as (row, column, first line, other lines), 0-based."""
    return [(g["row"], g["col"], g["text"], g["virt_lines"]) for g in state["ghosts"]]


def inline_requests_at(run: NeovimRun, column: int) -> list[dict[str, Any]]:
    return [
        r
        for r in run.requests(INLINE)
        if r["params"]["position"] == {"line": 1, "character": column}
    ]


def the_item(run: NeovimRun, column: int) -> dict[str, Any]:
    """The one item the server answered at line 2, ``column`` (the last such request)."""
    answered = [r for r in inline_requests_at(run, column) if r.get("result")]
    assert answered, f"no answered inline completion request at column {column}" + run.explain()
    items: list[dict[str, Any]] = answered[-1]["result"]["items"]
    assert len(items) == 1, items
    return items[0]


def assert_accepted_on_the_server(run: NeovimRun, item: dict[str, Any]) -> None:
    """The item's command went to the server once, which counted one acceptance."""
    [command] = run.requests(EXECUTE)
    assert command["params"] == {
        "command": "qodeassist.accepted",
        "arguments": item["command"]["arguments"],
    }, run.explain()
    assert command["result"] is True, run.explain()
    assert run.report["status"]["completion"]["accepted"] == 1, run.report["status"]


def test_native_accept_line_keeps_the_rest_of_the_suggestion(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path
) -> None:
    multi_line_everywhere(tmp_path)
    replay.script("/v1/completions", completion_reply(" + b\n", "    # the sum"))
    run = plugin("plugin_native_line", "0.12", "auto", typed="a", pause_after_insert=True)
    why = run.explain()
    line = run.snapshot("line")
    assert line["lines"][1:3] == ["    return a + b", ""], why
    assert ghosts(line)[0][:3] == (2, 0, "    # the sum"), why
    assert len(replay.requests) == 1, why  # the rest came from the typed-ahead cache


@pytest.mark.parametrize("editor", [NATIVE_012, EXTMARK_012, EXTMARK_011])
def test_ghost_text_is_shown_and_accepted(
    plugin: RunPlugin, replay: ReplayServer, editor: Editor
) -> None:
    version, mode, renderer = editor
    replay.script("/v1/completions", [completion_reply(" + ", "b"), completion_reply(repeat=3)])
    run = plugin("plugin_ghost", version, mode, typed="a", pause_after_insert=True)
    why = run.explain()

    assert run.report["inline_mode"] == renderer, why
    assert run.report["init_options"] == {"qodeassist": {}}, why
    # The automatic request after typing got the streamed suggestion...
    item = the_item(run, 12)
    assert item["insertText"] == " + b", item
    assert inline_requests_at(run, 12)[-1]["params"]["context"]["triggerKind"] == 2, why
    assert replay.requests[0].json["prompt"] == "def add(a, b):\n    return a", why
    # ... shown as ghost text after the typed `a`, the buffer untouched.
    shown = run.snapshot("shown")
    assert ghosts(shown) == [(1, 12, " + b", [])], why
    assert shown["lines"][1] == "    return a", why
    # <Tab> inserted it, put the cursor behind it and cleared the ghost text...
    accepted = run.snapshot("accepted")
    assert accepted["lines"] == ["def add(a, b):", "    return a + b", "", "print(add(1, 2))"], why
    assert accepted["cursor"] == [2, 16], why
    assert (1, 12, " + b", []) not in ghosts(accepted), why
    # ... and ran the item's command, which the server counted.
    assert_accepted_on_the_server(run, item)
    normal = run.snapshot("normal")
    assert ghosts(normal) == [], why
    assert normal["statusline"] == "QA ✓", why


@pytest.mark.parametrize("editor", EXTMARK_EDITORS)
def test_partial_accept_by_word_and_line(
    plugin: RunPlugin, replay: ReplayServer, editor: Editor, tmp_path: Path
) -> None:
    version, mode, _ = editor
    multi_line_everywhere(tmp_path)
    replay.script(
        "/v1/completions", [completion_reply(" + b\n", "    # the sum"), completion_reply(repeat=3)]
    )
    run = plugin("plugin_partial", version, mode, typed="a", pause_after_insert=True)
    why = run.explain()

    item = the_item(run, 12)
    assert item["insertText"] == " + b\n    # the sum", item
    # First line over the end of the line, the second one below it.
    assert ghosts(run.snapshot("shown")) == [(1, 12, " + b", ["    # the sum"])], why
    # <M-Right> took the next word; the rest stays shown where the cursor is now.
    word = run.snapshot("word")
    assert word["lines"][1:3] == ["    return a +", ""], why
    assert word["cursor"] == [2, 14], why
    assert ghosts(word) == [(1, 14, " b", ["    # the sum"])], why
    # <M-Down> took the rest of the line and its line break.
    line = run.snapshot("line")
    assert line["lines"] == ["def add(a, b):", "    return a + b", "", "", "print(add(1, 2))"], why
    assert line["cursor"] == [3, 0], why
    assert ghosts(line) == [(2, 0, "    # the sum", [])], why
    # Partial accepts asked nothing new and ran no command.
    assert run.report["requests_before_accept"] == run.report["requests_when_shown"], why
    assert run.report["commands_before_accept"] == 0, why
    # <Tab> took the rest and ran the command once.
    accepted = run.snapshot("accepted")
    assert accepted["lines"] == [
        "def add(a, b):",
        "    return a + b",
        "    # the sum",
        "",
        "print(add(1, 2))",
    ], why
    assert accepted["cursor"] == [3, 13], why
    assert_accepted_on_the_server(run, item)


@pytest.mark.parametrize("editor", [NATIVE_012, EXTMARK_012, EXTMARK_011])
def test_typing_ahead_narrows_and_dismissing_hides(
    plugin: RunPlugin, replay: ReplayServer, editor: Editor
) -> None:
    version, mode, renderer = editor
    replay.script(
        "/v1/completions",
        [completion_reply(" + ", "b"), completion_reply(" b"), completion_reply(repeat=3)],
    )
    run = plugin(
        "plugin_typed_ahead", version, mode, typed="a", pause_after_insert=True, type_ahead=" +"
    )
    why = run.explain()

    assert ghosts(run.snapshot("shown")) == [(1, 12, " + b", [])], why
    # Typing the suggestion's first characters narrowed it, without another upstream request:
    # the extmark renderer narrows it itself, native Neovim asks again and the server answers
    # from its typed-ahead cache.
    narrowed = run.snapshot("narrowed")
    assert narrowed["lines"][1] == "    return a +", why
    assert ghosts(narrowed) == [(1, 14, " b", [])], why
    asked_again = run.report["requests_after_typing"] > run.report["requests_when_shown"]
    assert asked_again == (renderer == "native"), why
    assert len(replay.requests) == 1, [r.json for r in replay.requests]
    # Leaving insert mode hid it; back in insert mode the rest of the suggestion came back.
    assert ghosts(run.snapshot("left")) == [], why
    assert ghosts(run.snapshot("again")) == [(1, 14, " b", [])], why
    # <C-]> dismissed it (natively: by re-enabling inline completion for the buffer); <Tab>
    # with nothing shown inserted a tab.
    dismissed = run.snapshot("dismissed")
    assert ghosts(dismissed) == [] and dismissed["lines"][1] == "    return a +", why
    assert run.snapshot("tab")["lines"][1] == "    return a +\t", why
    assert run.report["commands"] == 0, why


def test_accepting_replaces_the_item_range(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path
) -> None:
    source = tmp_path / "project" / "call.py"
    source.write_text("def add(a, b):\n    return a + b\n\nprint(add())\n")
    replay.script("/v1/completions", [completion_reply(", 2))"), completion_reply(repeat=3)])
    run = plugin("plugin_overlap", "0.11", file=str(source))
    why = run.explain()

    [answered] = [r for r in run.requests(INLINE) if r.get("result", {}).get("items")]
    [item] = answered["result"]["items"]
    assert answered["params"]["position"] == {"line": 3, "character": 11}, why
    assert item["insertText"] == ", 2))", item
    assert item["range"]["end"] == {"line": 3, "character": 13}, item  # the `))`
    # The overlay covers the `))` it replaces.
    shown = run.snapshot("shown")
    assert shown["lines"][3] == "print(add(1))", why
    assert [(g["row"], g["col"], g["text"], g["pos"]) for g in shown["ghosts"]] == [
        (3, 11, ", 2))", "overlay")
    ], why
    accepted = run.snapshot("accepted")
    assert accepted["lines"][3] == "print(add(1, 2))", why
    assert accepted["cursor"] == [4, 16], why


def test_a_request_overtaken_by_leaving_insert_mode_is_cancelled(
    plugin: RunPlugin, replay: ReplayServer
) -> None:
    # Headers, then nothing: the server waits for the first token (its time budget is 5 s).
    replay.script("/v1/completions", Reply(hold_open=True, content_type="text/event-stream"))
    run = plugin("plugin_cancel", "0.11", typed="a", hold_ms=600)
    why = run.explain()

    [rec] = inline_requests_at(run, 12)
    assert not run.report["done_before_leaving"], why
    # Cancelled, then settled by the server's RequestCancelled (no handler runs for that).
    assert rec["cancelled_ms"] < rec["settled_ms"], why
    assert "done" not in rec, why
    # The server closed the provider's stream.
    [upstream] = replay.requests
    assert upstream.wait_disconnected(5), why
    assert ghosts(run.snapshot("left")) == [], why


TOTAL = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"


@pytest.mark.parametrize("version", VERSIONS)
def test_refactor_command_applies_library_and_custom_instructions(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path, version: str
) -> None:
    source = tmp_path / "project" / "total.py"
    source.write_text(TOTAL)
    replay.script(
        "/v1/chat/completions",
        [
            chat_reply("```python\n", "    return sum(xs)\n", "```\n"),
            chat_reply("```python\n", "sum(x for x in xs)\n", "```\n"),
        ],
    )
    run = plugin(
        "plugin_refactor",
        version,
        file=str(source),
        select="2GV5G",
        select_chars="2G011lv6l",
        instruction="use a generator",
    )
    why = run.explain()

    # Two pickers: the library (with the custom entry last), then the prompt.
    select, custom, prompt = run.report["ui"]
    assert select["kind"] == custom["kind"] == "select", why
    assert any(item.startswith("Improve") for item in select["items"]), select
    assert select["items"][-1] == custom["items"][-1] == "Custom instruction…", select
    assert prompt == {"kind": "input", "prompt": "Instruction: ", "typed": "use a generator"}, why
    # The linewise selection went with the library instruction's id...
    improve, generator = run.requests(EXECUTE)
    uri = source.as_uri()
    [args] = improve["params"]["arguments"]
    assert improve["params"]["command"] == "qodeassist.refactor", why
    assert {k: args[k] for k in ("uri", "range", "instructionId")} == {
        "uri": uri,
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 12}},
        "instructionId": "improve",
    }, args
    assert isinstance(args["version"], int), args
    assert improve["result"] == {"applied": True, "message": ""}, why
    assert run.snapshot("improved")["lines"] == ["def total(xs):", "    return sum(xs)"], why
    # ... the charwise one (`sum(xs)`) with the typed instruction.
    [args] = generator["params"]["arguments"]
    assert {k: args[k] for k in ("uri", "range", "instruction")} == {
        "uri": uri,
        "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 18}},
        "instruction": "use a generator",
    }, args
    assert generator["result"]["applied"] is True, why
    assert run.snapshot("custom")["lines"] == ["def total(xs):", "    return sum(x for x in xs)"], (
        why
    )
    assert "use a generator" in str(replay.requests[1].json["messages"]), why


EMBEDDED_PIPELINES = """[pipelines]
code_completion = ["Embedded Completion"]
chat_assistant = ["Embedded Chat"]
chat_compression = "Embedded Compression"
quick_refactor = ""
"""


def serve_the_embedded_models(replay: ReplayServer, tmp_path: Path, *models: str) -> None:
    """Answer the doctor's model list and test requests for the embedded agents."""
    (tmp_path / "config" / "pipelines.toml").write_text(EMBEDDED_PIPELINES)
    replay.route("/v1/models", Reply.json({"data": [{"id": m} for m in models]}))
    replay.route("/v1/completions", completion_reply("a + b"), method="POST")
    replay.route("/v1/chat/completions", chat_reply("OK"), method="POST")


@pytest.mark.parametrize("version", VERSIONS)
def test_checkhealth_reports_the_running_server(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path, version: str
) -> None:
    serve_the_embedded_models(replay, tmp_path, "gemma3-270m", "smollm2-135m-instruct")
    settings = {"completion": {"debounceMs": 150}}
    run = plugin("plugin_health", version, setup={"settings": settings})
    why = run.explain()
    assert run.report["init_options"] == {"qodeassist": settings}, why
    health = "\n".join(run.report["health"])

    assert "qodeassist" in health, why
    assert "ERROR" not in health and "WARNING" not in health, health
    assert "server running" in health and "attached to 1 buffer(s)" in health, health
    assert "ready:" in health, health
    renderer = "native" if version == "0.12" else "extmark renderer"
    assert f"inline completion: {renderer}" in health, health
    assert "doctor" in health and "code_completion: working" in health, health
    assert "quick_refactor: off" in health, health
    assert "Embedded Chat (Embedded Instruct / smollm2-135m-instruct): first token after" in health


def test_checkhealth_shows_the_doctors_fix_for_a_missing_model(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path
) -> None:
    serve_the_embedded_models(replay, tmp_path, "smollm2-135m-instruct")
    run = plugin("plugin_health", "0.12")
    health = "\n".join(run.report["health"])

    assert "ERROR code_completion: no working agent (Embedded Completion)" in health, health
    assert "model 'gemma3-270m' is not in the 1 models Embedded offers" in health, health
    assert "fix: pick a model from `qodeassist-lsp models Embedded`" in health, health
    assert "OK chat_assistant: working" in health, health


def test_qodeassist_config_writes_keeps_comments_and_shows_the_settings(
    plugin: RunPlugin, tmp_path: Path
) -> None:
    settings_file = tmp_path / "config" / "settings.toml"
    settings_file.write_text("# mine\n" + settings_file.read_text())

    run = plugin("plugin_config", "0.12")

    text = settings_file.read_text()
    assert text.startswith("# mine\n[completion]\ndebounce_ms = 222\n"), text
    refused = [n for n in run.report["notifications"] if "is invalid" in n["msg"]]
    assert refused and refused[0]["level"] == 4, run.report["notifications"]  # ERROR
    lines = run.report["settings_buffer"]
    assert lines[0].startswith("# user settings: ") and lines[0].endswith("settings.toml"), lines
    assert "debounce_ms = 222  # set here" in lines, lines
    assert "[logging]" in lines, lines


def deltas_sse(*deltas: dict[str, Any], done: bool = True) -> bytes:
    """An OpenAI chat stream of ``deltas`` (``{"content": …}``, ``{"reasoning_content": …}``)."""
    chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": d}]} for d in deltas]
    if done:
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def events_of(run: NeovimRun, kind: str) -> list[dict[str, Any]]:
    return [e for e in run.report["chat_events"] if e["kind"] == kind]


@pytest.mark.parametrize("version", VERSIONS)
def test_chat_streams_into_its_buffer(
    plugin: RunPlugin, replay: ReplayServer, version: str
) -> None:
    replay.script(
        "/v1/chat/completions",
        [
            sse_reply(
                deltas_sse(
                    {"reasoning_content": "They want a sum.\nSay it plainly."},
                    {"content": "It adds "},
                    {"content": "two numbers."},
                ),
                split="events",
                delay=0.4,
            ),
            Reply.json({"error": {"message": "invalid api key"}}, status=401),
        ],
    )
    run = plugin(
        "plugin_chat",
        version,
        message="What does add do?",
        first="It adds",
        second="And sub?",
        early="Too early?",
    )
    why = run.explain()

    # The agent picker listed the chatAssistant agents; the send named the picked one.
    [picker, chats] = run.report["ui"]
    assert picker["items"][0].startswith("Embedded Chat"), picker
    [send, second] = run.requests("qodeassist/chat/send")
    assert send["params"] == {"message": "What does add do?", "agent": "Embedded Chat"}, why
    chat_id = send["result"]["chatId"]
    # Mid-stream: the first text is in, the rest is not, and the editor says it is busy.
    streaming = run.snapshot("streaming")
    assert "It adds " in streaming["chat_lines"] and "two numbers." not in str(streaming), why
    assert "⏳ streaming…" in streaming["winbar"], why
    assert streaming["statusline"] == "QA …", why
    # A message typed while it answers is not sent (the server would refuse it: ChatBusy).
    busy = run.snapshot("sent_while_busy")
    assert "Too early?" not in busy["chat_lines"], why
    assert any(
        "still answering" in n["msg"] and n["level"] == 3 for n in run.report["notifications"]
    ), run.report["notifications"]
    # Finished: the transcript, with the thinking in a closed fold.
    finished = run.snapshot("finished")
    assert finished["chat_lines"] == [
        "## You",
        "",
        "What does add do?",
        "",
        "## Assistant",
        "",
        "````thinking",
        "They want a sum.",
        "Say it plainly.",
        "````",
        "",
        "It adds two numbers.",
    ], why
    assert finished["closed_folds"] == [[7, 10]], why
    assert "⏳" not in finished["winbar"] and "Embedded Chat" in finished["winbar"], why
    assert finished["statusline"] == "QA ✓", why
    assert [e["kind"] for e in run.report["chat_events"]][-1] == "failed", why
    assert events_of(run, "finished")[0]["requestId"] == send["result"]["requestId"], why
    # A new chat empties the buffer; the list reopens the saved one from the server's history.
    new = run.snapshot("new")
    assert new["chat_lines"] == [""] and "chat_id" not in new, why
    assert chats["items"][0].startswith("What does add do?"), chats
    reopened = run.snapshot("reopened")
    assert reopened["chat_id"] == chat_id, why
    assert reopened["chat_lines"] == ["# What does add do?", "", *finished["chat_lines"]], why
    # The second message went to the same chat; the provider refused it.
    assert second["params"] == {"message": "And sub?", "chatId": chat_id}, why
    failed = run.snapshot("failed")
    [failure] = events_of(run, "failed")
    assert failure["error"]["category"] == "auth", failure
    assert failed["chat_lines"][-7:] == [
        "## You",
        "",
        "And sub?",
        "",
        "## Assistant",
        "",
        f"> ❌ **auth**: {failure['error']['message']}",
    ], why
    assert "✗ auth: " in failed["winbar"], why
    assert failed["statusline"] == "QA ✗", why


@pytest.mark.parametrize("version", VERSIONS)
def test_chat_cancelled_mid_stream(plugin: RunPlugin, replay: ReplayServer, version: str) -> None:
    replay.script(
        "/v1/chat/completions",
        sse_reply(deltas_sse({"content": "Partial answer"}, done=False), hold_open=True),
    )
    run = plugin(
        "plugin_chat_cancel",
        version,
        message="Explain add",
        first="Partial answer",
        synthetic=[
            {"kind": "agentChosen", "agent": "Big", "reason": "It needs depth.", "fallback": False},
            {"kind": "thinking", "text": "Look at the file."},
            {"kind": "toolCall", "id": "t1", "name": "read_file", "arguments": {"path": "add.py"}},
            {
                "kind": "toolResult",
                "toolUseId": "t1",
                "name": "read_file",
                "content": "def add",
                "isError": False,
            },
            {
                "kind": "fileEdit",
                "editId": "e1",
                "filePath": "add.py",
                "status": "applied",
                "statusMessage": "1 hunk",
            },
            {"kind": "text", "text": "Done."},
            {
                "kind": "usage",
                "inputTokens": 12,
                "outputTokens": 3,
                "cachedTokens": 0,
                "reasoningTokens": 0,
            },
            {"kind": "finished", "stopReason": "max_tokens"},
        ],
    )
    why = run.explain()

    [send] = run.requests("qodeassist/chat/send")
    [cancel] = run.requests("qodeassist/chat/cancel")
    assert cancel["params"] == {"chatId": send["result"]["chatId"]}, why
    assert "⏳ streaming…" in run.snapshot("streaming")["chat_status"], why
    cancelled = run.snapshot("cancelled")
    assert cancelled["chat_lines"][-3:] == ["Partial answer", "", "_(cancelled)_"], why
    assert "⏳" not in cancelled["chat_status"], why
    chat_id = send["result"]["chatId"]
    kinds = [e["kind"] for e in run.report["chat_events"] if e["chatId"] == chat_id]
    assert kinds == ["text", "cancelled"], why
    [upstream] = replay.requests
    assert upstream.wait_disconnected(5), why
    # The other event kinds, rendered into a new chat.
    rendered = run.snapshot("rendered")
    assert rendered["chat_lines"] == [
        "_(agent: Big — It needs depth.)_",
        "",
        "````thinking",
        "Look at the file.",
        "````",
        "",
        "**🔧 read_file** `t1`",
        "```json",
        '{"path":"add.py"}',
        "```",
        "",
        "**✅ read_file**: def add",
        "````result",
        "def add",
        "````",
        "",
        "📝 **Edit** `add.py` · applied — 1 hunk · gu undo",
        "",
        "Done.",
        "",
        "_(stopped: max_tokens)_",
    ], why
    assert rendered["chat_status"] == "QodeAssist chat · 12 in / 3 out tokens", why


def test_chat_completes_skill_names_at_the_start_of_a_message(
    plugin: RunPlugin, tmp_path: Path
) -> None:
    skills = tmp_path / "project" / ".qodeassist" / "skills"
    for name in ("my-skill", "my-other", "deploy"):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nB\n")
    run = plugin("plugin_skills", "0.12")
    why = run.explain()
    assert run.report["command"] == ["/deploy", "/my-other", "/my-skill"], why
    assert run.report["command_prefix"] == ["/my-other", "/my-skill"], why
    assert run.report["command_later"] == [], why
    assert run.report["input"] == ["/deploy"], why
    assert run.report["input_later"] == [], why
    assert run.requests("qodeassist/skills/list"), why


@pytest.mark.parametrize("version", VERSIONS)
def test_the_caret_is_told_and_the_request_there_is_warmed(
    plugin: RunPlugin, replay: ReplayServer, tmp_path: Path, version: str
) -> None:
    """Before any key: the first suggestion there reads a cached prompt (issue 27)."""
    settings = tmp_path / "config" / "settings.toml"
    settings.write_text(settings.read_text().replace("warm_cursor_window = false", ""))
    delta = b'data: {"choices":[{"index":0,"text":"x","finish_reason":null}]}\n\n'
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    run = plugin("plugin_cursor", version)
    prompts = [r.json["prompt"] for r in replay.requests if r.path == "/v1/completions"]
    # The caret at 1:1 on attach has nothing before it (nothing is sent for it), so the file's
    # end may be warmed first, if the attach hint came after the open's 50 ms; then CursorHold
    # at "    return" warms the request a key there would send.
    assert prompts[-1] == "def add(a, b):\n    return", (prompts, run.explain())
    assert set(prompts[:-1]) <= {DOC}, prompts
