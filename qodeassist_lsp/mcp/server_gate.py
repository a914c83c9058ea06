"""The permission policy of ``mcp serve``, where nobody can be asked.

The tool kit's policy (``[tools]``: allow / ask / deny per permission class) holds as in chat,
but an MCP client is a program, not the user: ``ask`` becomes a refusal unless the user listed
the class in ``[mcp] server_allow``. ``deny`` always refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Literal

from qodeassist_lsp.core.tools import PermissionClass, Tool, ToolContext

Decision = Literal["allow", "ask", "deny"]


class HeadlessGate:
    """A `ToolGate` that answers ``ask`` from ``[mcp] server_allow`` instead of asking."""

    def __init__(
        self,
        policy: Callable[[PermissionClass], Decision],
        allowed: Callable[[], Collection[str]],
    ) -> None:
        self._policy = policy
        self._allowed = allowed

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        """Return None to run the call, or why it is refused."""
        permission = tool.permission
        decision = self._policy(permission)
        if decision == "allow":
            return None
        if decision == "ask" and permission in self._allowed():
            return None
        kind = f"{'an' if permission[:1] in 'aeiou' else 'a'} {permission} tool"
        if decision == "deny":
            return f"{tool.spec.name} is {kind} and [tools] denies {permission} tools"
        return (
            f"{tool.spec.name} is {kind}: [tools] says to ask the user first, and "
            f'an MCP client cannot be asked; add "{permission}" to [mcp] server_allow to let '
            "MCP clients run it"
        )
