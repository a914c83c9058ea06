"""The one error table: an error's kind decides its answer at every door.

Doors raise errors of the tree (``wire/errors.py``); the LSP server (``lsp/errors.py``), the ACP
agent (``acp_agent/errors.py``) and the HTTP API (``http_api/errors.py``) turn what they catch
into their answer here and nowhere else, so one class is refused the same way everywhere:

=============  ======  ======  =====================================================
kind           LSP     ACP     HTTP (OpenAI ``type``)
=============  ======  ======  =====================================================
invalid        -32602  -32602  400 ``invalid_request_error``
not_found      -32602  -32602  404 ``not_found_error``
refused        -32602  -32602  403 ``permission_error``
busy           -32600  -32600  409 ``invalid_request_error``, ``X-Should-Retry: false``
too_large      -32600  -32600  413 ``invalid_request_error``
unavailable    -32803  -32603  503 ``server_error``, ``Retry-After``
failed         -32803  -32603  by category (`CATEGORY_STATUS`), else 500 ``server_error``
=============  ======  ======  =====================================================

A categorized error (`CategorizedError`) answers ``"<category> error: <message>"`` with its
category as data on both JSON-RPC doors, and as the HTTP ``code``. ACP has no ``RequestFailed``
code (-32803 is the LSP's own), so its failures are JSON-RPC's internal error, as the SDK's are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from qodeassist_lsp.wire.errors import (
    CategorizedError,
    ErrorCategory,
    ErrorKind,
    QodeAssistError,
    kind_of,
)

__all__ = [
    "CATEGORY_STATUS",
    "TABLE",
    "HttpAnswer",
    "KindRow",
    "RpcAnswer",
    "acp_answer",
    "category_status",
    "error_type",
    "http_answer",
    "kind_of",
    "lsp_answer",
]


@dataclass(frozen=True, slots=True)
class KindRow:
    """One kind's answer at each door, and the HTTP ``code`` its classes send by default."""

    lsp: int
    acp: int
    status: int
    code: str
    retry: bool = True
    """Whether an OpenAI client may retry (``False``: ``X-Should-Retry: false`` is sent)."""
    retry_after_s: float | None = None


TABLE: Final[dict[ErrorKind, KindRow]] = {
    ErrorKind.INVALID: KindRow(-32602, -32602, 400, "invalid_request"),
    ErrorKind.NOT_FOUND: KindRow(-32602, -32602, 404, "not_found"),
    ErrorKind.REFUSED: KindRow(-32602, -32602, 403, "refused"),
    ErrorKind.BUSY: KindRow(-32600, -32600, 409, "busy", retry=False),
    ErrorKind.TOO_LARGE: KindRow(-32600, -32600, 413, "too_large"),
    ErrorKind.UNAVAILABLE: KindRow(-32803, -32603, 503, "unavailable", retry_after_s=5),
    ErrorKind.FAILED: KindRow(-32803, -32603, 500, "failed", retry=False),
}
"""The table of the module docstring."""

CATEGORY_STATUS: Final = {
    ErrorCategory.VALIDATION: 400,
    ErrorCategory.CONFIG: 500,
    ErrorCategory.TOOL: 500,
}
"""The HTTP status of a failure by its category; the others (auth, network, provider: the
provider's side) are 502."""

ERROR_TYPES: Final = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}
"""The OpenAI ``type`` by status; other 4xx are ``invalid_request_error``, 5xx
``server_error``."""

_RPC_MESSAGES: Final = {
    -32600: "Invalid request",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32803: "Request failed",
}


def error_type(status: int) -> str:
    """Return the OpenAI error ``type`` of HTTP ``status``."""
    if status >= 500:
        return "server_error"
    return ERROR_TYPES.get(status, "invalid_request_error")


def category_status(category: str) -> int:
    """Return the HTTP status of a failure of ``category`` (a failed turn's, too)."""
    try:
        return CATEGORY_STATUS.get(ErrorCategory(category), 502)
    except ValueError:
        return 502


@dataclass(frozen=True, slots=True)
class RpcAnswer:
    """A JSON-RPC error: code, message and data (``None``: none)."""

    code: int
    message: str
    data: dict[str, Any] | None = None


def _message_and_category(exc: QodeAssistError) -> tuple[str, str]:
    if isinstance(exc, CategorizedError):
        category = str(exc.info.category)
        return f"{category} error: {exc.info.message}", category
    return str(exc), ""


def lsp_answer(exc: QodeAssistError) -> RpcAnswer:
    """Return the LSP server's JSON-RPC error for ``exc`` (its message in ``message``)."""
    message, category = _message_and_category(exc)
    return RpcAnswer(TABLE[kind_of(exc)].lsp, message, {"category": category} if category else None)


def acp_answer(exc: QodeAssistError) -> RpcAnswer:
    """Return the ACP agent's JSON-RPC error for ``exc`` (its message in ``data``, as the SDK's)."""
    message, category = _message_and_category(exc)
    code = TABLE[kind_of(exc)].acp
    data = {"message": message, **({"category": category} if category else {})}
    return RpcAnswer(code, _RPC_MESSAGES[code], data)


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    """An HTTP error: status and the OpenAI body's ``message``, ``type``, ``code``, ``param``."""

    status: int
    message: str
    code: str
    param: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def type(self) -> str:
        """The OpenAI error ``type``: it follows the status."""
        return error_type(self.status)


def http_answer(exc: QodeAssistError) -> HttpAnswer:
    """Return the HTTP API's answer for ``exc``."""
    kind = kind_of(exc)
    row = TABLE[kind]
    message, _ = _message_and_category(exc)
    status, code = row.status, exc.error_code or row.code
    retry_after = exc.retry_after_s or row.retry_after_s
    if isinstance(exc, CategorizedError):
        category = str(exc.info.category)
        code = exc.error_code or category
        retry_after = exc.info.retry_after or retry_after
        if kind is ErrorKind.FAILED:
            status = category_status(category)
    headers: dict[str, str] = {}
    if not row.retry:
        headers["X-Should-Retry"] = "false"
    if retry_after is not None and status == 503:
        headers["Retry-After"] = str(max(1, round(retry_after)))
    return HttpAnswer(status, message, code, str(getattr(exc, "param", "") or ""), headers)
