"""The chat view in a real VS Code: a streamed answer with its thinking folded, a tool call's
permission dialog, and an edit proposed by the model applied and undone.

The chat agent is "Tool Chat" (the embedded chat with tools, the session's first chat agent);
the loopback provider plays the model, one scripted ``/v1/chat/completions`` stream per round.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.vscode.real.conftest import DOC, VSCode
from tests.support.streams import chat_reply, sse_reply
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import wait_until

SUM = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"


def stream(chunks: list[dict[str, Any]], **kwargs: Any) -> Any:
    """An OpenAI chat stream of ``chunks`` (each a ``delta`` or a finish reason)."""
    events = [{"choices": [{"index": 0, **chunk}]} for chunk in chunks]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return sse_reply(body.encode(), **kwargs)


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> Any:
    """A stream in which the model calls one tool."""
    call = {"index": 0, "id": call_id, "type": "function"}
    function = {"name": name, "arguments": json.dumps(arguments)}
    return stream(
        [
            {"delta": {"role": "assistant", "tool_calls": [{**call, "function": function}]}},
            {"delta": {}, "finish_reason": "tool_calls"},
        ]
    )


def send(workbench: Workbench, text: str) -> Any:
    """Open the chat view, type ``text`` in its input and press Enter; the view's frame."""
    workbench.command("QodeAssist: Open Chat")
    chat = workbench.chat_frame()
    chat.locator("#input").wait_for(timeout=30_000)
    wait_until(lambda: chat.locator("#agent option").count() > 0, "the chat's agent list")
    chat.locator("#input").fill(text)
    chat.locator("#input").press("Enter")
    return chat


def test_the_chat_view_streams_an_answer_with_its_thinking_folded(
    workbench: Workbench, vscode: VSCode
) -> None:
    parts = ["`add` returns ", "nothing yet: ", "it should return `a + b`."]
    reply = stream(
        [
            {"delta": {"role": "assistant", "reasoning_content": "The body is empty."}},
            *({"delta": {"content": part}} for part in parts),
            {"delta": {}, "finish_reason": "stop"},
        ],
        split="events",
        delay=0.8,
    )
    vscode.replay.script("/v1/chat/completions", reply)
    chat = send(workbench, "What does add do?")

    answer = chat.locator(".message.assistant").last
    # Streaming: the first part is on screen while the answer is still coming.
    wait_until(
        lambda: (
            "returns" in answer.inner_text()
            and "status-streaming" in (answer.get_attribute("class") or "")
        ),
        "the first part of the answer while it streams",
    )
    wait_until(
        lambda: "status-finished" in (answer.get_attribute("class") or ""), "the end of the answer"
    )
    assert answer.locator(".block-text").inner_text().strip() == "".join(parts).replace("`", "")
    thinking = answer.locator("details.thinking")
    assert thinking.count() == 1
    assert thinking.evaluate("d => d.open") is False  # folded
    assert thinking.locator("summary").inner_text().strip() == "Thoughts"
    assert "The body is empty." in (thinking.text_content() or "")
    sent = vscode.replay.last_to("/v1/chat/completions").json["messages"]
    assert sent[-1] == {
        "role": "user",
        "content": "What does add do?",
    } or "What does add do?" in json.dumps(sent[-1])


def test_a_tool_calls_permission_dialog_is_answered_and_its_edit_applied_then_undone(
    workbench: Workbench, vscode: VSCode
) -> None:
    edit = {
        "path": "add.py",
        "edits": [
            {
                "search": "def add(a, b):\n    return \n",
                "replace": "def add(a, b):\n    return a + b\n",
            }
        ],
    }
    vscode.replay.script(
        "/v1/chat/completions",
        [tool_call("call_1", "edit_file", edit), chat_reply("I proposed the fix.")],
    )
    workbench.open_file("add.py")
    chat = send(workbench, "Make add return the sum")

    # The write tool asks first: VS Code's modal dialog; the user allows it once.
    dialog = workbench.page.locator(".monaco-dialog-box")
    dialog.wait_for(timeout=30_000)
    assert "edit_file" in dialog.inner_text(), dialog.inner_text()
    dialog.get_by_role("button", name="Allow once").click()

    answer = chat.locator(".message.assistant").last
    wait_until(lambda: "I proposed the fix." in answer.inner_text(), "the answer after the tool")
    block = answer.locator(".block-fileEdit")
    wait_until(lambda: "pending" in block.inner_text(), "the proposed edit, pending")
    assert "+    return a + b" in block.locator(".edit-diff").inner_text()
    assert (workbench.folder / "add.py").read_text() == DOC  # nothing written before Apply

    block.locator('button[data-edit-action="apply"]').click()
    wait_until(lambda: workbench.line_text(2) == "    return a + b", "the edit in the editor")
    wait_until(lambda: "applied" in block.inner_text(), "the edit marked applied")
    workbench.focus_editor()
    workbench.save()
    assert (workbench.folder / "add.py").read_text() == SUM

    block.locator('button[data-edit-action="undo"]').click()
    wait_until(lambda: workbench.line_text(2) == "    return ", "the edit undone in the editor")
    wait_until(lambda: "undone" in block.inner_text(), "the edit marked undone")
    # The second round told the model what happened to its call.
    chats = [r for r in vscode.replay.requests if r.path == "/v1/chat/completions"]
    assert "edit_file" in json.dumps(chats[1].json["messages"])
