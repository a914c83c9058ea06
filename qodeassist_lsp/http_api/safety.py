"""`Guard`: what every HTTP request passes before a route — Host, Origin, size, bearer token.

- **Host** must name this server (loopback names, the bound address, or a name allowed with
  ``--http-allow-host``): a page on another site that re-points its DNS name at 127.0.0.1 (DNS
  rebinding) sends its own name and is refused.
- **Origin**, when a browser sends one, must be this server's own (``http://<Host>``): no
  other site's page may call the API (CORS is off: no ``Access-Control-*`` headers are sent).
- **Size**: a body over the limit is refused with 413 before it is read to the end: 4 MiB, and
  32 MiB for ``POST /v1/chat/completions``, whose messages may carry an image up to the chat's
  20 MiB limit (base64 makes it about 27 MiB).
- **Bearer token** on every route but the static web page (``GET /``), which holds no data: it
  reads the token from the address's fragment and sends it as this header. The scheme is
  case-insensitive (RFC 6750); a missing or wrong token is a 401 in the API's error shape.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Callable, Collection
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qodeassist_lsp.http_api.errors import BodyTooLarge, error_response

LOOPBACK_NAMES: Final = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES: Final = 4 * 1024 * 1024
COMPLETION_PATH: Final = "/v1/chat/completions"
MAX_COMPLETION_BODY_BYTES: Final = 32 * 1024 * 1024
"""Room for one image at the chat's limit in base64 (4/3 of it), beside the usual body."""
PUBLIC_PATHS: Final = frozenset({"/"})
AUTH_HINT: Final = (
    "send the token as `Authorization: Bearer <token>`; `qodeassist-lsp serve --http` prints "
    "it (it is in <data root>/http-token, or $QODEASSIST_HTTP_TOKEN)"
)


def bearer_token(header: bytes) -> bytes | None:
    """Return the credentials of an ``Authorization: Bearer …`` value (any case of the scheme)."""
    scheme, _, credentials = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return credentials.strip()


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only.

    Stricter than `qodeassist_lsp.wire.urls.is_loopback_host`: only ``localhost`` by name, since
    the bind address and the Host header guard who may reach the API.
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """Return the name of a ``Host`` header value, without its port (``[::1]:80`` → ``::1``)."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """ASGI middleware that checks Host, Origin, body size and the bearer token."""

    def __init__(
        self,
        app: ASGIApp,
        token: Callable[[], str],
        *,
        hosts: Collection[str] | None,
        max_body: int = MAX_BODY_BYTES,
        max_completion_body: int = MAX_COMPLETION_BODY_BYTES,
    ) -> None:
        """Guard ``app``; ``hosts`` are the names Host may carry (None: any)."""
        self._app = app
        self._token = token
        self._hosts = None if hosts is None else {h.lower() for h in hosts}
        self._max_body = max_body
        self._max_completion_body = max(max_body, max_completion_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse what fails a check; pass the rest on."""
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        host = headers.get(b"host", "")
        if self._hosts is not None and host_name(host).lower() not in self._hosts:
            await self._refuse(scope, receive, send, 403, f"Host {host!r} is not this server")
            return
        origin = headers.get(b"origin")
        if origin is not None and origin.lower() != f"http://{host}".lower():
            await self._refuse(
                scope, receive, send, 403, f"cross-origin requests are refused (Origin {origin})"
            )
            return
        limit = self._max_completion_body if scope["path"] == COMPLETION_PATH else self._max_body
        length = headers.get(b"content-length", "0")
        if not length.isdigit() or int(length) > limit:
            await self._refuse(scope, receive, send, 413, _too_large(limit))
            return
        public = scope["path"] in PUBLIC_PATHS and scope["method"] in ("GET", "HEAD")
        if not public and not self._authorised(headers.get(b"authorization", "")):
            await self._refuse(
                scope, receive, send, 401, f"a valid bearer token is required: {AUTH_HINT}"
            )
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, self._limited(receive, limit), sending)
        except BodyTooLarge:
            if not started:
                await self._refuse(scope, receive, send, 413, _too_large(limit))

    def _authorised(self, header: str) -> bool:
        given = bearer_token(header.encode("latin-1"))
        expected = self._token().encode("utf-8")
        return given is not None and secrets.compare_digest(given, expected)

    @staticmethod
    def _limited(receive: Receive, limit: int) -> Receive:
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        return limited

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, why: str) -> None:
        code = {401: "invalid_api_key", 403: "forbidden"}.get(status, "too_large")
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        await error_response(status, why, code, headers=headers)(scope, receive, send)


def _too_large(limit: int) -> str:
    return f"the body is over {limit // (1024 * 1024)} MiB ({limit} bytes): send less"
