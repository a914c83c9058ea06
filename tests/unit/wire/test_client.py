"""WireClient over httpx.MockTransport: status handling, retries before the first byte only,
timeouts, model listing and logging hygiene. The recorded streams are served chunked."""

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator

import httpx
import pytest

from qodeassist_lsp.wire.client import Timeouts, WireClient, make_http_client
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorContext, WireError
from qodeassist_lsp.wire.events import MessageStop, StreamError, TextDelta
from qodeassist_lsp.wire.protocols import WireProtocol, auth_headers
from qodeassist_lsp.wire.retry import NO_RETRY, RetryPolicy

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
KEY = "sk-ant-api03-test-secret-value-0123456789"


class Chunks(httpx.AsyncByteStream):
    """A response body delivered in pieces, optionally slow or failing part-way."""

    def __init__(
        self, pieces: list[bytes], *, delay: float = 0.0, fail_after: int | None = None
    ) -> None:
        self.pieces = pieces
        self.delay = delay
        self.fail_after = fail_after
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, piece in enumerate(self.pieces):
            if self.fail_after is not None and index == self.fail_after:
                raise httpx.ReadError("connection reset by peer")
            if self.delay:
                await asyncio.sleep(self.delay)
            yield piece

    async def aclose(self) -> None:
        self.closed = True


def random_pieces(data: bytes, seed: int = 3) -> list[bytes]:
    rng, out, i = random.Random(seed), [], 0
    while i < len(data):
        size = rng.randint(1, 300)
        out.append(data[i : i + size])
        i += size
    return out


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def client_for(
    handler, protocol=WireProtocol.ANTHROPIC, **kwargs
) -> tuple[httpx.AsyncClient, WireClient]:
    http = make_http_client(transport=httpx.MockTransport(handler))
    context = ErrorContext(provider="Claude", api_key_env="ANTHROPIC_API_KEY")
    return http, WireClient(http, protocol, context=context, **kwargs)


async def collect(client: WireClient, url: str = ANTHROPIC_URL, **kwargs) -> list:
    headers = auth_headers(client.protocol, KEY)
    body = {"model": "m", "stream": True}
    return [
        event async for batch in client.batches(url, headers, body, **kwargs) for event in batch
    ]


async def test_streams_recorded_bytes_and_posts_compact_json(kit) -> None:
    data = kit.bytes("anthropic/stream_thinking_signature_text.sse")
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Chunks(random_pieces(data))
        )

    http, client = client_for(handler)
    async with http:
        events = await collect(client)
    assert events == kit.run(kit.maker_for("anthropic"), [data])
    [request] = seen
    assert request.content == b'{"model":"m","stream":true}'
    assert request.headers["x-api-key"] == KEY and request.headers["anthropic-version"]
    assert request.headers["user-agent"].startswith("qodeassist-lsp/")


async def test_parser_is_chosen_by_endpoint(kit) -> None:
    native = kit.bytes("llamacpp/completion_stream_excerpt.sse") + (
        b'data: {"content":"","stop":true,"stop_type":"eos"}\n\n'
    )

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Chunks([native]))

    http, client = client_for(handler, WireProtocol.LLAMACPP)
    async with http:
        events = await collect(client, "http://127.0.0.1:8080/infill")
    assert events[-1] == MessageStop("end_turn", "eos") and events[0] == TextDelta(" the")


async def test_http_error_is_classified_and_not_retried(kit) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        body = kit.bytes("anthropic/error_http_401_authentication.json")
        return httpx.Response(401, headers={"content-type": "application/json"}, content=body)

    sleeps = Sleeps()
    http, client = client_for(handler, sleep=sleeps)
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client)
    assert calls == 1 and sleeps.calls == []
    info = caught.value.info
    assert info.category is ErrorCategory.AUTH and info.status == 401
    assert "ANTHROPIC_API_KEY" in info.message and "invalid x-api-key" in info.message


async def test_429_with_retry_after_is_retried_before_the_first_byte(kit) -> None:
    responses = [
        httpx.Response(
            429,
            headers={"retry-after": "2"},
            content=kit.bytes("ollama/error_http_429_rate_limit.json"),
        ),
        httpx.Response(200, stream=Chunks([kit.bytes("anthropic/stream_text_hello.sse")])),
    ]
    sleeps = Sleeps()
    http, client = client_for(lambda request: responses.pop(0), sleep=sleeps)
    async with http:
        events = await collect(client)
    assert sleeps.calls == [2.0]
    assert events[0] == TextDelta("Hello") and events[-1] == MessageStop("end_turn", "end_turn")


async def test_overloaded_retries_with_capped_backoff_then_fails(kit) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        body = kit.bytes("anthropic/error_http_529_overloaded_with_request_id.json")
        return httpx.Response(529, headers={"x-should-retry": "true"}, content=body)

    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=3.0, jitter=0.25)
    http, client = client_for(handler, sleep=sleeps, retry=policy, rng=random.Random(0))
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client)
    assert calls == 4 and len(sleeps.calls) == 3
    for delay, cap in zip(sleeps.calls, (1.0, 2.0, 3.0), strict=True):
        assert 0.75 * cap <= delay <= cap
    assert caught.value.info.category is ErrorCategory.PROVIDER and caught.value.info.status == 529


async def test_retry_after_longer_than_the_cap_fails_fast(kit) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        body = kit.bytes("ollama/error_http_503_overloaded.json")
        return httpx.Response(503, headers={"retry-after": "600"}, content=body)

    http, client = client_for(handler, sleep=Sleeps())
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client)
    assert calls == 1 and caught.value.info.retry_after == 600.0


async def test_connection_errors_are_retried_then_reported(kit) -> None:
    attempts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return httpx.Response(200, stream=Chunks([kit.bytes("anthropic/stream_text_hello.sse")]))

    sleeps = Sleeps()
    http, client = client_for(handler, sleep=sleeps)
    async with http:
        events = await collect(client)
    assert attempts == 3 and len(sleeps.calls) == 2 and events[0] == TextDelta("Hello")

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    http, client = client_for(refuse, retry=NO_RETRY)
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client)
    assert caught.value.info.category is ErrorCategory.NETWORK


async def test_no_retry_once_the_body_has_started(kit) -> None:
    data = kit.bytes("anthropic/stream_text_hello.sse")
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        split = data.index(b"event: content_block_stop")
        pieces = [data[:split], data[split:]]
        return httpx.Response(200, stream=Chunks(pieces, fail_after=1))

    sleeps = Sleeps()
    http, client = client_for(handler, sleep=sleeps)
    async with http:
        events = await collect(client)
    assert calls == 1 and sleeps.calls == []
    assert events[0] == TextDelta("Hello")
    assert isinstance(events[-1], StreamError)
    assert events[-1].error.category is ErrorCategory.NETWORK


async def test_cut_stream_ends_with_a_provider_error(kit) -> None:
    data = kit.bytes("openai_chat/stream_tool_call_single.sse")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Chunks(random_pieces(data[: len(data) // 2])))

    http, client = client_for(handler, WireProtocol.OPENAI_CHAT)
    async with http:
        events = await collect(client, "https://api.openai.com/v1/chat/completions")
    assert isinstance(events[-1], StreamError)
    assert (
        events[-1].error.category is ErrorCategory.PROVIDER
        and "cut off" in events[-1].error.message
    )


async def test_first_byte_and_inactivity_timeouts(kit) -> None:
    data = kit.bytes("anthropic/stream_text_hello.sse")

    def slow_start(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Chunks([data], delay=5.0))

    http, client = client_for(slow_start, timeouts=Timeouts(first_byte=0.05, inactivity=5.0))
    async with http:
        [event] = await collect(client)
    assert event.error.category is ErrorCategory.NETWORK
    assert "did not start answering within 0.05 s" in event.error.message

    class Stalls(Chunks):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            split = data.index(b"event: content_block_stop")
            yield data[:split]
            await asyncio.sleep(5.0)
            yield data[split:]

    http, client = client_for(
        lambda r: httpx.Response(200, stream=Stalls([])), timeouts=Timeouts(inactivity=0.05)
    )
    async with http:
        events = await collect(client)
    assert events[0] == TextDelta("Hello")
    assert "stopped sending data for 0.05 s" in events[-1].error.message


async def test_no_response_headers_in_time_raises_a_network_error() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5.0)
        return httpx.Response(200)

    http, client = client_for(handler, timeouts=Timeouts(first_byte=0.05))
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client)
    assert caught.value.info.category is ErrorCategory.NETWORK
    assert "did not start answering within 0.05 s" in caught.value.info.message


async def test_stale_keepalive_disconnect_is_retried(kit) -> None:
    attempts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        return httpx.Response(200, stream=Chunks([kit.bytes("anthropic/stream_text_hello.sse")]))

    http, client = client_for(handler, sleep=Sleeps())
    async with http:
        events = await collect(client)
    assert attempts == 2 and events[-1] == MessageStop("end_turn", "end_turn")


async def test_list_models_follows_pages(kit) -> None:
    first = json.loads(kit.bytes("anthropic/models_list.json"))
    second = {"data": [{"id": "claude-haiku-4-5"}], "has_more": False, "last_id": "x"}
    urls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        urls.append(str(request.url))
        return httpx.Response(200, json=second if "after_id" in str(request.url) else first)

    http, client = client_for(handler)
    async with http:
        ids = await client.list_models(
            "https://api.anthropic.com/v1/models?limit=1000",
            auth_headers(WireProtocol.ANTHROPIC, KEY),
        )
    assert ids == ["claude-sonnet-4-20250514", "claude-haiku-4-5"]
    assert urls[1] == "https://api.anthropic.com/v1/models?limit=1000&after_id=last_id"


async def test_list_models_ollama_and_invalid_json(kit) -> None:
    bodies = {
        "/api/tags": kit.bytes("ollama/tags_docs.json"),
        "/v1/models": kit.bytes("openai_chat/models_list_openapi_example.json"),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=bodies[request.url.path])

    http, ollama = client_for(handler, WireProtocol.OLLAMA)
    openai = WireClient(http, WireProtocol.OPENAI_CHAT)
    async with http:
        assert await ollama.list_models("http://localhost:11434/api/tags", {}) == [
            "deepseek-r1:latest",
            "llama3.2:latest",
        ]
        with pytest.raises(WireError) as caught:
            await openai.list_models("http://localhost:1234/v1/models", {})
    assert caught.value.info.category is ErrorCategory.PROVIDER
    assert "not valid JSON" in caught.value.info.message


async def test_logs_carry_the_request_id_bodies_only_at_debug_and_no_secrets(kit, caplog) -> None:
    echo = b'{"error":{"message":"bad key ' + KEY.encode() + b'","type":"invalid_request_error"}}'
    responses = [httpx.Response(400, content=echo)]
    http, client = client_for(lambda request: responses.pop(0))
    url = "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?key=AIzaSyTESTKEY"
    caplog.set_level(logging.INFO, logger="qodeassist.wire")
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client, url, request_id="req-42")
    assert KEY not in caught.value.info.message and KEY not in caught.value.info.provider_detail
    records = [r.getMessage() for r in caplog.records if r.name == "qodeassist.wire"]
    assert records and all(m.startswith("[req-42] ") for m in records)
    assert not any("AIzaSyTESTKEY" in m or KEY in m for m in records)
    assert not any("request body" in m for m in records)

    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="qodeassist.wire")
    data = kit.bytes("anthropic/stream_text_hello.sse")
    http, client = client_for(lambda request: httpx.Response(200, stream=Chunks([data])))
    async with http:
        await collect(client, request_id="req-43")
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("qodeassist.wire")]
    assert any(m.startswith("[req-43] request body: ") for m in messages)
    assert any("finished: end_turn" in m for m in messages)
    assert not any(KEY in m for m in messages)


async def test_breaking_out_closes_the_response(kit) -> None:
    body = Chunks(random_pieces(kit.bytes("anthropic/stream_web_search_citations.sse")))
    http, client = client_for(lambda request: httpx.Response(200, stream=body))
    async with http:
        stream = client.batches(ANTHROPIC_URL, {}, {})
        async for _batch in stream:
            break
        await stream.aclose()
    assert body.closed


PORTAL = b"<!DOCTYPE html>\n<html><head><title>Sign in to the hotel Wi-Fi</title></head></html>"


async def test_a_web_page_instead_of_the_api_says_so_and_names_the_url_to_check() -> None:
    served: list[tuple[str, bytes]] = [
        ("text/html; charset=utf-8", PORTAL),  # announced as HTML: no stream starts
        ("text/event-stream", b"  " + PORTAL),  # a proxy that mislabels its page
        ("", PORTAL),
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        content_type, body = served.pop(0)
        headers = {"content-type": content_type} if content_type else {}
        return httpx.Response(200, headers=headers, stream=Chunks([body]))

    http, client = client_for(handler, WireProtocol.OPENAI_CHAT)
    url = "http://10.0.0.1/v1/chat/completions"
    async with http:
        with pytest.raises(WireError) as caught:
            await collect(client, url)
        errors = [caught.value.info]
        for _ in range(2):
            *_, last = await collect(client, url)
            assert isinstance(last, StreamError)
            errors.append(last.error)
    for info in errors:
        assert info.category is ErrorCategory.CONFIG
        assert info.message.startswith(
            f"{url} answered with a web page, not the OpenAI Chat Completions API — "
            "check the `url` of provider 'Claude'"
        )
        assert "cut off" not in info.message and "hotel Wi-Fi" in info.provider_detail


async def test_a_web_page_instead_of_the_model_list_says_so() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=PORTAL)  # no content type: the body tells

    http, client = client_for(handler, WireProtocol.OLLAMA)
    async with http:
        with pytest.raises(WireError) as caught:
            await client.list_models("http://localhost:11434/api/tags?key=abcdefgh123", {})
    info = caught.value.info
    assert info.category is ErrorCategory.CONFIG
    assert info.message.startswith(
        "http://localhost:11434/api/tags answered with a web page, not the Ollama API"
    )
    assert "abcdefgh123" not in info.message
