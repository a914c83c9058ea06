"""The HTTP door of the one error table: ``{"error": {"message", "type", "code", "param"?}}``.

Routes raise: `ApiError` for what the API itself refuses, and the errors of the tree from the
layers below. Every ``QodeAssistError`` is answered once here, by ``wire/error_table.py``'s
row for its kind (status, OpenAI ``type``, ``code``, ``Retry-After`` and ``X-Should-Retry``),
as are Starlette's own 404/405 and anything unexpected (a 500 in the same shape).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from qodeassist_lsp.wire.error_table import TABLE, error_type, http_answer
from qodeassist_lsp.wire.errors import ErrorKind, QodeAssistError

__all__ = [
    "NO_RETRY",
    "ApiError",
    "BodyTooLarge",
    "error_body",
    "error_response",
    "error_type",
    "exception_handlers",
    "parse_json",
    "read_json",
]

NO_RETRY: Final = {"X-Should-Retry": "false"}
"""The OpenAI clients' own header: sent where a retry would repeat a side effect (a new chat)
or meet the same refusal (a busy chat), since they retry every 409 and 5xx by default."""
MAX_JSON_DEPTH: Final = 64
"""How deeply a request body may nest (OpenAI's requests need a handful of levels)."""


class ApiError(QodeAssistError):
    """A request the API refuses: its HTTP status, what to do about it, and the field at fault."""

    def __init__(self, status: int, message: str, *, code: str = "", param: str = "") -> None:
        """Refuse with ``status`` (one of the table's: it picks the kind)."""
        super().__init__(message)
        kinds = [kind for kind, row in TABLE.items() if row.status == status]
        if not kinds:
            raise ValueError(f"no error kind answers HTTP {status}")
        self.error_kind = kinds[0]
        self.error_code = code
        self.param = param


class BodyTooLarge(QodeAssistError):
    """The request body passed the size limit while it was read (`safety.Guard`)."""

    error_kind = ErrorKind.TOO_LARGE

    def __init__(self, message: str = "the body is too large") -> None:
        """Refuse a body over the limit."""
        super().__init__(message)


def error_body(status: int, message: str, code: str, param: str = "") -> dict[str, Any]:
    """Return ``{"error": {message, type, code[, param]}}``."""
    error: dict[str, Any] = {"message": message, "type": error_type(status), "code": code}
    if param:
        error["param"] = param
    return {"error": error}


def error_response(
    status: int,
    message: str,
    code: str,
    *,
    param: str = "",
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """Return the error body with ``status``."""
    return JSONResponse(
        error_body(status, message, code, param), status_code=status, headers=headers
    )


def parse_json(raw: bytes, where: str = "the body") -> Any:
    """Parse ``raw``; raise `ApiError` 400 for bad JSON, too deep a nesting or broken text."""
    try:
        value = json.loads(raw)
    except RecursionError:
        value = None
        deep = True
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"{where} is not valid JSON: {exc}", code="invalid_json") from None
    else:
        deep = False
    if deep or not _shallow(value):
        raise ApiError(
            400, f"{where} is nested more than {MAX_JSON_DEPTH} levels deep", code="invalid_json"
        )
    return value


def _shallow(value: Any) -> bool:
    r"""Whether ``value`` nests at most `MAX_JSON_DEPTH` levels and holds only real text.

    Iterative, so a deep value cannot exhaust the stack here. A lone UTF-16 surrogate
    (``"\ud800"``) is valid JSON but no text: nothing below could store or send it.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_JSON_DEPTH:
            return False
        if isinstance(item, dict):
            for key in item:
                _check_text(key)
            stack.extend((child, depth + 1) for child in item.values())
        else:
            stack.extend((child, depth + 1) for child in item)
    return True


def _check_text(text: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(
            400,
            "the body holds a lone UTF-16 surrogate (\\ud800–\\udfff), which is not text",
            code="invalid_json",
        ) from None


async def read_json(request: Request) -> dict[str, Any]:
    """Return the request's JSON object body (raise `ApiError` 400 otherwise)."""
    body = parse_json(await request.body() or b"{}")
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", code="invalid_json")
    return body


async def _tree(request: Request, exc: Exception) -> Response:
    """Any error of the tree: the table's answer for its kind."""
    assert isinstance(exc, QodeAssistError)
    answer = http_answer(exc)
    return error_response(
        answer.status, answer.message, answer.code, param=answer.param, headers=answer.headers
    )


async def _http(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals: no such route (404), not this method (405)."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    if status == 404:
        message = f"no route {request.url.path!r}: see docs/http.md for the API's routes"
        code = "not_found"
    elif status == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not served at {request.url.path!r} (allowed: {allowed})"
        code = "method_not_allowed"
    else:
        message, code = str(exc.detail), "http_error"
    return error_response(status, message, code, headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> Response:
    # A bug below: the client still gets the one error shape; the traceback goes to the log.
    return error_response(
        500, f"internal error: {type(exc).__name__}", "internal_error", headers=NO_RETRY
    )


def exception_handlers() -> dict[Any, Any]:
    """Return the app's handlers: the tree's errors, Starlette's and the unexpected."""
    return {QodeAssistError: _tree, HTTPException: _http, Exception: _unexpected}
