"""GenericProvider with its transport injected: the client code production runs, on a mock.

The e2e suite runs the same `GenericProvider` on httpx's default transport against loopback
providers; here an ``httpx.MockTransport`` stands in, handed over the way httpx takes one.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from qodeassist_lsp.config.providers import LaunchConfig, ProviderInstance
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.core.agent import PreparedRequest
from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.wire.client import Timeouts
from qodeassist_lsp.wire.errors import ErrorCategory, WireError
from qodeassist_lsp.wire.events import MessageStop, TextDelta
from qodeassist_lsp.wire.retry import NO_RETRY

SSE = (
    b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def provider(tmp_path: Path, handler, **fields) -> GenericProvider:
    instance = ProviderInstance(
        name="Local", client_api="OpenAI Compatible", url="http://127.0.0.1:9/v1", **fields
    )
    secrets = SecretStore(tmp_path, environ={"LOCAL_KEY": "sk-local-0123456789abcdef"})
    return GenericProvider(instance, secrets, transport=httpx.MockTransport(handler))


async def test_requests_go_through_the_injected_transport_with_the_client_defaults(
    tmp_path: Path,
) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "GET":
            return httpx.Response(200, json={"data": [{"id": "m1"}, {"id": "m2"}]})
        return httpx.Response(200, content=SSE, headers={"content-type": "text/event-stream"})

    local = provider(tmp_path, handler, api_key_env="LOCAL_KEY")
    request = PreparedRequest(
        "http://127.0.0.1:9/v1/chat/completions",
        {"Authorization": f"Bearer {local.api_key()}"},
        {"model": "m", "stream": True},
    )
    try:
        batches = [
            batch
            async for batch in local.stream(
                request, timeouts=Timeouts(), retry=NO_RETRY, request_id="r1"
            )
        ]
        models = await local.list_models()
    finally:
        await local.aclose()
    events = [event for batch in batches for event in batch]
    assert events == [TextDelta("Hi"), MessageStop("end_turn", "stop")]
    assert models == ["m1", "m2"]
    post, get = seen
    assert json.loads(post.content) == {"model": "m", "stream": True}
    assert post.headers["user-agent"].startswith("qodeassist-lsp/")
    assert str(get.url) == "http://127.0.0.1:9/v1/models"
    assert get.headers["authorization"] == "Bearer sk-local-0123456789abcdef"
    assert local.health.snapshot()["errors"] == 0


async def test_a_launch_failure_is_a_launch_error_not_a_wire_error(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing may be sent when the server did not start")

    launch = LaunchConfig(command=str(tmp_path / "no-such-server"), auto_start=True)
    local = provider(tmp_path, handler, launch=launch)
    local.launcher = ProviderLauncher("Local", launch, run_dir=tmp_path / "run")
    try:
        with pytest.raises(LaunchError) as caught:
            await local.list_models()
    finally:
        await local.aclose()
    assert not isinstance(caught.value, WireError)
    assert caught.value.info.category is ErrorCategory.CONFIG


async def test_an_open_circuit_refuses_without_sending_and_a_success_closes_it(
    tmp_path: Path,
) -> None:
    from qodeassist_lsp.config.settings import ResilienceSettings
    from qodeassist_lsp.core.breaker import CircuitOpenError, CircuitState

    statuses = [503, 503, 200]
    sent: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        status = statuses[len(sent)]
        sent.append(status)
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "down"}})
        return httpx.Response(200, content=SSE, headers={"content-type": "text/event-stream"})

    instance = ProviderInstance(
        name="Local", client_api="OpenAI Compatible", url="http://127.0.0.1:9/v1"
    )
    local = GenericProvider(
        instance,
        SecretStore(tmp_path, environ={}),
        transport=httpx.MockTransport(handler),
        resilience=ResilienceSettings(failure_threshold=2, open_seconds=30),
    )
    now = [100.0]
    local.breaker._clock = lambda: now[0]
    request = PreparedRequest("http://127.0.0.1:9/v1/chat/completions", {}, {"model": "m"})

    async def send() -> list[object]:
        stream = local.stream(request, timeouts=Timeouts(), retry=NO_RETRY, request_id="r")
        return [event async for batch in stream for event in batch]

    try:
        for _ in range(2):
            with pytest.raises(WireError):
                await send()
        assert local.breaker.state is CircuitState.OPEN
        with pytest.raises(CircuitOpenError):
            await send()
        assert sent == [503, 503]  # the refused request never reached the transport
        now[0] += 30
        assert (await send())[0] == TextDelta("Hi")  # the half-open probe
    finally:
        await local.aclose()
    assert local.breaker.state is CircuitState.CLOSED
