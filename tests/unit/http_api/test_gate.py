from __future__ import annotations

import asyncio
from typing import Any

from qodeassist_lsp.config.settings import ToolPermissions
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.http_api.events import EventHub, Questions
from qodeassist_lsp.http_api.gate import HttpGate
from qodeassist_lsp.tools.permissions import ALLOW_FOR_CHAT
from qodeassist_lsp.wire.tools import ToolSpec


class Terminal:
    permission = "execute"
    spec = ToolSpec("terminal", "run", {"type": "object"})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput("ran")


class Editor:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def check(self, tool: Any, arguments: dict[str, Any], context: ToolContext) -> str | None:
        self.calls.append(context.scope)
        return None


def gate(editor: Editor | None = None, **policy: str) -> tuple[HttpGate, EventHub]:
    hub = EventHub()
    permissions = ToolPermissions(**policy)  # type: ignore[arg-type]
    return HttpGate(lambda: permissions, Questions(hub), editor), hub


async def test_other_scopes_go_to_the_editors_gate() -> None:
    editor = Editor()
    http, _ = gate(editor)
    assert await http.check(Terminal(), {}, ToolContext("lsp-chat")) is None
    assert editor.calls == ["lsp-chat"]


async def test_without_an_editor_ask_is_denied_outside_http_chats() -> None:
    http, _ = gate(None, execute="ask")
    refusal = await http.check(Terminal(), {}, ToolContext("somewhere"))
    assert refusal is not None and "no editor to ask" in refusal


async def test_ask_is_denied_unless_the_request_allows_it() -> None:
    http, _ = gate(Editor(), execute="ask")
    http.serve("c1", "deny")
    refusal = await http.check(Terminal(), {}, ToolContext("c1"))
    assert refusal is not None and '"permissions": "allow"' in refusal
    http.serve("c1", "allow")
    assert await http.check(Terminal(), {}, ToolContext("c1")) is None
    http.release("c1")
    assert http.mode_of("c1") is None


async def test_deny_and_allow_policies_hold_whatever_the_request_says() -> None:
    http, _ = gate(Editor(), execute="deny")
    http.serve("c1", "allow")
    assert await http.check(Terminal(), {}, ToolContext("c1")) is not None
    allowed, _ = gate(Editor(), execute="allow")
    allowed.serve("c1", "deny")
    assert await allowed.check(Terminal(), {}, ToolContext("c1")) is None


async def test_ask_mode_asks_through_the_stream_and_remembers_the_chat() -> None:
    http, hub = gate(Editor(), execute="ask")
    http.serve("c1", "ask")
    shown: list[dict[str, Any]] = []
    hub.subscribe("c1", shown.append)
    checking = asyncio.create_task(http.check(Terminal(), {}, ToolContext("c1")))
    await asyncio.sleep(0)
    assert http.questions.answer(shown[0]["questionId"], ALLOW_FOR_CHAT)
    assert await checking is None
    assert await http.check(Terminal(), {}, ToolContext("c1")) is None  # not asked again
    assert len(shown) == 1
