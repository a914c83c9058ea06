"""The HTTP API's one error shape: ``{"error": {"message", "type", "code", "param"?}}`` (OpenAI's).

Routes raise `ApiError`; the typed failures of the layers below (a chat the user named wrong,
a configuration not loaded yet, a message into a busy chat, the agent pool's refusals: 404 no
agent meets the requirements, 503 busy or every circuit open) are mapped once here, in
`exception_handlers`, as are Starlette's own 404/405 and anything unexpected (a 500 in the same
shape). ``type`` follows the status (`ERROR_TYPES`); ``code`` says which refusal it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from qodeassist_lsp.http_api.host import NotReady
from qodeassist_lsp.wire.errors import QodeAssistError

ERROR_TYPES: Final = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
}
"""The ``type`` of an error by status; other 4xx are ``invalid_request_error``, 5xx
``server_error``."""
NO_RETRY: Final = {"X-Should-Retry": "false"}
"""The OpenAI clients' own header: sent where a retry would repeat a side effect (a new chat)
or meet the same refusal (a busy chat), since they retry every 409 and 5xx by default."""
MAX_JSON_DEPTH: Final = 64
"""How deeply a request body may nest (OpenAI's requests need a handful of levels)."""


class ApiError(QodeAssistError):
    """A request the API refuses: its HTTP status, what to do about it, and the field at fault."""

    def __init__(self, status: int, message: str, *, code: str = "", param: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or {400: "invalid_request", 404: "not_found"}.get(status, "error")
        self.param = param


class BodyTooLarge(QodeAssistError):
    """The request body passed the size limit while it was read (`safety.Guard`)."""


def error_type(status: int) -> str:
    """Return the OpenAI error ``type`` of ``status``."""
    if status >= 500:
        return "server_error"
    return ERROR_TYPES.get(status, "invalid_request_error")


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


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.code, param=exc.param)


async def _too_large(request: Request, exc: Exception) -> Response:
    return error_response(413, "the body is too large", "too_large")


async def _not_ready(request: Request, exc: Exception) -> Response:
    return error_response(503, str(exc), "not_ready", headers={"Retry-After": "2"})


async def _invalid(request: Request, exc: Exception) -> Response:
    message = str(exc)
    status = 404 if message.startswith(("no chat ", "invalid chat id ")) else 400
    return error_response(status, message, "not_found" if status == 404 else "invalid_request")


async def _busy(request: Request, exc: Exception) -> Response:
    return error_response(409, str(exc), "chat_busy", headers=NO_RETRY)


async def _pool(request: Request, exc: Exception) -> Response:
    from qodeassist_lsp.core.agent_pool import NoAgentMeets, PoolBusy

    if isinstance(exc, NoAgentMeets):
        return error_response(404, str(exc), "no_agent_meets")
    code = "pool_busy" if isinstance(exc, PoolBusy) else "circuit_open"
    return error_response(503, str(exc), code, headers={"Retry-After": "5"})


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
    """Return the app's handlers: `ApiError`, `NotReady`, the chat's and the pool's errors."""
    from qodeassist_lsp.config.pipelines import UnknownPipeline
    from qodeassist_lsp.core.agent_pool import NoAgentMeets, PoolBusy
    from qodeassist_lsp.core.breaker import CircuitOpenError
    from qodeassist_lsp.features.chat.compressor import CompressionFailed
    from qodeassist_lsp.features.chat.files import ChatBusy, ChatInputError
    from qodeassist_lsp.features.chat.history_format import HistoryFormatError
    from qodeassist_lsp.features.chat.store import ChatNotFound
    from qodeassist_lsp.tools.edits.blocks import EditRefused

    handlers: dict[Any, Any] = {
        ApiError: _api_error,
        NotReady: _not_ready,
        BodyTooLarge: _too_large,
        ChatBusy: _busy,
        HTTPException: _http,
        Exception: _unexpected,
    }
    for kind in (ChatInputError, HistoryFormatError, UnknownPipeline, EditRefused, ChatNotFound):
        handlers[kind] = _invalid
    handlers[CompressionFailed] = _invalid
    for refusal in (NoAgentMeets, PoolBusy, CircuitOpenError):  # the agent pool's refusals
        handlers[refusal] = _pool
    return handlers
