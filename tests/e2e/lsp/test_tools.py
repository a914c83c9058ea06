"""The tool kit over stdio, on every wire protocol with tools: the real server, a replayed model.

The model's first reply (a hand-written stream in the protocol's recorded shape, see
``tests/fixtures/wire/SOURCES.md``) calls ``read_file`` inside the workspace, ``read_file``
outside it and ``terminal``; the server runs them (asking the client for ``terminal`` through
``window/showMessageRequest``), and the second request carries the three results back in the
API's own shape before the recorded answer ends the chat.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp.test_chat import Events, request, start
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import write_embedded_instances
from tests.support.wire_cases import KIT_CALLS, TARGETS
from tests.support.workspace import Workspace

INSIDE = "notes from inside the workspace: 7 apples"
OUTSIDE = "secret from outside the workspace"


@dataclass(frozen=True)
class Protocol:
    id: str
    target: str
    calls: str
    answer: str


PROTOCOLS = (
    Protocol(
        "anthropic",
        "claude",
        "anthropic/stream_tool_use_kit_calls_SYNTHETIC.sse",
        "anthropic/stream_text_hello.sse",
    ),
    Protocol(
        "openai-chat",
        "openai",
        "openai_chat/stream_tool_calls_kit_SYNTHETIC.sse",
        "openai_chat/stream_text_with_usage.sse",
    ),
    Protocol(
        "openai-responses",
        "responses",
        "openai_responses/stream_function_calls_kit_SYNTHETIC.sse",
        "openai_responses/stream_text_after_function_call.sse",
    ),
    Protocol(
        "gemini",
        "gemini",
        "gemini/sse_function_calls_kit_SYNTHETIC.sse",
        "gemini/sse_text_after_function_response.sse",
    ),
    Protocol(
        "ollama",
        "ollama-thinking",
        "ollama/chat_stream_tool_calls_kit_SYNTHETIC.ndjson",
        "ollama/chat_stream_excerpt_sk.ndjson",
    ),
    Protocol(
        "mistral",
        "mistral",
        "mistral/chat_stream_tool_calls_kit_SYNTHETIC.sse",
        "mistral/chat_stream_text.sse",
    ),
    Protocol(
        "llamacpp",
        "llamacpp",
        "llamacpp/chat_completions_tool_calls_kit_SYNTHETIC.sse",
        "openai_chat/stream_text_with_usage.sse",
    ),
)


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = Workspace(lsp_home, replay.url, log_level="INFO")
    # Opening a file starts the completion model: the loopback replay, not a real one.
    write_embedded_instances(workspace.config / "providers", replay.url)
    for key, value in workspace.env.items():
        monkeypatch.setenv(key, value)
    agents = json.dumps([TARGETS[p.target].agent for p in PROTOCOLS], ensure_ascii=False)
    workspace.write(
        "pipelines.toml",
        f'[pipelines]\nchat_assistant = {agents}\nquick_refactor = "Claude Quick Refactor"\n',
    )
    (lsp_home / "project/notes.txt").write_text(INSIDE + "\n")
    (lsp_home / "outside.txt").write_text(OUTSIDE + "\n")


class Asked:
    """Answers ``window/showMessageRequest`` from a script and records the questions."""

    def __init__(self, client: Any, answers: list[str | None]) -> None:
        self.questions: list[types.ShowMessageRequestParams] = []
        self.answers = answers

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_ask(ls: Any, params: types.ShowMessageRequestParams) -> Any:
            self.questions.append(params)
            title = self.answers.pop(0)
            return None if title is None else types.MessageActionItem(title=title)


async def chat(client: Any, events: Events, protocol: Protocol) -> list[dict[str, Any]]:
    target = TARGETS[protocol.target]
    sent = await request(client, "chat/send", {"message": "Use your tools.", "agent": target.agent})
    terminal = await events.terminal(sent["requestId"], within=30)
    assert terminal["kind"] == "finished", events.of(sent["requestId"])
    return events.of(sent["requestId"])


def results(streamed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = [e for e in streamed if e["kind"] == "toolCall"]
    assert [(c["name"], c["arguments"]) for c in calls] == list(KIT_CALLS)
    assert [c["permission"] for c in calls] == ["read", "read", "execute"]
    found = [e for e in streamed if e["kind"] == "toolResult"]
    assert [r["toolCallId"] for r in found] == [c["toolCallId"] for c in calls]
    return found


def continuation(replay: ReplayServer, index: int) -> str:
    """The text of the request that carried the tool results back (the model's round 2)."""
    body = replay.requests[index].json
    assert isinstance(body, dict)
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=[p.id for p in PROTOCOLS])
async def test_read_inside_and_outside_and_terminal_under_ask_and_deny(
    client: Any, replay: ReplayServer, protocol: Protocol
) -> None:
    route = TARGETS[protocol.target].route
    replay.script(route, [Reply(protocol.calls, split="events"), Reply(protocol.answer)] * 3)
    asked = Asked(client, ["Allow once", "Deny"])
    events = await start(client)

    # ask, and the user allows once: both reads and the command run.
    allowed = results(await chat(client, events, protocol))
    inside, outside, terminal = allowed
    assert inside["ok"] and INSIDE in inside["content"]
    assert inside["summary"] == "File: notes.txt (lines 1-1 of 1)"
    assert not outside["ok"] and "outside the workspace folders" in outside["content"]
    assert OUTSIDE not in outside["content"]
    assert terminal["ok"] and terminal["content"] == "$ echo tool-ran\n(exit code 0)\ntool-ran"
    [question] = asked.questions
    assert [a.title for a in question.actions or []] == [
        "Allow once",
        "Allow for this chat",
        "Deny",
    ]
    assert question.message.split("\n") == [  # issue 47: the command line, not JSON
        "QodeAssist: the model wants to run a program with the tool terminal. Allow it?",
        "$ echo tool-ran",
    ]
    sent_back = continuation(replay, 1)
    assert INSIDE in sent_back and "outside the workspace folders" in sent_back
    assert "tool-ran" in sent_back and OUTSIDE not in sent_back

    # ask, and the user denies: the command is refused, the server keeps serving.
    denied = results(await chat(client, events, protocol))
    assert denied[0]["ok"] and not denied[1]["ok"]
    assert not denied[2]["ok"] and "the user denied it" in denied[2]["content"]
    assert len(asked.questions) == 2
    assert "the user denied it" in continuation(replay, 3)

    # deny (editor settings are user-level): refused without asking.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"qodeassist": {"tools": {"permissions": {"execute": "deny"}}}}
        )
    )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="qodeassist.reloadConfiguration")
    )
    inside, outside, terminal = results(await chat(client, events, protocol))
    assert inside["ok"] and not outside["ok"]
    assert not terminal["ok"] and '[tools.permissions] execute = "deny"' in terminal["content"]
    assert len(asked.questions) == 2  # never asked
    assert "execute tools are denied" in continuation(replay, 5)
    assert len(replay.requests) == 6 and replay.unmatched == []


READ_CLASS = {
    "read_file", "list_folder", "find_files", "search_text", "diagnostics",
    "git_status", "git_diff", "git_log", "todo", "memory_read",
    "search_codebase", "find_definition",  # the codebase feature's (docs/codebase.md)
}  # fmt: skip


async def test_quick_refactor_gets_the_read_class_tools_only(
    client: Any, replay: ReplayServer, lsp_home: Path
) -> None:
    route = TARGETS["claude"].route
    replay.script(route, [Reply(PROTOCOLS[0].calls, split="events"), Reply(PROTOCOLS[0].answer)])
    Asked(client, ["Discard"])  # the refactor guard may ask about a prose answer

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(ls: Any, params: Any) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=False)

    await start(client)
    source = lsp_home / "project/total.py"
    source.write_text("def total(xs):\n    return 0\n")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(source.as_uri(), "python", 1, source.read_text())
        )
    )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="qodeassist.refactor",
            arguments=[
                {
                    "uri": source.as_uri(),
                    "range": {
                        "start": {"line": 1, "character": 0},
                        "end": {"line": 1, "character": 12},
                    },
                    "instruction": "Sum the list",
                }
            ],
        )
    )
    first, second = (sent.json for sent in replay.requests)
    assert isinstance(first, dict) and isinstance(second, dict)
    assert {tool["name"] for tool in first["tools"]} == READ_CLASS
    results = second["messages"][-1]["content"]
    assert [r["type"] for r in results] == ["tool_result"] * 3
    assert INSIDE in json.dumps(results[0]) and "outside the workspace" in json.dumps(results[1])
    assert "Tool not found: terminal" in json.dumps(results[2])  # execute tools are not offered
