"""The one mapping from the error tree to JSON-RPC errors: handlers raise, they do not translate.

Every handler the server registers (``QodeAssistServer.feature`` and ``.command``) is wrapped
by `answering`, which decides the answer from where an error sits in the tree of
``wire/errors.py``:

* a `CategorizedError` (a provider, launch, tool-limit or compression failure) is
  ``RequestFailed`` (-32803), ``"<category> error: <message>"``, with ``{"category"}`` as data;
* an error that is also a ``ValueError``, ``LookupError`` or ``PermissionError`` (bad input, no
  such chat, edit or checkpoint, a refused path) is ``InvalidParams`` (-32602) with its message;
* a message sent into a busy chat (``ChatBusy``) is ``InvalidRequest`` (-32600);
* any other ``QodeAssistError`` is ``RequestFailed`` with its message.

Anything else is a bug: pygls answers ``InternalError`` (-32603) and logs it. A JSON-RPC error
raised as such (``RequestFailed``, pygls's own) passes through unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest

from qodeassist_lsp.features.chat.files import ChatBusy
from qodeassist_lsp.wire.errors import CategorizedError, QodeAssistError

F = TypeVar("F", bound=Callable[..., Any])


class RequestFailed(QodeAssistError, JsonRpcException):
    """LSP ``RequestFailed``: valid params, but the work failed (the message says why)."""

    CODE = -32803
    MESSAGE = "RequestFailed"


class InvalidParams(QodeAssistError, ValueError):
    """A request's params cannot be used (answered -32602 with this message)."""


def rpc_error(exc: QodeAssistError) -> JsonRpcException:
    """Return the JSON-RPC error that answers ``exc`` (the mapping of the module docstring)."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, CategorizedError):
        category = str(exc.info.category)
        return RequestFailed(f"{category} error: {exc.info.message}", data={"category": category})
    if isinstance(exc, ChatBusy):
        return JsonRpcInvalidRequest(str(exc))
    if isinstance(exc, ValueError | LookupError | PermissionError):
        return JsonRpcInvalidParams(str(exc))
    return RequestFailed(str(exc))


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
