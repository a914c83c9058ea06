"""Turning HTTP statuses, provider error envelopes and transport exceptions into `ErrorInfo`.

Classification uses structured facts only: the status code, the envelope's ``type`` /
``code`` / ``status`` tokens, and the exception class. Message text is shown to the user but
never searched, because providers reword their messages freely.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from qodeassist_lsp.wire.errors import DEFAULT_PROVIDER, ErrorCategory, ErrorContext, ErrorInfo

MAX_DETAIL_CHARS = 2000

# Envelope tokens (``error.type``, ``error.code``, Google ``error.status``), lower-cased.
_TOKENS_OF: dict[ErrorCategory, str] = {
    ErrorCategory.AUTH: "authentication_error permission_error invalid_api_key unauthenticated "
    "permission_denied",
    ErrorCategory.CONFIG: "not_found_error model_not_found not_found",
    ErrorCategory.TOOL: "tool_use_failed",
    ErrorCategory.VALIDATION: "invalid_request_error invalid_argument failed_precondition "
    "request_too_large not_supported_error out_of_range",
    ErrorCategory.PROVIDER: "overloaded_error api_error rate_limit_error rate_limit_exceeded "
    "insufficient_quota server_error unavailable_error resource_exhausted unavailable internal "
    "deadline_exceeded aborted",
}
_TOKEN_CATEGORY = {token: cat for cat, tokens in _TOKENS_OF.items() for token in tokens.split()}


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _clip(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass(slots=True)
class Envelope:
    """The parts of a provider error body that matter, whatever the provider's shape."""

    message: str
    names: list[str]
    status: int | None = None
    retry_delay: float | None = None

    @property
    def tokens(self) -> list[str]:
        """The envelope's code, status and type names, lower-cased."""
        return [name.lower() for name in self.names]

    @property
    def code(self) -> str:
        """The first name the envelope gives the error."""
        return next((name for name in self.names if name), "")


def read_envelope(payload: object) -> Envelope | None:
    """Extract an error from any known envelope shape, or None when ``payload`` is not one."""
    if not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    if isinstance(error, str) and error:
        # Ollama: {"error": "<text>"}.
        return Envelope(error, [])
    if isinstance(error, Mapping):
        # Anthropic, OpenAI, Groq, OpenRouter, Google, llama.cpp, Responses.
        tokens = [_str(error.get("code")), _str(error.get("status")), _str(error.get("type"))]
        numeric = error.get("code") if isinstance(error.get("code"), int) else None
        numeric = numeric or (
            error.get("status_code") if isinstance(error.get("status_code"), int) else None
        )
        message = _str(error.get("message")) or json.dumps(error)[:500]
        return Envelope(message, tokens, numeric, _google_retry_delay(error))
    if payload.get("type") == "error" or payload.get("object") == "error":
        # Responses API (older) and Mistral put the fields at the top level.
        tokens = [_str(payload.get("code")), _str(payload.get("type"))]
        message = _str(payload.get("message")) or json.dumps(payload)[:500]
        return Envelope(message, [t for t in tokens if t != "error"])
    detail = payload.get("detail")
    if detail is not None and len(payload) == 1:
        # FastAPI-style validation bodies (Mistral 422).
        return Envelope(detail if isinstance(detail, str) else json.dumps(detail)[:500], [])
    return None


def _google_retry_delay(error: Mapping[str, Any]) -> float | None:
    details = error.get("details")
    if not isinstance(details, list):
        return None
    for item in details:
        if isinstance(item, Mapping) and _str(item.get("@type")).endswith("RetryInfo"):
            delay = _str(item.get("retryDelay"))
            if delay.endswith("s"):
                try:
                    return float(delay[:-1])
                except ValueError:
                    return None
    return None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Read ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), if present."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _category_from_tokens(tokens: list[str]) -> ErrorCategory | None:
    for token in tokens:
        if token in _TOKEN_CATEGORY:
            return _TOKEN_CATEGORY[token]
    return None


def _category_from_status(status: int) -> ErrorCategory:
    if status in (401, 403):
        return ErrorCategory.AUTH
    if status == 404:
        return ErrorCategory.CONFIG
    if status in (408, 409, 425, 429) or status >= 500:
        return ErrorCategory.PROVIDER
    return ErrorCategory.VALIDATION


def _message(
    category: ErrorCategory,
    ctx: ErrorContext,
    what: str,
    *,
    status: int | None,
    retry_after: float | None,
) -> str:
    who = ctx.subject
    if category is ErrorCategory.AUTH:
        how = (
            f"Set {ctx.api_key_env} or run `{ctx.secrets_command}`."
            if ctx.api_key_env
            else f"Run `{ctx.secrets_command}` to store a valid key."
        )
        return f"{who} rejected the API key ({what}). {how}"
    if category is ErrorCategory.CONFIG:
        return (
            f"{who} does not know the model or endpoint ({what}). Check the agent's model and "
            f"endpoint; `qodeassist-lsp models {ctx.cli_name}` lists models."
        )
    if category is ErrorCategory.VALIDATION:
        return f"{who} rejected the request ({what}). Check the agent's [body] settings."
    if category is ErrorCategory.TOOL:
        return f"The model produced an unusable tool call ({what}). Try again or rephrase."
    if category is ErrorCategory.NETWORK:
        return (
            f"Could not talk to {ctx.provider} ({what}). Check the URL and that the server is up."
        )
    if status == 429:
        wait = f"wait {retry_after:.0f} s and " if retry_after else ""
        return f"{who} is rate limiting requests ({what}). Please {wait}try again."
    if status is not None:
        return f"{who} is unavailable or overloaded ({what}). Try again shortly."
    return f"{who} reported an error during the response ({what}). Try again."


def classify_http_error(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    ctx: ErrorContext | None = None,
) -> ErrorInfo:
    """Classify a non-2xx response from its status, headers and error body."""
    ctx = ctx or ErrorContext()
    text = body.decode("utf-8", errors="replace")
    try:
        envelope = read_envelope(json.loads(text))
    except ValueError:
        envelope = None
    category = _category_from_status(status)
    if envelope is not None and category is not ErrorCategory.AUTH:
        by_token = _category_from_tokens(envelope.tokens)
        # A 400 that says "model not found" is a config problem; a 5xx stays a provider one.
        if by_token is not None and (
            category is ErrorCategory.VALIDATION or by_token is ErrorCategory.AUTH
        ):
            category = by_token
    retry_after = retry_after_seconds(headers)
    if retry_after is None and envelope is not None:
        retry_after = envelope.retry_delay
    if category is not ErrorCategory.PROVIDER:
        retry_after = None
    said = envelope.message if envelope is not None else text.strip()[:200]
    code = f" {envelope.code}" if envelope is not None and envelope.code else ""
    what = f"HTTP {status}{code}" + (f": {said}" if said else "")
    return ErrorInfo(
        category=category,
        message=_message(category, ctx, what, status=status, retry_after=retry_after),
        provider_detail=_clip(text),
        retry_after=retry_after,
        status=status,
    )


def classify_stream_error(payload: object, ctx: ErrorContext | None = None) -> ErrorInfo | None:
    """Classify an error event that arrived inside a 2xx stream, or None if it is not one."""
    envelope = read_envelope(payload)
    if envelope is None:
        return None
    ctx = ctx or ErrorContext()
    category = _category_from_tokens(envelope.tokens)
    if category is None and envelope.status is not None:
        category = _category_from_status(envelope.status)
    category = category or ErrorCategory.PROVIDER
    code = f"{envelope.code}: " if envelope.code else ""
    what = f"{code}{envelope.message}"
    return ErrorInfo(
        category=category,
        message=_message(category, ctx, what, status=None, retry_after=envelope.retry_delay),
        provider_detail=_clip(json.dumps(payload, ensure_ascii=False)),
        retry_after=envelope.retry_delay,
        status=envelope.status,
    )


def classify_exception(exc: BaseException, ctx: ErrorContext | None = None) -> ErrorInfo:
    """Classify a transport exception raised by httpx or a local timeout."""
    ctx = ctx or ErrorContext()
    if isinstance(exc, httpx.ConnectTimeout):
        what = "connection timed out"
    elif isinstance(exc, httpx.ConnectError):
        what = f"connection failed: {exc}" if str(exc) else "connection failed"
    elif isinstance(exc, httpx.ReadTimeout | TimeoutError):
        what = "no data arrived in time"
    elif isinstance(exc, httpx.RemoteProtocolError):
        what = "the server closed the connection unexpectedly"
    else:
        what = f"{type(exc).__name__}: {exc}"
    return ErrorInfo(
        category=ErrorCategory.NETWORK,
        message=_message(ErrorCategory.NETWORK, ctx, what, status=None, retry_after=None),
        provider_detail=_clip(f"{type(exc).__name__}: {exc}"),
    )


_HTML_STARTS = (b"<!doctype html", b"<html")


def is_web_page(content_type: str, head: bytes) -> bool:
    """Whether a response is an HTML page: by its ``Content-Type``, or by how its body starts."""
    if content_type.split(";", 1)[0].strip().lower() in ("text/html", "application/xhtml+xml"):
        return True
    start = head[:64].lstrip().lower()
    return start.startswith(_HTML_STARTS)


def web_page(ctx: ErrorContext | None, url: str, api: str, body: bytes = b"") -> ErrorInfo:
    """Describe a 2xx answer that is a web page (a captive portal, a wrong path), not the API."""
    ctx = ctx or ErrorContext()
    which = "the provider" if ctx.provider == DEFAULT_PROVIDER else f"provider {ctx.provider!r}"
    address = url.split("?", 1)[0]  # a query may carry a key; the path is what to check
    return ErrorInfo(
        category=ErrorCategory.CONFIG,
        message=f"{address} answered with a web page, not the {api} API — check the `url` of "
        f"{which} (a wrong path, or a proxy or captive portal in the way).",
        provider_detail=_clip(body.decode("utf-8", errors="replace")),
    )


def stream_cut(ctx: ErrorContext | None, missing: str) -> ErrorInfo:
    """Describe a stream that ended before its protocol's terminal marker."""
    who = (ctx or ErrorContext()).provider
    return ErrorInfo(
        category=ErrorCategory.PROVIDER,
        message=f"The response from {who} was cut off before it finished ({missing}). Try again.",
        provider_detail=f"stream ended without {missing}",
    )


def unreadable_event(ctx: ErrorContext | None, data: str) -> ErrorInfo:
    """Describe a stream event whose payload is not the JSON the protocol promises."""
    who = (ctx or ErrorContext()).subject
    return ErrorInfo(
        category=ErrorCategory.PROVIDER,
        message=f"{who} sent a stream event that is not valid JSON. Try again.",
        provider_detail=_clip(data),
    )


def bad_tool_arguments(
    ctx: ErrorContext | None, name: str, call_id: str, raw: str, *, cut_off: bool
) -> ErrorInfo:
    """Describe a tool call whose arguments are not a JSON object."""
    why = (
        "were cut off because the reply hit its output token limit; raise max_tokens"
        if cut_off
        else "are not a valid JSON object"
    )
    return ErrorInfo(
        category=ErrorCategory.TOOL,
        message=f"The arguments of tool call {name!r} ({call_id}) {why}.",
        provider_detail=_clip(raw),
    )
