"""Joining a provider instance URL with an agent endpoint; telling a host of this machine.

The original concatenated the two strings, so ``https://api.openai.com/v1`` plus
``/v1/chat/completions`` became ``…/v1/v1/chat/completions`` and an OpenRouter base without ``/v1``
lost it. Here the overlap between the end of the base path and the start of the endpoint is
folded once, so either spelling works.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name, an address, ``[v6]``) names this machine: its model servers.

    ``localhost`` and its subdomains, the usual ``/etc/hosts`` aliases, ``127.0.0.0/8`` and
    ``::1``. The HTTP API's bind and Host checks accept fewer names on purpose
    (`qodeassist_lsp.http_api.safety.is_loopback`).
    """
    name = host.strip("[]").casefold()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=256)  # an agent joins the same two strings on every request
def join_url(base: str, endpoint: str) -> str:
    """Join ``base`` and ``endpoint`` without doubling or losing a shared path segment like /v1."""
    if not endpoint:
        return base
    if endpoint.startswith(("http://", "https://")):
        return endpoint
    parts = urlsplit(base)
    base_segments = [s for s in parts.path.split("/") if s]
    path, _, query = endpoint.partition("?")
    end_segments = [s for s in path.split("/") if s]
    overlap = 0
    for size in range(min(len(base_segments), len(end_segments)), 0, -1):
        if base_segments[-size:] == end_segments[:size]:
            overlap = size
            break
    segments = base_segments + end_segments[overlap:]
    joined_path = "/" + "/".join(segments)
    if path.endswith("/") and not joined_path.endswith("/"):
        joined_path += "/"
    merged_query = "&".join(q for q in (parts.query, query) if q)
    return urlunsplit((parts.scheme, parts.netloc, joined_path, merged_query, parts.fragment))


def with_query_param(url: str, name: str, value: str) -> str:
    """Return ``url`` with the query parameter ``name`` set to ``value`` (replacing an old one)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != name]
    query.append((name, value))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))
