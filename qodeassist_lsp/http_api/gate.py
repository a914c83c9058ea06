"""`HttpGate`: the permission gate of the shared runtime, with HTTP chats decided over HTTP.

The runtime has one gate for every session. Beside an editor it asks the editor; the HTTP host
wraps it: a tool call whose scope (its chat) is served by an HTTP request is decided by the
``[tools.permissions]`` policy with ``ask`` answered the way that request said — ``deny`` (the
default: nobody at an HTTP client can be asked), ``allow``, or ``ask``: the question is shown in
the chat's stream (the web page) and waits for an answer. Every other call goes to the editor's
gate (or, with no editor, is denied when it would have to ask).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

from qodeassist_lsp.config.settings import ToolPermissions
from qodeassist_lsp.core.tools import Tool, ToolContext, ToolGate
from qodeassist_lsp.http_api.events import Questions
from qodeassist_lsp.tools.permissions import ALLOW_ONCE, PermissionGate

AskMode = Literal["deny", "allow", "ask"]
ASK_MODES: Final = ("deny", "allow", "ask")
MAX_CHATS: Final = 256


class _ChatAsker:
    """The `PermissionAsker` of one HTTP chat: answers from the request's mode."""

    def __init__(self, gate: HttpGate, chat_id: str) -> None:
        self._gate = gate
        self._chat_id = chat_id

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        """Allow, or show the question in the chat's stream and wait for the answer."""
        mode = self._gate.mode_of(self._chat_id)
        if mode == "allow":
            return ALLOW_ONCE
        if mode == "ask":
            return await self._gate.questions.ask(self._chat_id, question, actions)
        return None


class HttpGate:
    """Routes each permission check: HTTP chats by their request's mode, others to ``inner``."""

    def __init__(
        self,
        policy: Callable[[], ToolPermissions],
        questions: Questions,
        inner: ToolGate | None = None,
    ) -> None:
        """Decide by ``policy()``; calls of other scopes go to ``inner`` (None: no editor)."""
        self._policy = policy
        self.questions = questions
        self.inner: ToolGate = inner or PermissionGate(policy, None)
        self._modes: dict[str, AskMode] = {}
        self._gates: OrderedDict[str, PermissionGate] = OrderedDict()

    def serve(self, chat_id: str, mode: AskMode) -> None:
        """Decide ``chat_id``'s calls over HTTP with ``mode`` until `release`."""
        self._modes[chat_id] = mode

    def release(self, chat_id: str) -> None:
        """Stop deciding ``chat_id``'s calls over HTTP."""
        self._modes.pop(chat_id, None)

    def mode_of(self, chat_id: str) -> AskMode | None:
        """Return the mode ``chat_id`` is served with (None: not an HTTP chat now)."""
        return self._modes.get(chat_id)

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        """Return None to run the call, or the refusal the model reads."""
        mode = self._modes.get(context.scope)
        if mode is None:
            return await self.inner.check(tool, arguments, context)
        decision = getattr(self._policy(), tool.permission, "ask")
        if decision == "ask" and mode == "deny":
            return (
                f"{tool.spec.name} was not run: {tool.permission} tools need the user's approval "
                f'([tools.permissions] {tool.permission} = "ask") and this HTTP request did not '
                'allow them (it may send "qodeassist": {"permissions": "allow"}), so it was '
                "denied. Tell the user what you wanted to do."
            )
        gate = self._gates.get(context.scope)
        if gate is None:
            gate = self._gates[context.scope] = PermissionGate(
                self._policy, _ChatAsker(self, context.scope)
            )
            while len(self._gates) > MAX_CHATS:
                self._gates.popitem(last=False)
        self._gates.move_to_end(context.scope)
        return await gate.check(tool, arguments, context)
