"""The wire protocols the server speaks and how each authenticates.

A provider instance names one of thirteen ``client_api`` values (a config concept); each of them
speaks one of the seven wire protocols below. This module is the L0 side of that mapping: it
knows protocols, auth header styles and nothing about configuration files.
"""

from __future__ import annotations

import enum

from qodeassist_lsp.wire.urls import with_query_param


class WireProtocol(enum.StrEnum):
    """A family of HTTP request/stream shapes handled by one wire client module."""

    ANTHROPIC = "anthropic"
    OPENAI_CHAT = "openai_chat"
    OPENAI_RESPONSES = "openai_responses"
    GOOGLE = "google"
    OLLAMA = "ollama"
    MISTRAL = "mistral"
    LLAMACPP = "llamacpp"


API_NAMES: dict[WireProtocol, str] = {
    WireProtocol.ANTHROPIC: "Anthropic Messages",
    WireProtocol.OPENAI_CHAT: "OpenAI Chat Completions",
    WireProtocol.OPENAI_RESPONSES: "OpenAI Responses",
    WireProtocol.GOOGLE: "Gemini",
    WireProtocol.OLLAMA: "Ollama",
    WireProtocol.MISTRAL: "Mistral",
    WireProtocol.LLAMACPP: "llama.cpp",
}
"""The name of each protocol's API, as error messages tell the user what was expected."""


class AuthStyle(enum.StrEnum):
    """Where an API key travels in a request."""

    X_API_KEY = "x-api-key"
    """Anthropic: ``x-api-key: <key>`` plus ``anthropic-version``."""
    BEARER = "bearer"
    """``Authorization: Bearer <key>``, only when a key is set (optional for local servers)."""
    QUERY_KEY = "query-key"
    """Google: ``?key=<key>`` appended to the URL."""


ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_LONG_CACHE_BETA = "extended-cache-ttl-2025-04-11"

AUTH_STYLE: dict[WireProtocol, AuthStyle] = {
    WireProtocol.ANTHROPIC: AuthStyle.X_API_KEY,
    WireProtocol.GOOGLE: AuthStyle.QUERY_KEY,
    WireProtocol.OPENAI_CHAT: AuthStyle.BEARER,
    WireProtocol.OPENAI_RESPONSES: AuthStyle.BEARER,
    WireProtocol.OLLAMA: AuthStyle.BEARER,
    WireProtocol.MISTRAL: AuthStyle.BEARER,
    WireProtocol.LLAMACPP: AuthStyle.BEARER,
}


PROMPT_CACHING: frozenset[WireProtocol] = frozenset({WireProtocol.ANTHROPIC})
"""Protocols whose request bodies take prompt-cache breakpoints (``cache_control``)."""

KEYS_IN_URL: dict[WireProtocol, tuple[str, ...]] = {WireProtocol.GOOGLE: ("model", "stream")}
"""Body keys a protocol carries in its URL instead (Gemini: the model, and ``?alt=sse``)."""


def keyed_url(protocol: WireProtocol, url: str, api_key: str | None) -> str:
    """Return ``url`` with ``api_key`` in its query when ``protocol`` sends the key there."""
    if api_key and AUTH_STYLE[protocol] is AuthStyle.QUERY_KEY:
        return with_query_param(url, "key", api_key)
    return url


def auth_headers(
    protocol: WireProtocol, api_key: str | None, *, long_cache_ttl: bool = False
) -> dict[str, str]:
    """Return the request headers for ``protocol``, carrying ``api_key`` the way its API wants."""
    headers = {"Content-Type": "application/json"}
    style = AUTH_STYLE[protocol]
    if style is AuthStyle.X_API_KEY:
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if long_cache_ttl:
            headers["anthropic-beta"] = ANTHROPIC_LONG_CACHE_BETA
        if api_key:
            headers["x-api-key"] = api_key
    elif style is AuthStyle.BEARER and api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers
