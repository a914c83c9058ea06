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

__all__ = ["InvalidParams", "RequestFailed", "answering", "params_model", "rpc_error"]

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


def params_model(handler: Callable[..., Any]) -> str:
    """Return the name of the params model ``handler`` takes ("" for none).

    A handler that takes its params typed names a model of ``lsp/params.py`` as its second
    parameter's annotation (``args: SendParams``); the model is looked up by that name when
    the first request comes, so importing the server does not import pydantic.
    """
    parameters = list(inspect.signature(handler).parameters.values())
    if len(parameters) < 2 or parameters[1].kind is inspect.Parameter.VAR_POSITIONAL:
        return ""
    annotation = parameters[1].annotation
    if isinstance(annotation, str):
        name = annotation
        known = getattr(handler, "__globals__", {}).get(name)
    else:
        name, known = getattr(annotation, "__name__", ""), annotation
    if not name.isidentifier() or not name.endswith("Params"):
        return ""  # ``types.CompletionParams``: lsprotocol's, structured by pygls
    if known is not None and getattr(known, "__module__", "") != "qodeassist_lsp.lsp.params":
        return ""
    return name


def _validating(handler: Callable[..., Any]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """Return what turns a call's arguments into the handler's: its params validated once."""
    name = params_model(handler)
    if not name:
        return lambda args: args

    def validate(args: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(args) < 2:
            return args
        from qodeassist_lsp.lsp import params

        model = getattr(params, name, None)
        if not (isinstance(model, type) and issubclass(model, params.Params)):
            raise TypeError(f"{handler.__qualname__}: lsp/params.py has no model {name}")
        return (args[0], params.parse(model, args[1]), *args[2:])

    return validate


def answering(handler: F) -> F:
    """Wrap ``handler``: its params validated into its model, its errors answered by `rpc_error`.

    A params problem is ``InvalidParams`` (-32602) naming each field, before the handler runs.
    """
    typed = _validating(handler)
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def answer_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*typed(args), **kwargs)
            except QodeAssistError as exc:
                _reraise(exc)

        return answer_async  # type: ignore[return-value]

    @functools.wraps(handler)
    def answer(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*typed(args), **kwargs)
        except QodeAssistError as exc:
            _reraise(exc)

    return answer  # type: ignore[return-value]
