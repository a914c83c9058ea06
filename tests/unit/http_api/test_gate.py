"""HTTP chats answer the shared permission gate's questions by their request's mode."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from qodeassist_lsp.config.settings import ToolPermissions
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.http_api.events import EventHub, Questions
from qodeassist_lsp.http_api.gate import AskMode, ChatAsker
from qodeassist_lsp.tools.permissions import ALLOW_FOR_CHAT, ALLOW_ONCE, PermissionGate
from qodeassist_lsp.wire.tools import ToolSpec


class Terminal:
    permission = "execute"
    spec = ToolSpec("terminal", "run", {"type": "object"})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput("ran")


class Editor:
    """The editor's asker: allows, and records what it was asked."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        self.questions.append(question)
        return ALLOW_ONCE


class Http:
    """The shared gate and the HTTP questions, served per chat as the routes serve them."""

    def __init__(self, gate: PermissionGate, questions: Questions) -> None:
        self.gate = gate
        self.questions = questions

    def serve(self, chat_id: str, mode: AskMode) -> None:
        self.gate.serve(chat_id, ChatAsker(self.questions, chat_id, mode))

    def release(self, chat_id: str) -> None:
        self.gate.release(chat_id)


def gate(editor: Editor | None = None, **policy: str) -> tuple[Http, EventHub]:
    hub = EventHub()
    permissions = ToolPermissions(**policy)  # type: ignore[arg-type]
    return Http(PermissionGate(lambda: permissions, editor), Questions(hub)), hub


async def test_other_chats_are_asked_by_the_editor() -> None:
    editor = Editor()
    http, _ = gate(editor, execute="ask")
    assert await http.gate.check(Terminal(), {}, ToolContext("lsp-chat")) is None
    assert len(editor.questions) == 1


async def test_without_an_editor_ask_is_denied_outside_http_chats() -> None:
    http, _ = gate(None, execute="ask")
    refusal = await http.gate.check(Terminal(), {}, ToolContext("somewhere"))
    assert refusal is not None and "no editor to ask" in refusal


async def test_ask_is_denied_unless_the_request_allows_it() -> None:
    editor = Editor()
    http, _ = gate(editor, execute="ask")
    http.serve("c1", "deny")
    refusal = await http.gate.check(Terminal(), {}, ToolContext("c1"))
    assert refusal is not None and '"permissions": "allow"' in refusal
    assert refusal.startswith("terminal was not run: execute tools need the user's approval")
    http.serve("c1", "allow")
    assert await http.gate.check(Terminal(), {}, ToolContext("c1")) is None
    assert editor.questions == []
    http.release("c1")  # the editor asks again
    assert await http.gate.check(Terminal(), {}, ToolContext("c1")) is None
    assert len(editor.questions) == 1


async def test_deny_and_allow_policies_hold_whatever_the_request_says() -> None:
    http, _ = gate(Editor(), execute="deny")
    http.serve("c1", "allow")
    assert await http.gate.check(Terminal(), {}, ToolContext("c1")) is not None
    allowed, _ = gate(Editor(), execute="allow")
    allowed.serve("c1", "deny")
    assert await allowed.gate.check(Terminal(), {}, ToolContext("c1")) is None


async def test_ask_mode_asks_through_the_stream_and_remembers_the_chat() -> None:
    http, hub = gate(Editor(), execute="ask")
    http.serve("c1", "ask")
    shown: list[dict[str, Any]] = []
    hub.subscribe("c1", shown.append)
    checking = asyncio.create_task(http.gate.check(Terminal(), {}, ToolContext("c1")))
    await asyncio.sleep(0)
    assert http.questions.answer(shown[0]["questionId"], ALLOW_FOR_CHAT)
    assert await checking is None
    assert await http.gate.check(Terminal(), {}, ToolContext("c1")) is None  # not asked again
    assert len(shown) == 1
