"""`WireClient`: one streamed request from POST to typed events, and model listing.

Every provider call goes through one ``httpx.AsyncClient`` (`make_http_client`, one per
provider instance); its transport is injectable, so unit tests hand an ``httpx.MockTransport``
to the very code that talks to real providers. The client owns the I/O the parsers leave out:
compact JSON out, status check (a non-2xx body is read whole and classified before any stream
decoding), retries strictly before the first byte, first-byte and inactivity timeouts, and
closing the HTTP stream on every exit, cancellation included. Failures before a 2xx response
raise `WireError`; after it they arrive as a final `StreamError` event. A 2xx answer that is
an HTML page (a captive portal, a wrong path) is not the API: it is reported as such (a config
error naming the provider's ``url``), not as a stream that was cut off. Log lines on
``qodeassist.wire`` carry the request id; bodies go to ``qodeassist.wire.body`` at DEBUG;
secrets redacted everywhere.

LLM streams need three timeouts httpx does not express directly: how long to wait for the
first byte of the answer (a local model may be loading), how long a silent gap between chunks
may last, and how long to connect. `WireClient` enforces the first two with asyncio and hands
httpx the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from secrets import token_hex
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

import httpx

from qodeassist_lsp import __version__
from qodeassist_lsp.wire.classify import (
    classify_exception,
    classify_http_error,
    is_web_page,
    web_page,
)
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorContext, ErrorInfo, WireError, redact
from qodeassist_lsp.wire.events import MessageStop, StreamError, WireEvent
from qodeassist_lsp.wire.parser import StreamParser
from qodeassist_lsp.wire.protocols import API_NAMES, WireProtocol
from qodeassist_lsp.wire.registry import parser_for, protocol_api
from qodeassist_lsp.wire.retry import RetryPolicy

logger = logging.getLogger("qodeassist.wire")
body_logger = logging.getLogger("qodeassist.wire.body")
"""Request and response bodies, at DEBUG; ``[logging] log_requests`` switches it on."""

ParserFactory = Callable[[str, ErrorContext], StreamParser]
Sleep = Callable[[float], Awaitable[None]]
_Chunks = AsyncGenerator[bytes, None]

USER_AGENT = f"qodeassist-lsp/{__version__}"
LIMITS = httpx.Limits(max_connections=20, max_keepalive_connections=10, keepalive_expiry=30.0)
MAX_MODEL_PAGES = 20
_DRAIN_SECONDS = 0.25
_DRAIN_BYTES = 64 * 1024
_SECRET_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key")


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds allowed per phase of a streamed request; None disables a limit."""

    connect: float | None = 10.0
    first_byte: float | None = 60.0
    inactivity: float | None = 120.0
    write: float | None = 30.0

    def for_httpx(self) -> httpx.Timeout:
        """Build the httpx timeout: connect/write/pool as given, read as a backstop behind ours."""
        limits = [t for t in (self.first_byte, self.inactivity) if t is not None]
        read = max(limits) + 5.0 if len(limits) == 2 else None
        return httpx.Timeout(connect=self.connect, read=read, write=self.write, pool=self.connect)


def make_http_client(
    *, transport: httpx.AsyncBaseTransport | None = None, timeouts: Timeouts | None = None
) -> httpx.AsyncClient:
    """Create a provider's client: pool limits, user agent, and ``transport`` if given."""
    return httpx.AsyncClient(
        transport=transport,
        timeout=(timeouts or Timeouts()).for_httpx(),
        limits=LIMITS,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
    )


def _secrets_in(url: str, headers: Mapping[str, str]) -> list[str]:
    found = [v for k, v in parse_qsl(urlsplit(url).query) if k.lower() in ("key", "api_key")]
    for name, value in headers.items():
        if name.lower() in _SECRET_HEADERS:
            found.append(value.split()[-1] if value.split() else value)
    return found


class _RequestLog:
    """Log lines prefixed with the request id, with secrets removed."""

    def __init__(self, request_id: str, secrets: list[str]) -> None:
        self.request_id = request_id
        self._secrets = secrets

    def __call__(self, level: int, message: str, *args: object) -> None:
        if logger.isEnabledFor(level):
            text = message % args if args else message
            logger.log(level, "[%s] %s", self.request_id, redact(text, self._secrets))

    def body(self, message: str, *args: object) -> None:
        """Log a request or response body at DEBUG on the body logger."""
        if body_logger.isEnabledFor(logging.DEBUG):
            text = message % args if args else message
            body_logger.debug("[%s] %s", self.request_id, redact(text, self._secrets))


class WireClient:
    """Streams requests of one wire protocol through a provider's ``httpx.AsyncClient``."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        protocol: WireProtocol,
        *,
        parser_factory: ParserFactory | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        context: ErrorContext | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        """Create a client; the parser is chosen per URL unless ``parser_factory`` is given."""
        self._http = http
        self.protocol = protocol
        self._parser_factory = parser_factory or (
            lambda url, ctx: parser_for(protocol, url, context=ctx)
        )
        self._timeouts = timeouts or Timeouts()
        self._retry = retry or RetryPolicy()
        self._context = context or ErrorContext()
        self._sleep = sleep
        self._rng = rng or random.Random()

    async def stream(
        self,
        url: str,
        headers: Mapping[str, str],
        body: Mapping[str, Any],
        *,
        request_id: str | None = None,
    ) -> AsyncGenerator[WireEvent, None]:
        """POST ``body`` to ``url`` and yield the reply as typed events, one at a time.

        As `batches`, whose events it yields one by one.
        """
        batches = self.batches(url, headers, body, request_id=request_id)
        async with contextlib.aclosing(batches) as stream:
            async for batch in stream:
                for event in batch:
                    yield event

    async def batches(
        self,
        url: str,
        headers: Mapping[str, str],
        body: Mapping[str, Any],
        *,
        request_id: str | None = None,
    ) -> AsyncGenerator[list[WireEvent], None]:
        """POST ``body`` to ``url`` and yield the reply's typed events, a list per read.

        Raises `WireError` when no 2xx response arrives; later failures (a stall, a cut
        connection, an error event) end the iteration with a `StreamError`. Closing or
        cancelling the iteration closes the HTTP stream. Events come in the lists the parser
        makes of each piece of the body: a consumer steps once per read, not once per event.
        """
        secrets = _secrets_in(url, headers)
        log = _RequestLog(request_id or token_hex(6), secrets)
        content = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        log(logging.INFO, "POST %s (%d bytes)", url, len(content))
        if body_logger.isEnabledFor(logging.DEBUG):  # decoding a prompt-sized body is not free
            log.body("request body: %s", content.decode())
        loop = asyncio.get_running_loop()
        started = loop.time()
        count = 0
        last: WireEvent | None = None
        streaming = False
        try:
            async with (
                self._opened("POST", url, headers, content, log, secrets) as (response, deadline),
                # httpx types aiter_bytes as an iterator; it is a generator, closed here first.
                contextlib.aclosing(cast(_Chunks, response.aiter_bytes())) as chunks,
            ):
                streaming = True
                parser = self._parser_factory(url, self._context)
                first = True
                while True:
                    try:
                        chunk = await self._read(chunks, deadline, first=first)
                    except (TimeoutError, httpx.HTTPError) as exc:
                        last = StreamError(self._failure(exc, first=first).redacted(secrets))
                        count += 1
                        yield [last]
                        return
                    if first and chunk is not None and is_web_page("", chunk):
                        last = StreamError(self._web_page(url, chunk).redacted(secrets))
                        count += 1
                        yield [last]
                        return
                    first = False
                    if chunk is not None and body_logger.isEnabledFor(logging.DEBUG):
                        log.body("chunk: %s", chunk.decode("utf-8", "replace"))
                    events = parser.close() if chunk is None else parser.feed(chunk)
                    if events:
                        count += len(events)
                        last = events[-1]
                        yield _redacted(events, secrets)
                    if chunk is None:
                        return
                    if parser.ended:
                        await _drain(chunks)
                        return
        finally:
            elapsed = (loop.time() - started) * 1000
            if isinstance(last, MessageStop):
                reason = last.stop_reason
                log(logging.INFO, "finished: %s, %d events, %.0f ms", reason, count, elapsed)
            elif isinstance(last, StreamError):
                log(logging.WARNING, "failed: %s", last.error.message)
            elif streaming:
                log(logging.INFO, "closed after %d events, %.0f ms", count, elapsed)

    async def list_models(self, url: str, headers: Mapping[str, str]) -> list[str]:
        """GET the model list at ``url`` (following pagination) and return the model ids."""
        api = protocol_api(self.protocol)
        secrets = _secrets_in(url, headers)
        log = _RequestLog(token_hex(6), secrets)
        ids: list[str] = []
        page_url: str | None = url
        for _ in range(MAX_MODEL_PAGES):
            if page_url is None:
                break
            log(logging.INFO, "GET %s", page_url)
            opened = self._opened("GET", page_url, headers, None, log, secrets)
            try:
                async with opened as (response, _), asyncio.timeout(self._timeouts.inactivity):
                    raw = await response.aread()
            except (TimeoutError, httpx.HTTPError) as exc:
                info = classify_exception(exc, self._context).redacted(secrets)
                raise WireError(info) from exc
            try:
                payload = json.loads(raw)
            except ValueError as exc:
                if is_web_page("", raw):
                    raise WireError(self._web_page(page_url, raw).redacted(secrets)) from exc
                raise WireError(
                    ErrorInfo(
                        category=ErrorCategory.PROVIDER,
                        message=f"{self._context.subject} returned a model list that is not "
                        "valid JSON. Check the provider URL.",
                        provider_detail=raw[:2000].decode("utf-8", "replace"),
                    ).redacted(secrets)
                ) from exc
            ids.extend(api.parse_model_list(payload))
            page_url = api.next_models_page(page_url, payload)
        return ids

    @contextlib.asynccontextmanager
    async def _opened(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | None,
        log: _RequestLog,
        secrets: list[str],
    ) -> AsyncIterator[tuple[httpx.Response, float | None]]:
        """Send until a 2xx arrives (retrying only what the policy allows), raise otherwise.

        Yields the response and the first-byte deadline; the response is closed on every exit.
        """
        loop = asyncio.get_running_loop()
        request = self._http.build_request(
            method, url, headers=headers, content=content, timeout=self._timeouts.for_httpx()
        )
        attempt = 0
        while True:
            attempt += 1
            first_byte = self._timeouts.first_byte
            deadline = loop.time() + first_byte if first_byte is not None else None
            try:
                async with asyncio.timeout_at(deadline):
                    response = await self._http.send(request, stream=True)
            except TimeoutError as exc:
                info = self._stalled(first_byte, first=True)
                log(logging.WARNING, "attempt %d failed: %s", attempt, info.message)
                raise WireError(info) from exc
            except httpx.HTTPError as exc:
                info = classify_exception(exc, self._context).redacted(secrets)
                delay = (
                    self._retry.delay(attempt, None, self._rng)
                    if self._retry.retries_exception(exc)
                    else None
                )
                if delay is None:
                    log(logging.WARNING, "attempt %d failed: %s", attempt, info.message)
                    raise WireError(info) from exc
                log(
                    logging.INFO,
                    "attempt %d failed (%s); retry in %.2f s",
                    attempt,
                    info.message,
                    delay,
                )
                await self._sleep(delay)
                continue
            try:
                log(logging.INFO, "HTTP %d (attempt %d)", response.status_code, attempt)
                if response.is_success:
                    content_type = response.headers.get("content-type", "")
                    if not is_web_page(content_type, b""):
                        yield response, deadline
                        return
                    info = self._web_page(url, await self._body_of(response)).redacted(secrets)
                else:
                    info = await self._error_from(response, secrets)
            finally:
                await response.aclose()
            delay = (
                self._retry.delay(attempt, info.retry_after, self._rng)
                if self._retry.retries_status(response.status_code, response.headers)
                else None
            )
            if delay is None:
                log(logging.WARNING, "%s", info.message)
                log.body("error body: %s", info.provider_detail)
                raise WireError(info)
            log(logging.INFO, "HTTP %d; retry in %.2f s", response.status_code, delay)
            await self._sleep(delay)

    def _web_page(self, url: str, body: bytes) -> ErrorInfo:
        return web_page(self._context, url, API_NAMES[self.protocol], body)

    async def _body_of(self, response: httpx.Response) -> bytes:
        """Read a whole body that is not a stream (an error, a web page)."""
        try:
            async with asyncio.timeout(self._timeouts.inactivity):
                return await response.aread()
        except (TimeoutError, httpx.HTTPError):
            return b""

    async def _error_from(self, response: httpx.Response, secrets: list[str]) -> ErrorInfo:
        body = await self._body_of(response)
        info = classify_http_error(response.status_code, response.headers, body, self._context)
        return info.redacted(secrets)

    async def _read(
        self, chunks: AsyncIterator[bytes], deadline: float | None, *, first: bool
    ) -> bytes | None:
        """Return the next piece of the body (None at its end) within the first-byte/idle limit."""
        try:
            if first:
                async with asyncio.timeout_at(deadline):
                    return await anext(chunks)
            async with asyncio.timeout(self._timeouts.inactivity):
                return await anext(chunks)
        except StopAsyncIteration:
            return None

    def _failure(self, exc: Exception, *, first: bool) -> ErrorInfo:
        """Describe a failed body read: a stall (a timeout) or a broken connection."""
        if isinstance(exc, TimeoutError):
            limit = self._timeouts.first_byte if first else self._timeouts.inactivity
            return self._stalled(limit, first=first)
        return classify_exception(exc, self._context)

    def _stalled(self, limit: float | None, *, first: bool) -> ErrorInfo:
        who = self._context.subject
        what = "did not start answering" if first else "stopped sending data for"
        within = "within " if first else ""
        return ErrorInfo(
            category=ErrorCategory.NETWORK,
            message=f"{who} {what} {within}{limit or 0:g} s. Try again, or raise the request "
            "timeout if the model is slow to load.",
            provider_detail="first-byte timeout" if first else "inactivity timeout",
        )


def _redacted(events: list[WireEvent], secrets: list[str]) -> list[WireEvent]:
    if not secrets:
        return events
    return [
        dataclasses.replace(event, error=event.error.redacted(secrets))
        if isinstance(event, StreamError)
        else event
        for event in events
    ]


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what little follows the end marker so the connection can be reused."""
    received = 0
    try:
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for chunk in chunks:
                received += len(chunk)
                if received > _DRAIN_BYTES:
                    return
    except (TimeoutError, httpx.HTTPError):
        pass
