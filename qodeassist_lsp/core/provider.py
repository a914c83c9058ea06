"""``GenericProvider``: one class for all thirteen ``client_api`` values.

A provider wraps one provider instance: its shared ``httpx.AsyncClient``, its API key (through
the secrets port), and the wire protocol its ``client_api`` speaks. What differs between APIs
lives in the agent's ``[body]`` and in the wire modules, never here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx

from qodeassist_lsp.config.client_apis import models_endpoint
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretsPort
from qodeassist_lsp.core.agent import PreparedRequest
from qodeassist_lsp.wire.client import WireClient
from qodeassist_lsp.wire.errors import ErrorContext
from qodeassist_lsp.wire.events import WireEvent
from qodeassist_lsp.wire.httpclient import Timeouts, make_http_client
from qodeassist_lsp.wire.protocols import AUTH_STYLE, AuthStyle, auth_headers
from qodeassist_lsp.wire.retry import RetryPolicy
from qodeassist_lsp.wire.urls import join_url, with_query_param


class GenericProvider:
    """Talks to one provider instance over its wire protocol."""

    def __init__(
        self,
        instance: ProviderInstance,
        secrets: SecretsPort,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.instance = instance
        self._secrets = secrets
        self._http = http or make_http_client()
        self._owns_http = http is None
        self.error_context = ErrorContext(
            provider=instance.name,
            api_key_env=instance.api_key_env,
            secret_name=instance.name,
        )

    def api_key(self) -> str | None:
        """Return the key from the environment, ``.env`` or the keyring, if there is one."""
        if not (self.instance.api_key_ref or self.instance.api_key_env):
            return None
        return self._secrets.get(self.instance.api_key_ref, self.instance.api_key_env or None)

    def stream(
        self,
        request: PreparedRequest,
        *,
        timeouts: Timeouts,
        retry: RetryPolicy,
        request_id: str,
    ) -> AsyncGenerator[WireEvent, None]:
        """Send ``request`` and return its typed event stream (raises ``WireError`` early)."""
        client = WireClient(
            self._http,
            self.instance.api.protocol,
            timeouts=timeouts,
            retry=retry,
            context=self.error_context,
        )
        return client.stream(request.url, request.headers, request.body, request_id=request_id)

    async def list_models(self, timeouts: Timeouts | None = None) -> list[str]:
        """Return the model ids the instance offers (raises ``WireError`` on failure)."""
        api = self.instance.api
        key = self.api_key()
        url = join_url(self.instance.url, models_endpoint(api, self.instance.url))
        if key and AUTH_STYLE[api.protocol] is AuthStyle.QUERY_KEY:
            url = with_query_param(url, "key", key)
        client = WireClient(self._http, api.protocol, timeouts=timeouts, context=self.error_context)
        return await client.list_models(url, auth_headers(api.protocol, key))

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._owns_http:
            await self._http.aclose()
