"""The agent's extension hooks: the feature table's operations and ACP's next-edit methods.

ACP names a custom method with a leading underscore; the SDK hands such a request to the
agent's public ``ext_method`` hook with the underscore removed, so ``_qodeassist/echo/reverse``
arrives here as ``qodeassist/echo/reverse``. The params are validated by the operation's
request model (-32602 naming each field) and errors answered through the one error table
(``acp_agent/errors.py``); a name of no operation is -32601 (method not found) whose data says
which features and operations there are.

`Extensions` is what the agent's ``ext_method`` and ``ext_notification`` hand on: those
operations, and ACP's unstable ``nes/*`` and ``document/*`` methods, which the SDK declares but
does not route and `stdin_guard` therefore passes on as extensions (``_nes/start``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.router import MessageRouter

from qodeassist_lsp.acp_agent.errors import answering
from qodeassist_lsp.acp_agent.stdin_guard import UNSTABLE_METHODS

if TYPE_CHECKING:
    from qodeassist_lsp.acp_agent.nes import NesServer
    from qodeassist_lsp.workbench.features import FeatureTable

PREFIX = "qodeassist/"
"""What an operation's extension name starts with once the SDK removed the underscore."""


def _not_found(method: str, message: str) -> RequestError:
    return RequestError(-32601, "Method not found", {"method": f"_{method}", "message": message})


@answering
async def call(table: FeatureTable, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Answer the extension request ``_<method>`` from ``table``'s operations."""
    from qodeassist_lsp.workbench.features import OperationNotFound

    if not method.startswith(PREFIX):
        raise _not_found(method, f"no extension method _{method} (served: _{PREFIX}<feature>/<op>)")
    try:
        bound = table.operation(method.removeprefix(PREFIX))
    except OperationNotFound as exc:
        raise _not_found(method, str(exc)) from None
    return await bound.call(params)


class Extensions:
    """The agent's extension methods: feature operations, and ACP's ``nes/*``, ``document/*``."""

    def __init__(self, table: Callable[[], FeatureTable], nes: NesServer) -> None:
        """Serve ``table``'s operations and route the next-edit methods to ``nes``."""
        from qodeassist_lsp.acp_agent.nes import add_routes

        self._table = table
        self._unstable = MessageRouter()  # the SDK's public router class, for these methods only
        add_routes(self._unstable, nes)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Answer the extension request ``method`` (its name without the leading ``_``)."""
        if method in UNSTABLE_METHODS:
            return await self._unstable(method, params, False)
        return await call(self._table(), method, params)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Handle the extension notification ``method``; unknown ones are ignored (JSON-RPC)."""
        if method in UNSTABLE_METHODS:
            await self._unstable(method, params, True)
