"""The LSP door of the one error table: handlers raise, they do not translate.

Every handler the server registers (``QodeAssistServer.feature`` and ``.command``) is wrapped
by `answering`, which answers an error of the tree (``wire/errors.py``) with the JSON-RPC error
the table of ``wire/error_table.py`` gives its kind: invalid params, no such chat or edit, a
refused path → ``InvalidParams`` (-32602); a busy chat or too large an input →
``InvalidRequest`` (-32600); anything else (a provider, launch, tool-limit or pool failure) →
``RequestFailed`` (-32803), ``"<category> error: <message>"`` with ``{"category"}`` as data
for a categorized one.

Anything else is a bug: pygls answers ``InternalError`` (-32603) and logs it. A JSON-RPC error
raised as such (``RequestFailed``, pygls's own) passes through unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest

from qodeassist_lsp.wire.error_table import lsp_answer
from qodeassist_lsp.wire.errors import InvalidParams, QodeAssistError

__all__ = ["InvalidParams", "RequestFailed", "answering", "rpc_error"]

F = TypeVar("F", bound=Callable[..., Any])


class RequestFailed(QodeAssistError, JsonRpcException):
    """LSP ``RequestFailed``: valid params, but the work failed (the message says why)."""

    CODE = -32803
    MESSAGE = "RequestFailed"


_BY_CODE: dict[int, type[JsonRpcException]] = {
    JsonRpcInvalidParams.CODE: JsonRpcInvalidParams,
    JsonRpcInvalidRequest.CODE: JsonRpcInvalidRequest,
    RequestFailed.CODE: RequestFailed,
}


def rpc_error(exc: QodeAssistError) -> JsonRpcException:
    """Return the JSON-RPC error that answers ``exc`` (the table's row for its kind)."""
    if isinstance(exc, JsonRpcException):
        return exc
    answer = lsp_answer(exc)
    return _BY_CODE[answer.code](answer.message, data=answer.data)


def _reraise(exc: QodeAssistError) -> NoReturn:
    if isinstance(exc, JsonRpcException):
        raise exc
    raise rpc_error(exc) from exc


def answering(handler: F) -> F:
    """Wrap ``handler`` so that the errors of the tree it raises are answered by `rpc_error`."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def answer_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except QodeAssistError as exc:
                _reraise(exc)

        return answer_async  # type: ignore[return-value]

    @functools.wraps(handler)
    def answer(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except QodeAssistError as exc:
            _reraise(exc)

    return answer  # type: ignore[return-value]
