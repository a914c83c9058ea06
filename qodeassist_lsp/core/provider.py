"""``GenericProvider``: one class for all thirteen ``client_api`` values.

A provider wraps one provider instance: its own ``httpx.AsyncClient`` (opened on first use), its
API key (through the secrets port), and the wire protocol its ``client_api`` speaks. What
differs between APIs lives in the agent's ``[body]`` and in the wire modules, never here.
The client's transport is injectable, as in httpx: tests pass an ``httpx.MockTransport`` to the
code production runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import AsyncGenerator

import httpx

from qodeassist_lsp.config.client_apis import key_is_optional, models_endpoint
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretsPort
from qodeassist_lsp.config.settings import ResilienceSettings
from qodeassist_lsp.core.agent import PreparedRequest
from qodeassist_lsp.core.breaker import Breaker
from qodeassist_lsp.core.health import ProviderHealth
from qodeassist_lsp.core.keys import KeyRotation
from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.wire.client import Timeouts, WireClient, make_http_client
from qodeassist_lsp.wire.errors import (
    CategorizedError,
    ErrorCategory,
    ErrorContext,
    ErrorInfo,
    WireError,
)
from qodeassist_lsp.wire.events import StreamError, WireEvent
from qodeassist_lsp.wire.protocols import WireProtocol, auth_headers, keyed_url
from qodeassist_lsp.wire.retry import RetryPolicy
from qodeassist_lsp.wire.urls import join_url

_SLOTS_TIMEOUT_S = 3.0


class GenericProvider:
    """Talks to one provider instance over its wire protocol."""

    def __init__(
        self,
        instance: ProviderInstance,
        secrets: SecretsPort,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        launcher: ProviderLauncher | None = None,
        resilience: ResilienceSettings | None = None,
    ) -> None:
        """Talk to ``instance`` through ``transport`` (httpx's default when None)."""
        self.instance = instance
        # Owned by the runtime, which outlives providers: aclose() leaves it alone.
        self.launcher = launcher
        self._secrets = secrets
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self.health = ProviderHealth(instance.name)
        self.breaker = Breaker(instance.name, resilience)
        self.keys = KeyRotation(
            instance.key_slots, lambda ref, env: self._secrets.get(ref, env or None)
        )
        # One WireClient per policy (in practice one per pipeline), not one per request.
        self._clients: dict[tuple[Timeouts, RetryPolicy], WireClient] = {}
        self.error_context = ErrorContext(
            provider=instance.name,
            api_key_env=instance.api_key_env,
            secret_name=instance.name,
        )

    @property
    def _http(self) -> httpx.AsyncClient:
        # Created on first use: agent-process providers (and unused instances) never open one.
        if self._client is None:
            self._client = make_http_client(transport=self._transport)
        return self._client

    def api_key(self) -> str | None:
        """Return the next key (round-robin over several), if the instance has one."""
        return self.keys.next_key()

    def missing_key(self) -> ErrorInfo | None:
        """Return the ``auth`` error of an instance that needs a key none of whose keys is set.

        Checked before anything is sent, so an offline machine hears "missing API key", not a
        network error. A local server never needs one (`key_is_optional`).
        """
        instance = self.instance
        if (
            key_is_optional(instance.api, instance.url)
            or not instance.key_slots
            or self.keys.has_value()
        ):
            return None
        context = self.error_context
        where = f"set {context.api_key_env} or " if context.api_key_env else ""
        # A local-server API on another machine: it may really need no key, say how to say so.
        keyless = (
            '; if that server needs no key, set api_key_ref = "" and api_key_env = "" in its '
            "provider file"
            if instance.api.key_optional
            else ""
        )
        return ErrorInfo(
            ErrorCategory.AUTH,
            f"missing API key for {instance.name}: {where}run `{context.secrets_command}`{keyless}",
        )

    async def ensure_launched(self) -> None:
        """Start or adopt the ``[launch]`` server first when the instance has ``auto_start``."""
        launch = self.instance.launch
        if self.launcher is not None and launch is not None and launch.auto_start:
            await self.launcher.ensure_ready()

    async def stream(
        self,
        request: PreparedRequest,
        *,
        timeouts: Timeouts,
        retry: RetryPolicy,
        request_id: str,
        api_key: str | None = None,
        host: RequestHost | None = None,
    ) -> AsyncGenerator[list[WireEvent], None]:
        """Send ``request`` and yield its typed events, a list per read.

        ``host`` (the chat, permission gate and workspace) is for agent-process providers;
        an HTTP one has no use for it.

        Raises ``WireError`` when no answer starts, ``LaunchError`` when the ``[launch]``
        server cannot be started, ``CircuitOpenError`` (without sending) while the provider's
        circuit is open.

        Each request's time to first event and outcome feed ``health`` and ``breaker``; a
        rejected or rate-limited ``api_key`` (the key ``request`` carries) is taken out of the
        rotation for a while.
        """
        missing = self.missing_key() if api_key is None else None
        if missing is not None:
            raise WireError(missing)
        if not self.breaker.allow():
            raise self.breaker.refusal()
        if len(self.keys) > 1:  # a rate-limited key hands over to the next, not waits
            retry = dataclasses.replace(retry, retry_statuses=retry.retry_statuses - {429})
        client = self._clients.get((timeouts, retry))
        if client is None:
            client = WireClient(
                self._http,
                self.instance.api.protocol,
                timeouts=timeouts,
                retry=retry,
                context=self.error_context,
            )
            self._clients[(timeouts, retry)] = client
        stream = client.batches(request.url, request.headers, request.body, request_id=request_id)
        async with contextlib.aclosing(self._tracked(stream, api_key=api_key)) as batches:
            async for batch in batches:
                yield batch

    async def _tracked(
        self,
        stream: AsyncGenerator[list[WireEvent], None],
        *,
        api_key: str | None = None,
        program: bool = False,
    ) -> AsyncGenerator[list[WireEvent], None]:
        """Pass ``stream`` on, feeding ``health`` and ``breaker`` (and, over HTTP, the keys).

        An agent ``program``'s turn has no ``[launch]`` server or keys; its configuration
        errors do not count against the circuit, nor does an empty turn count as an answer.
        """
        answered = False
        failure: ErrorInfo | None = None
        try:
            if not program:
                await self.ensure_launched()
            # Measured after the launch: a server's start-up is not request latency.
            started = time.monotonic()
            async with contextlib.aclosing(stream) as batches:
                async for batch in batches:
                    if not answered:
                        self.health.record_first_event((time.monotonic() - started) * 1000)
                        # The first byte proves the provider is up: a probe closes the circuit
                        # now, not when a held-open stream is finally closed.
                        self.breaker.record_success()
                        answered = True
                    for event in batch:
                        if isinstance(event, StreamError) and event.final:
                            failure = event.error
                            self.health.record_error(event.error)
                    yield batch
            if not answered and not program:  # an empty stream that ended cleanly answered
                self.breaker.record_success()
            answered = True
        except CategorizedError as exc:
            failure = exc.info
            self.health.record_error(exc.info)
            if not program:
                self.keys.record_failure(api_key, exc.info)
                self._note_failure(exc)
            raise
        finally:
            # Also runs when the consumer stops early or the request is cancelled.
            if failure is not None and not (program and failure.category == ErrorCategory.CONFIG):
                self.breaker.record_failure(failure)
            elif not answered:
                self.breaker.record_abandoned()
        if failure is None:
            self.health.record_ok()

    async def list_models(self, timeouts: Timeouts | None = None) -> list[str]:
        """Return the model ids the instance offers (``WireError``, ``LaunchError`` on failure)."""
        missing = self.missing_key()
        if missing is not None:
            raise WireError(missing)
        await self.ensure_launched()
        api = self.instance.api
        key = self.api_key()
        url = join_url(self.instance.url, models_endpoint(api, self.instance.url))
        url = keyed_url(api.protocol, url, key)
        client = WireClient(self._http, api.protocol, timeouts=timeouts, context=self.error_context)
        try:
            return await client.list_models(url, auth_headers(api.protocol, key))
        except CategorizedError as exc:
            self._note_failure(exc)
            raise

    async def busy(self) -> bool:
        """Whether a llama.cpp server is working on other requests in every slot (``/slots``).

        Such a server is slow to answer, not broken. False for other APIs and whenever
        ``/slots`` does not say (switched off, not llama.cpp after all, unreachable).
        """
        api = self.instance.api
        if api.protocol is not WireProtocol.LLAMACPP:
            return False
        url = join_url(self.instance.url, "/slots")
        headers = auth_headers(api.protocol, self.api_key())
        try:
            response = await self._http.get(url, headers=headers, timeout=_SLOTS_TIMEOUT_S)
            slots = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return False
        return (
            isinstance(slots, list)
            and bool(slots)
            and all(isinstance(slot, dict) and slot.get("is_processing") for slot in slots)
        )

    def _note_failure(self, exc: CategorizedError) -> None:
        # The launcher re-probes its server only after a request could not reach it.
        if self.launcher is not None:
            self.launcher.request_failed(exc.info)

    def reconfigure(self, resilience: ResilienceSettings) -> None:
        """Take a reloaded configuration: its ``[resilience]``, and parked keys serve again."""
        self.breaker.settings = resilience
        self.keys = KeyRotation(
            self.instance.key_slots, lambda ref, env: self._secrets.get(ref, env or None)
        )

    async def aclose(self) -> None:
        """Close the provider's HTTP client, if it was ever opened."""
        if self._client is not None:
            await self._client.aclose()
