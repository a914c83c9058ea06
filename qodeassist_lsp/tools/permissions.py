"""``PermissionGate``: the ``[tools.permissions]`` policy, asked before every tool call.

Each tool has a permission class (read, write, execute); the policy of its class says
``allow`` (run), ``deny`` (refuse) or ``ask``: the user is asked through `PermissionAsker`
(``window/showMessageRequest`` in an editor) with the actions "Allow once", "Allow for this
chat" and "Deny". "Allow for this chat" lets that tool run for the rest of the chat (the call's
scope) without asking again. The question is `permission_text.describe_call`'s: the tool, the
file and the change as diff lines, or the command line. No asker, no answer or any other answer
means deny, so nothing runs that the user did not allow. A refusal is the tool's result: the
model reads why.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from qodeassist_lsp.config.settings import ToolPermissions
from qodeassist_lsp.core.tools import Tool, ToolContext
from qodeassist_lsp.tools.permission_text import describe_call

ALLOW_ONCE: Final = "Allow once"
ALLOW_FOR_CHAT: Final = "Allow for this chat"
DENY: Final = "Deny"
ACTIONS: Final = (ALLOW_ONCE, ALLOW_FOR_CHAT, DENY)
MAX_REMEMBERED_CHATS: Final = 256


class PermissionAsker(Protocol):
    """Asks the user a question with a fixed set of answers."""

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        """Return the chosen action, or None when there was no answer."""
        ...


class PermissionGate:
    """The ``core.tools.ToolGate`` of the tool kit, MCP and skill tools."""

    def __init__(
        self, policy: Callable[[], ToolPermissions], asker: PermissionAsker | None = None
    ) -> None:
        """Decide by ``policy()`` (read per call); ask through ``asker`` (None: deny)."""
        self._policy = policy
        self._asker = asker
        self._allowed: OrderedDict[str, set[str]] = OrderedDict()

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        """Return None to run the call, or the refusal the model reads."""
        name, permission = tool.spec.name, tool.permission
        decision = getattr(self._policy(), permission, "ask")
        if decision == "allow":
            return None
        setting = f'[tools.permissions] {permission} = "{decision}"'
        if decision == "deny":
            return (
                f"{name} was not run: {permission} tools are denied by the user's settings "
                f"({setting}). Do not call it again; tell the user what you wanted to do."
            )
        if name in self._allowed.get(context.scope, ()):
            return None
        if self._asker is None:
            return (
                f"{name} was not run: {permission} tools need the user's approval "
                f"({setting}) and there is no editor to ask, so it was denied."
            )
        answer = await self._asker.ask(describe_call(name, permission, arguments), ACTIONS)
        if answer == ALLOW_ONCE:
            return None
        if answer == ALLOW_FOR_CHAT:
            self._remember(context.scope, name)
            return None
        why = "denied it" if answer == DENY else "did not answer (that counts as deny)"
        return (
            f"{name} was not run: the user {why}. Do not call it again unless the user asks; "
            "continue without it or say what you need."
        )

    def _remember(self, scope: str, name: str) -> None:
        self._allowed.setdefault(scope, set()).add(name)
        self._allowed.move_to_end(scope)
        while len(self._allowed) > MAX_REMEMBERED_CHATS:
            self._allowed.popitem(last=False)
