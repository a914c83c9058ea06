"""Quick refactor over stdio: lazy code actions, resolve, the command, and every safety rule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from tests.e2e.lsp.conftest import serve_from
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply
from tests.support.waiting import until

FIXTURES = Path(__file__).parents[2] / "fixtures" / "refactor"
BAD_ANSWERS = json.loads((FIXTURES / "bad_answers.json").read_text(encoding="utf-8"))
E2E_CASE = "smollm2-queue-L13-add-type-hints"
DOC = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"
SELECTION = types.Range(types.Position(1, 0), types.Position(4, 12))


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)


async def open_doc(client, home: Path) -> str:
    path = home / "project" / "total.py"
    path.write_text(DOC)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, DOC))
    )
    return uri


async def actions(client, uri: str) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=SELECTION,
            context=types.CodeActionContext(
                diagnostics=[], only=[types.CodeActionKind.RefactorRewrite]
            ),
        )
    )
    return list(result or [])


async def test_actions_are_listed_lazily_and_resolve_to_the_exact_edit(client, lsp_home, replay):
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    offered = await actions(client, uri)
    titles = [a.title for a in offered]
    assert "QodeAssist: Improve" in titles
    assert titles[-1] == "QodeAssist: Refactor with instruction…"
    assert all(a.kind == types.CodeActionKind.RefactorRewrite for a in offered)
    assert replay.requests == []  # nothing is generated until the user picks an action

    replay.script(
        "/v1/chat/completions",
        chat_reply("Here is the refactored code:\n```python\n", "    return sum(xs)\n", "```\n"),
    )
    improve = next(a for a in offered if a.title == "QodeAssist: Improve")
    resolved = await client.code_action_resolve_async(improve)
    [change] = resolved.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == 1
    [edit] = change.edits
    assert edit.range == SELECTION
    assert edit.new_text == "    return sum(xs)"
    sent = replay.last.json["messages"]
    assert "<selection_start>" in sent[0]["content"] and "<selection_end>" in sent[0]["content"]
    assert "Improve the selected code" in sent[-1]["content"]
    # Work-done progress: begun (cancellable), then ended.
    [reports] = [  # the codebase index's build shows its own progress
        r for r in client.progress_reports.values() if not indexing(r)
    ]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)


def indexing(reports: list[Any]) -> bool:
    """Whether ``reports`` are the codebase index's build (docs/codebase.md)."""
    title = getattr(reports[0], "title", "") if reports else "QodeAssist: indexing"
    return str(title).startswith("QodeAssist: indexing")


async def test_command_applies_the_edit_with_a_label(client, lsp_home, replay) -> None:
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    replay.script("/v1/chat/completions", chat_reply("    return sum(xs)"))
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="qodeassist.refactor",
            arguments=[
                {
                    "uri": uri,
                    "range": {
                        "start": {"line": 1, "character": 0},
                        "end": {"line": 4, "character": 12},
                    },
                    "instruction": "Use the builtin",
                }
            ],
        )
    )
    assert result["applied"] is True
    [params] = applied
    assert params.label.startswith("QodeAssist")
    [edit] = params.edit.document_changes[0].edits
    assert edit.new_text == "    return sum(xs)" and edit.range == SELECTION
    assert replay.last.json["messages"][-1]["content"] == "Use the builtin"


async def test_edits_meanwhile_mean_nothing_is_applied(client, lsp_home, replay) -> None:
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    offered = await actions(client, uri)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="# x\n"
                )
            ],
        )
    )
    resolved = await client.code_action_resolve_async(offered[0])
    assert resolved.edit is None
    await until(lambda: client.messages)
    assert any("changed" in m.message for m in client.messages)
    assert replay.requests == []


async def test_provider_failure_changes_nothing_and_says_why(client, lsp_home, replay) -> None:
    replay.script(
        "/v1/chat/completions",
        Reply.json({"error": {"message": "model is loading"}}, status=503, repeat=3),
    )
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    resolved = await client.code_action_resolve_async((await actions(client, uri))[0])
    assert resolved.edit is None
    await until(lambda: client.messages)
    assert any("error" in m.message for m in client.messages)


async def test_empty_answer_never_deletes_code(client, lsp_home, replay) -> None:
    replay.script("/v1/chat/completions", chat_reply("```python\n```"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    resolved = await client.code_action_resolve_async((await actions(client, uri))[0])
    assert resolved.edit is None


async def test_cancel_during_generation_closes_the_upstream_stream(client, lsp_home, replay):
    replay.script(
        "/v1/chat/completions",
        Reply(
            body=b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n',
            content_type="text/event-stream",
            hold_open=True,
        ),
    )
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    action = (await actions(client, uri))[0]
    task = asyncio.create_task(
        client.protocol.send_request_async(types.CODE_ACTION_RESOLVE, action, msg_id="resolve-1")
    )
    [upstream] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert await upstream.wait_holding_async(5)
    client.cancel_request(types.CancelParams(id="resolve-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await task
    assert await upstream.wait_disconnected_async(within=1)


async def test_instruction_library_request(client, lsp_home) -> None:
    (lsp_home / "project/.qodeassist/instructions").mkdir(parents=True)
    (lsp_home / "project/.qodeassist/instructions/team.toml").write_text(
        'name = "Team style"\nbody = "Apply our team style."\n'
    )
    await client.initialize_session(client.init_params)
    listed = await client.protocol.send_request_async("qodeassist/refactor/instructions", {})
    names = [i["name"] for i in listed]
    assert "Improve" in names and "Team style" in names


async def test_configured_default_instruction_beats_the_library_default(
    client, lsp_home, replay
) -> None:
    (lsp_home / "config/settings.toml").write_text(
        '[refactor]\ndefault_instruction = "Make it shorter."\n'
    )
    replay.script("/v1/chat/completions", chat_reply("    return sum(xs)"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    generic = (await actions(client, uri))[-1]
    assert generic.title == "QodeAssist: Refactor with instruction…"
    resolved = await client.code_action_resolve_async(generic)
    assert resolved.edit is not None
    assert replay.last.json["messages"][-1]["content"] == "Make it shorter."


async def test_repeat_last_and_insert_at_an_empty_selection(client, lsp_home, replay) -> None:
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    replay.script(
        "/v1/chat/completions",
        [
            chat_reply("    return sum(xs)"),
            chat_reply("    return sum(xs)"),
            chat_reply("    # total\n"),
        ],
    )
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    first = next(a for a in await actions(client, uri) if a.title == "QodeAssist: Simplify")
    await client.code_action_resolve_async(first)
    offered = await actions(client, uri)
    assert offered[0].title == "QodeAssist: Repeat last instruction"
    await client.code_action_resolve_async(offered[0])
    simplify = replay.requests[0].json["messages"][-1]["content"]
    assert replay.requests[1].json["messages"][-1]["content"] == simplify

    cursor = types.Range(types.Position(1, 0), types.Position(1, 0))
    empty = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=cursor,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert [a.title for a in empty] == ["QodeAssist: Generate code here…"]
    resolved = await client.code_action_resolve_async(empty[0])
    [edit] = resolved.edit.document_changes[0].edits
    assert edit.range == cursor  # an insert: nothing after the cursor is deleted
    assert edit.new_text == "    # total\n"  # and it does not run into the existing line
    assert "<cursor>" in replay.requests[2].json["messages"][0]["content"]


async def test_generate_code_here_is_not_offered_as_the_caret_moves(client, lsp_home) -> None:
    # VS Code asks with triggerKind Automatic wherever the caret rests, for its lightbulb
    # (issue 47, item 5); the refactor menu or Ctrl+. ask with Invoked (or `only`).
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    cursor = types.Range(types.Position(1, 0), types.Position(1, 0))

    async def titles(kind: types.CodeActionTriggerKind, only=None) -> list[str]:
        context = types.CodeActionContext(diagnostics=[], only=only, trigger_kind=kind)
        answer = await client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), cursor, context)
        )
        return [a.title for a in answer or []]

    assert await titles(types.CodeActionTriggerKind.Automatic) == []
    generate = ["QodeAssist: Generate code here…"]
    assert await titles(types.CodeActionTriggerKind.Invoked) == generate
    refactor = [types.CodeActionKind.Refactor]
    assert await titles(types.CodeActionTriggerKind.Automatic, refactor) == generate


NUMBERS = ", ".join(f"{i}.0" for i in range(1, 88))
"""Issue 15: the embedded model's answer to "Add type hints"."""


def command_args(uri: str) -> dict:
    return {
        "uri": uri,
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 12}},
        "instruction": "Add type hints",
    }


@pytest.mark.parametrize("choice", ["Discard", None, "Apply anyway"])
async def test_refused_answer_is_applied_only_when_the_user_says_so(
    client, lsp_home, replay, choice
) -> None:
    asked: list[types.ShowMessageRequestParams] = []
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        asked.append(params)
        return None if choice is None else types.MessageActionItem(choice)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    replay.script("/v1/chat/completions", chat_reply(NUMBERS))
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="qodeassist.refactor", arguments=[command_args(uri)])
    )
    [question] = asked
    assert "repeats itself" in question.message and "+1.0, 2.0" in question.message
    # Issue 47: the safe choice first (a client's default), one prefix, the diff indented.
    assert [a.title for a in question.actions] == ["Discard", "Apply anyway"]
    assert question.message.startswith("QodeAssist refactor: ")
    assert "\n-    for x in xs:\n-        s = s + x\n" in question.message
    [refusal] = [m for m in client.log_messages if "repeats itself" in m.message]
    assert refusal.type == types.MessageType.Warning
    assert result["refused"] is True
    if choice == "Apply anyway":
        assert result["applied"] is True
        [edit] = applied[0].edit.document_changes[0].edits
        assert edit.new_text == NUMBERS and edit.range == SELECTION
    else:
        assert result["applied"] is False and applied == []


async def test_resolve_of_a_refused_answer_has_no_edit_and_asks(client, lsp_home, replay) -> None:
    asked: list[types.ShowMessageRequestParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        asked.append(params)
        return types.MessageActionItem("Discard")

    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    offered = await actions(client, uri)
    replay.script("/v1/chat/completions", chat_reply(NUMBERS))
    resolved = await client.code_action_resolve_async(offered[-1])
    assert resolved.edit is None
    assert resolved.disabled is not None and "repeats itself" in resolved.disabled.reason
    await until(lambda: asked)
    assert asked and "Apply anyway" in [a.title for a in asked[0].actions]


async def test_whole_lines_keep_their_line_break_in_resolve_and_command(
    client, lsp_home, replay
) -> None:
    # Issue 25: Shift+Down / Vim's `V` select whole lines, ending at column 0 of the next line.
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    lines = {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 0}}
    replay.script("/v1/chat/completions", chat_reply("    s = sum(xs)"))
    offered = await actions(client, uri)
    action = offered[-1]
    action.data = {**action.data, "range": lines}
    resolved = await client.code_action_resolve_async(action)
    [edit] = resolved.edit.document_changes[0].edits
    assert edit.new_text == "    s = sum(xs)\n"
    replay.script("/v1/chat/completions", chat_reply("```python\n    s = sum(xs)\n```"))
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="qodeassist.refactor", arguments=[{"uri": uri, "range": lines}]
        )
    )
    [edit] = applied[0].edit.document_changes[0].edits
    assert edit.new_text == "    s = sum(xs)\n"
    assert edit.range == types.Range(types.Position(1, 0), types.Position(4, 0))


async def test_a_recorded_bad_answer_is_refused_and_the_editor_is_told(
    client, lsp_home, replay
) -> None:
    # A real answer of the embedded SmolLM2-135M: a method replaced by a top-level function.
    case = next(c for c in BAD_ANSWERS["bad"] if c["id"] == E2E_CASE)
    source = (FIXTURES / "sources" / case["source"]).read_text(encoding="utf-8")
    asked: list[types.ShowMessageRequestParams] = []
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        asked.append(params)
        return types.MessageActionItem("Discard")

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    await client.initialize_session(client.init_params)
    path = lsp_home / "project" / case["source"]
    path.write_text(source)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(path.as_uri(), "python", 1, source))
    )
    replay.script("/v1/chat/completions", chat_reply(case["answer"]))
    l1, c1, l2, c2 = case["range"]
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="qodeassist.refactor",
            arguments=[
                {
                    "uri": path.as_uri(),
                    "range": {
                        "start": {"line": l1, "character": c1},
                        "end": {"line": l2, "character": c2},
                    },
                    "instruction": case["instruction"],
                }
            ],
        )
    )
    assert result["refused"] is True and result["applied"] is False
    assert "out of the class or function" in result["message"]
    [question] = asked
    assert "was not applied" in question.message and "out of the class" in question.message
    assert applied == []


async def test_an_ignored_open_file_stays_out_of_the_context(client, lsp_home, replay) -> None:
    """With ``use_open_files`` the other open documents go along, but never an ignored one."""
    (lsp_home / "config/settings.toml").write_text("[refactor]\nuse_open_files = true\n")
    (lsp_home / "project/.qodeassistignore").write_text("secret.py\n")
    replay.script("/v1/chat/completions", chat_reply("    return sum(xs)"))
    await client.initialize_session(client.init_params)
    for name, text in (("secret.py", "TOKEN = 'hunter2'\n"), ("helper.py", "HELPER = 1\n")):
        path = lsp_home / "project" / name
        path.write_text(text)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(path.as_uri(), "python", 1, text)
            )
        )
    uri = await open_doc(client, lsp_home)
    resolved = await client.code_action_resolve_async((await actions(client, uri))[0])
    assert resolved.edit is not None
    system = replay.last.json["messages"][0]["content"]
    assert "HELPER = 1" in system and "hunter2" not in system
