"""The HTTP API's one error shape: ``{"error": {"message", "type", "code"}}`` (OpenAI's).

Routes raise `ApiError`; the typed failures of the layers below (a chat the user named wrong,
a configuration not loaded yet, the agent pool's refusals: 404 no agent meets the requirements,
503 busy or every circuit open) are mapped once here, in `exception_handlers`.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from qodeassist_lsp.http_api.host import NotReady
from qodeassist_lsp.wire.errors import QodeAssistError


class ApiError(QodeAssistError):
    """A request the API refuses: its HTTP status and what to do about it."""

    def __init__(self, status: int, message: str, *, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or {400: "invalid_request", 404: "not_found"}.get(status, "error")


class BodyTooLarge(QodeAssistError):
    """The request body passed the size limit while it was read (`safety.Guard`)."""


def error_response(status: int, message: str, code: str, **headers: str) -> JSONResponse:
    """Return the error body with ``status``."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": code}},
        status_code=status,
        headers=headers or None,
    )


async def read_json(request: Request) -> dict[str, Any]:
    """Return the request's JSON object body (raise `ApiError` 400 otherwise)."""
    raw = await request.body()
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return body


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.code)


async def _too_large(request: Request, exc: Exception) -> Response:
    return error_response(413, "the body is too large", "too_large")


async def _not_ready(request: Request, exc: Exception) -> Response:
    return error_response(503, str(exc), "not_ready", **{"Retry-After": "2"})


async def _invalid(request: Request, exc: Exception) -> Response:
    message = str(exc)
    status = 404 if message.startswith("no chat ") else 400
    return error_response(status, message, "not_found" if status == 404 else "invalid_request")


async def _pool(request: Request, exc: Exception) -> Response:
    from qodeassist_lsp.core.agent_pool import NoAgentMeets, PoolBusy

    if isinstance(exc, NoAgentMeets):
        return error_response(404, str(exc), "no_agent_meets")
    code = "pool_busy" if isinstance(exc, PoolBusy) else "circuit_open"
    return error_response(503, str(exc), code, **{"Retry-After": "5"})


def exception_handlers() -> dict[Any, Any]:
    """Return the app's handlers: `ApiError`, `NotReady`, the chat's and the pool's errors."""
    from qodeassist_lsp.config.pipelines import UnknownPipeline
    from qodeassist_lsp.core.agent_pool import NoAgentMeets, PoolBusy
    from qodeassist_lsp.core.breaker import CircuitOpenError
    from qodeassist_lsp.features.chat.compressor import CompressionFailed
    from qodeassist_lsp.features.chat.files import ChatInputError
    from qodeassist_lsp.features.chat.history_format import HistoryFormatError
    from qodeassist_lsp.tools.edits.blocks import EditRefused

    handlers: dict[Any, Any] = {
        ApiError: _api_error,
        NotReady: _not_ready,
        BodyTooLarge: _too_large,
    }
    for kind in (ChatInputError, HistoryFormatError, UnknownPipeline, EditRefused):
        handlers[kind] = _invalid
    handlers[CompressionFailed] = _invalid
    for refusal in (NoAgentMeets, PoolBusy, CircuitOpenError):  # the agent pool's refusals
        handlers[refusal] = _pool
    return handlers
