"""The OpenAI-compatible routes driven by the real ``openai`` client, streaming and not."""

from __future__ import annotations

import json

import openai
import pytest

from tests.e2e.http.conftest import HttpServer, start_http, stop
from tests.support.replay_server import ReplayServer
from tests.support.workspace import Workspace

CHAT_AGENT = "Claude Chat — Sonnet"
HELLO = "anthropic/stream_text_hello.sse"


def client_of(server: HttpServer, token: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=token or server.token, max_retries=0)


def test_the_banner_prints_the_page_address_with_the_token(http_server: HttpServer) -> None:
    assert f"{http_server.url}/#token={http_server.token}" in http_server.banner
    token_file = http_server.workspace.data / "http-token"
    assert token_file.read_text().strip() == http_server.token
    assert token_file.stat().st_mode & 0o777 == 0o600


def test_models_are_the_chat_agents(http_server: HttpServer) -> None:
    models = client_of(http_server).models.list()
    assert [m.id for m in models.data] == [CHAT_AGENT]


def test_the_openai_client_streams_a_chat_that_is_stored(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO])
    client = client_of(http_server)
    raw = client.chat.completions.with_raw_response.create(
        model=CHAT_AGENT,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chat_id = raw.headers["x-qodeassist-chat-id"]
    chunks = list(raw.parse())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello"
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["stop"]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    sent = http_server.replay.requests[0].json
    assert "Be brief." in json.dumps(sent["system"])
    # The same histories as the LSP chat: the chat is listed and holds both turns.
    with http_server.client() as http:
        listed = http.get("/v1/qodeassist/chats").json()
        assert chat_id in [c["chatId"] for c in listed]
        stored = http.get(f"/v1/qodeassist/chats/{chat_id}").json()
        assert [m["role"] for m in stored["messages"]] == ["user", "assistant"]


def test_a_non_streaming_answer_and_a_continued_chat(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO, HELLO])
    client = client_of(http_server)
    first = client.chat.completions.create(
        model=CHAT_AGENT, messages=[{"role": "user", "content": "Hi"}]
    )
    assert first.choices[0].message.content == "Hello"
    chat_id = first.model_extra["qodeassist"]["chatId"]  # type: ignore[index]
    second = client.chat.completions.create(
        model=CHAT_AGENT,
        messages=[{"role": "user", "content": "again"}],
        extra_body={"qodeassist": {"chatId": chat_id}},
    )
    assert second.choices[0].message.content == "Hello"
    turns = http_server.replay.requests[1].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]


def test_a_stateless_conversation_seeds_a_new_chat(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO])
    client_of(http_server).chat.completions.create(
        model=CHAT_AGENT,
        messages=[
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "two"},
            {"role": "user", "content": "three"},
        ],
    )
    turns = http_server.replay.requests[0].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
"""A 1×1 PNG."""


def image_part(url: str) -> dict[str, object]:
    return {"type": "image_url", "image_url": {"url": url}}


def test_images_in_the_messages_reach_the_model(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO])
    client_of(http_server).chat.completions.create(
        model=CHAT_AGENT,
        messages=[
            {"role": "user", "content": [image_part(f"data:image/png;base64,{PIXEL}")]},
            {"role": "assistant", "content": "A pixel."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "And this one?"},
                    image_part(f"data:image/jpeg;base64,{PIXEL}"),
                ],
            },
        ],
    )
    turns = http_server.replay.requests[0].json["messages"]
    images = [
        (t["role"], block["source"])
        for t in turns
        for block in t["content"]
        if isinstance(block, dict) and block.get("type") == "image"
    ]
    assert images == [
        ("user", {"type": "base64", "media_type": "image/png", "data": PIXEL}),
        ("user", {"type": "base64", "media_type": "image/jpeg", "data": PIXEL}),
    ]
    assert "And this one?" in json.dumps(turns[-1])


def test_an_image_by_address_is_a_400_saying_to_send_it_inline(http_server: HttpServer) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client_of(http_server).chat.completions.create(
            model=CHAT_AGENT,
            messages=[{"role": "user", "content": [image_part("https://example.com/a.png")]}],
        )
    assert "data:image/" in str(caught.value)
    assert http_server.replay.requests == []


def test_an_unknown_model_is_a_404_naming_the_agents(http_server: HttpServer) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client_of(http_server).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hi"}]
        )
    assert CHAT_AGENT in str(caught.value)


def test_a_provider_failure_is_an_error_in_the_stream(http_server: HttpServer) -> None:
    from tests.support.replay_server import Reply

    http_server.replay.script(
        "/v1/messages", [Reply("anthropic/error_http_401_authentication.json", status=401)]
    )
    with pytest.raises(openai.APIError) as caught:
        list(
            client_of(http_server).chat.completions.create(
                model=CHAT_AGENT, messages=[{"role": "user", "content": "Hi"}], stream=True
            )
        )
    assert "auth" in str(caught.value).lower()


def test_a_client_that_goes_away_cancels_the_upstream_stream(http_server: HttpServer) -> None:
    from tests.e2e.test_cancellation import first_half

    http_server.replay.script("/v1/messages", [first_half(HELLO)])
    stream = client_of(http_server).chat.completions.create(
        model=CHAT_AGENT, messages=[{"role": "user", "content": "Hi"}], stream=True
    )
    chat_id = stream.response.headers["x-qodeassist-chat-id"]
    assert "Hello" in "".join(c.choices[0].delta.content or "" for c in _until_text(stream))
    upstream = http_server.replay.requests[0]
    assert upstream.wait_holding(5)
    stream.close()
    assert upstream.wait_disconnected(5), "the provider stream stayed open"
    with http_server.client() as http:  # the chat ended cancelled, and is stored
        assert http.get(f"/v1/qodeassist/chats/{chat_id}").json()["busy"] is False


def _until_text(stream: object) -> list[object]:
    seen = []
    for chunk in stream:  # type: ignore[attr-defined]
        seen.append(chunk)
        if chunk.choices and chunk.choices[0].delta.content:
            return seen
    return seen


def test_alone_the_chat_offers_the_skills(workspace: Workspace, replay: ReplayServer) -> None:
    skill = workspace.config / "skills" / "code-review" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: code-review\ndescription: Review a change for bugs.\n---\n# Review\n",
        encoding="utf-8",
    )
    replay.script("/v1/messages", [HELLO])
    server = start_http(workspace, replay)
    try:
        client_of(server).chat.completions.create(
            model=CHAT_AGENT, messages=[{"role": "user", "content": "Hi"}]
        )
    finally:
        stop(server)
    sent = replay.requests[0].json
    assert "load_skill" in [tool["name"] for tool in sent["tools"]]
    assert "code-review" in json.dumps(sent["system"])
