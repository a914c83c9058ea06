"""The JSON-RPC protocol of the server: custom methods get their params as plain dicts.

pygls turns params of unknown methods into namedtuples; our custom methods are validated with
pydantic instead, so they are declared here to arrive as ``dict``.
"""

from __future__ import annotations

from typing import Any

import attrs
from pygls.protocol import LanguageServerProtocol

from qodeassist_lsp.lsp.methods import CUSTOM_NOTIFICATIONS, CUSTOM_REQUESTS


@attrs.define
class RawNotification:
    """A custom notification with untyped params."""

    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


@attrs.define
class RawRequest:
    """A custom request with untyped params."""

    id: int | str
    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


class QodeProtocol(LanguageServerProtocol):
    """Language server protocol with raw-dict params for the ``qodeassist/*`` methods."""

    # The base method is wrapped in lru_cache, which mypy sees as a different signature.
    def get_message_type(self, method: str) -> type | None:  # type: ignore[override]
        """Return the message class used to decode ``method``."""
        if method in CUSTOM_REQUESTS:
            return RawRequest
        if method in CUSTOM_NOTIFICATIONS:
            return RawNotification
        result: type | None = super().get_message_type(method)
        return result

    def notify(self, method: str, params: Any | None = None) -> None:
        """Send a notification; custom methods always go out as raw notifications.

        ``qodeassist/status`` is both a request and a notification, so the message class
        cannot be chosen by method name alone.
        """
        if method in CUSTOM_REQUESTS or method in CUSTOM_NOTIFICATIONS:
            self._send_data(RawNotification(method=method, jsonrpc=self.VERSION, params=params))
            return
        super().notify(method, params)
