"""The ACP door of the feature table: ``_qodeassist/<feature>/<op>`` extension methods.

ACP names a custom method with a leading underscore; the SDK hands such a request to the
agent's public ``ext_method`` hook with the underscore removed, so ``_qodeassist/echo/reverse``
arrives here as ``qodeassist/echo/reverse``. The params are validated by the operation's
request model (-32602 naming each field) and errors answered through the one error table
(``acp_agent/errors.py``); a name of no operation is -32601 (method not found) whose data says
which features and operations there are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp import RequestError

from qodeassist_lsp.acp_agent.errors import rpc_error
from qodeassist_lsp.wire.errors import QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.workbench.features import FeatureTable

PREFIX = "qodeassist/"
"""What an operation's extension name starts with once the SDK removed the underscore."""


def _not_found(method: str, message: str) -> RequestError:
    return RequestError(-32601, "Method not found", {"method": f"_{method}", "message": message})


async def call(table: FeatureTable, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Answer the extension request ``_<method>`` from ``table``'s operations."""
    from qodeassist_lsp.workbench.features import OperationNotFound

    if not method.startswith(PREFIX):
        raise _not_found(method, f"no extension method _{method} (served: _{PREFIX}<feature>/<op>)")
    try:
        bound = table.operation(method.removeprefix(PREFIX))
    except OperationNotFound as exc:
        raise _not_found(method, str(exc)) from None
    try:
        return await bound.call(params)
    except QodeAssistError as exc:
        raise rpc_error(exc) from exc
