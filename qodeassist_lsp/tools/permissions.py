"""``PermissionGate``: the ``[tools.permissions]`` policy before every tool call of every door.

Each tool has a permission class (read, write, execute); the policy of its class says
``allow``, ``deny`` or ``ask``: "Allow once", "Allow for this chat" (that tool runs for the
rest of the chat, whichever door asked) or "Deny". The workbench builds this one gate; a door
brings its asker (`PermissionAsker`, or a `CallAsker` that sees the call: ACP's diff) and may
answer the chats it serves itself (`PermissionGate.serve`: HTTP's per-request mode). The
question is `permission_text.describe_call`'s. No asker, no answer or any other answer means
deny; an asker that will not ask raises `NotAsked`. The model reads a refusal as the result.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from qodeassist_lsp.config.settings import ToolPermissions
from qodeassist_lsp.core.tools import Tool, ToolContext
from qodeassist_lsp.tools.permission_text import describe_call
from qodeassist_lsp.wire.errors import QodeAssistError

ALLOW_ONCE: Final = "Allow once"
ALLOW_FOR_CHAT: Final = "Allow for this chat"
DENY: Final = "Deny"
ACTIONS: Final = (ALLOW_ONCE, ALLOW_FOR_CHAT, DENY)
MAX_REMEMBERED_CHATS: Final = 256

RUNNING_CALL: ContextVar[str] = ContextVar("qodeassist_running_call", default="")
"""The id of the call the gate decided last in this task (a client's terminal shows in it)."""


@dataclass(frozen=True, slots=True)
class PermissionCall:
    """The call the gate asks about, with the question and the setting that asks."""

    tool: Tool
    arguments: dict[str, Any]
    context: ToolContext
    question: str
    setting: str


class NotAsked(QodeAssistError):
    """An asker's refusal to ask; ``str(exc)`` follows "<tool> was not run: " for the model."""


class PermissionAsker(Protocol):
    """Asks the user a question with a fixed set of answers."""

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        """Return the chosen action, or None when there was no answer."""
        ...


@runtime_checkable
class CallAsker(Protocol):
    """An asker that sees the call (its diff, its chat); may raise `NotAsked`."""

    async def ask_call(self, call: PermissionCall, actions: Sequence[str]) -> str | None:
        """Return the chosen action, or None when there was no answer."""
        ...


Asker = PermissionAsker | CallAsker


class PermissionGate:
    """The ``core.tools.ToolGate`` of every door's tools: one policy, one memory per chat."""

    def __init__(self, policy: Callable[[], ToolPermissions], asker: Asker | None = None) -> None:
        """Decide by ``policy()`` (read per call); ask through ``asker`` (None: deny)."""
        self._policy = policy
        self._asker = asker
        self._served: dict[str, Asker] = {}
        self._allowed: OrderedDict[str, set[str]] = OrderedDict()

    def serve(self, scope: str, asker: Asker) -> None:
        """Ask ``asker`` about the calls of chat ``scope`` until `release`."""
        self._served[scope] = asker

    def release(self, scope: str) -> None:
        """Ask the default asker about chat ``scope``'s calls again."""
        self._served.pop(scope, None)

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        """Return None to run the call, or the refusal the model reads."""
        RUNNING_CALL.set(context.call_id)  # calls are decided and run one by one in a turn
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
        asker = self._served.get(context.scope, self._asker)
        if asker is None:
            return (
                f"{name} was not run: {permission} tools need the user's approval "
                f"({setting}) and there is no editor to ask, so it was denied."
            )
        question = describe_call(name, permission, arguments)
        try:
            if isinstance(asker, CallAsker):
                call = PermissionCall(tool, arguments, context, question, setting)
                answer = await asker.ask_call(call, ACTIONS)
            else:
                answer = await asker.ask(question, ACTIONS)
        except NotAsked as exc:
            return f"{name} was not run: {exc}"
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
