"""`Guard`: what every HTTP request passes before a route — Host, Origin, size, bearer token.

- **Host** must name this server (loopback names, the bound address, or a name allowed with
  ``--http-allow-host``): a page on another site that re-points its DNS name at 127.0.0.1 (DNS
  rebinding) sends its own name and is refused.
- **Origin**, when a browser sends one, must be this server's own (``http://<Host>``): no
  other site's page may call the API (CORS is off: no ``Access-Control-*`` headers are sent).
- **Size**: a body over the limit is refused with 413 before it is read to the end.
- **Bearer token** on every route but the static web page (``GET /``), which holds no data: it
  reads the token from the address's fragment and sends it as this header (`mcp.server.BearerAuth`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Collection
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qodeassist_lsp.http_api.errors import BodyTooLarge, error_response
from qodeassist_lsp.mcp.server import BearerAuth

LOOPBACK_NAMES: Final = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES: Final = 4 * 1024 * 1024
PUBLIC_PATHS: Final = frozenset({"/"})


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
    ) -> None:
        """Guard ``app``; ``hosts`` are the names Host may carry (None: any)."""
        self._app = app
        self._authorised = BearerAuth(app, token, hint="see `qodeassist-lsp serve --http`")
        self._hosts = None if hosts is None else {h.lower() for h in hosts}
        self._max_body = max_body

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
        length = headers.get(b"content-length", "0")
        if not length.isdigit() or int(length) > self._max_body:
            await self._refuse(
                scope, receive, send, 413, f"the body is over {self._max_body} bytes"
            )
            return
        public = scope["path"] in PUBLIC_PATHS and scope["method"] in ("GET", "HEAD")
        app = self._app if public else self._authorised
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await app(scope, self._limited(receive), sending)
        except BodyTooLarge:
            if not started:
                await self._refuse(scope, receive, send, 413, "the body is too large")

    def _limited(self, receive: Receive) -> Receive:
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self._max_body:
                    raise BodyTooLarge
            return message

        return limited

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, why: str) -> None:
        code = "forbidden" if status == 403 else "too_large"
        await error_response(status, why, code)(scope, receive, send)
