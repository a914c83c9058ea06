"""The shared ``httpx.AsyncClient`` and the timeouts that govern a streamed request.

One client per server process, so connections to a provider are reused across completions.
Plain ``http://`` URLs (local providers, where the client's own cost is the latency) go
through `PlainHTTPTransport`; everything else through httpx's default transport. When the
environment configures an HTTP proxy, plain HTTP stays on httpx so the proxy is honoured.
LLM streams need three timeouts httpx does not express directly: how long to wait for the
first byte of the answer (a local model may be loading), how long a silent gap between
chunks may last, and how long to connect. `WireClient` enforces the first two with asyncio
and hands httpx the rest.

`make_http_client` returns an `HttpClient`: httpx's client that also names the
`PlainHTTPTransport` it mounted, so `WireClient` can hand plain-HTTP requests to that
transport directly instead of through the client's send pipeline (auth, redirects, cookies,
event hooks: none of which a provider request uses, and about a fifth of a millisecond of CPU
per completion on the local path, measured).
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from typing import Any

import httpx

from qodeassist_lsp import __version__
from qodeassist_lsp.wire.plain_transport import PlainHTTPTransport

USER_AGENT = f"qodeassist-lsp/{__version__}"
LIMITS = httpx.Limits(max_connections=20, max_keepalive_connections=10, keepalive_expiry=30.0)


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


class HttpClient(httpx.AsyncClient):
    """httpx's client, plus the transport that serves ``http://`` URLs directly (if any)."""

    def __init__(self, *, plain: PlainHTTPTransport | None = None, **kwargs: Any) -> None:
        """Create the client; ``plain`` must be the transport mounted for ``http://``."""
        super().__init__(**kwargs)
        self.plain = plain
        """Serves plain HTTP without the client's pipeline; None when a proxy is configured
        or another transport was given."""


def make_http_client(
    *,
    timeouts: Timeouts | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    http2: bool = False,
) -> HttpClient:
    """Create the process-wide client with sensible timeouts, pool limits and user agent."""
    mounts: dict[str, httpx.AsyncBaseTransport] | None = None
    plain: PlainHTTPTransport | None = None
    if transport is None and not _http_proxy_configured():
        expiry = LIMITS.keepalive_expiry
        plain = PlainHTTPTransport(keepalive_expiry=float("inf") if expiry is None else expiry)
        mounts = {"http://": plain}
    return HttpClient(
        plain=plain,
        timeout=(timeouts or Timeouts()).for_httpx(),
        limits=LIMITS,
        http2=http2,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        transport=transport,
        mounts=mounts,
    )


def _http_proxy_configured() -> bool:
    """Whether the environment routes plain HTTP through a proxy (httpx reads the same)."""
    proxies = urllib.request.getproxies()
    return "http" in proxies or "all" in proxies
