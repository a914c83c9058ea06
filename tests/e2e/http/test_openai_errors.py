"""``serve --http`` answers like OpenAI's API: one error shape for every refusal, the fields it
cannot serve refused by name, a leaving client's upstream request closed, and a busy chat left
alone."""

from __future__ import annotations

import base64
import json
import socket
from typing import Any

import httpx
import openai
import pytest

from tests.e2e.http.conftest import HttpServer, start_http, stop
from tests.e2e.http.test_openai_api import CHAT_AGENT, HELLO, PIXEL, client_of, image_part
from tests.support.replay_server import ReplayServer
from tests.support.workspace import Workspace

HI = [{"role": "user", "content": "Hi"}]


def assert_openai_error(response: httpx.Response, status: int, kind: str, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert isinstance(error, dict), response.text
    assert (error["type"], error["code"]) == (kind, code), error
    assert error["message"], error


def test_a_missing_or_wrong_token_is_an_openai_authentication_error(
    shared_server: HttpServer,
) -> None:
    bare = httpx.get(f"{shared_server.url}/v1/models")
    assert_openai_error(bare, 401, "authentication_error", "invalid_api_key")
    assert bare.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in bare.json()["error"]["message"]
    with pytest.raises(openai.AuthenticationError) as caught:
        client_of(shared_server, token="wrong").models.list()
    assert "token" in caught.value.message


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_bearer_scheme_is_case_insensitive(shared_server: HttpServer, scheme: str) -> None:
    headers = {"Authorization": f"{scheme} {shared_server.token}"}
    assert httpx.get(f"{shared_server.url}/v1/models", headers=headers).status_code == 200


def test_unknown_routes_and_methods_are_openai_errors(shared_server: HttpServer) -> None:
    with shared_server.client() as http:
        assert_openai_error(http.get("/v1/nothing"), 404, "not_found_error", "not_found")
        assert_openai_error(
            http.delete("/v1/models"), 405, "invalid_request_error", "method_not_allowed"
        )
        assert_openai_error(
            http.get("/v1/qodeassist/chats/nope"), 404, "not_found_error", "not_found"
        )


@pytest.mark.parametrize(
    "path", ["/v1/chat/completions", "/v1/qodeassist/edits/e1", "/v1/qodeassist/permissions/q1"]
)
def test_a_deeply_nested_body_is_a_400(shared_server: HttpServer, path: str) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with shared_server.client() as http:
        answer = http.post(path, content=deep, headers={"Content-Type": "application/json"})
        assert_openai_error(answer, 400, "invalid_request_error", "invalid_json")
        assert "nested" in answer.json()["error"]["message"]
        wrapped = b'{"model": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_000 + b"}"
        assert http.post(path, content=wrapped).status_code == 400
        assert http.get("/health").status_code == 200


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
            "tools",
        ),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tool_choice": {"type": "function", "function": {"name": "f"}}}, "tool_choice"),
        ({"functions": [{"name": "f", "parameters": {}}]}, "functions"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            "response_format",
        ),
        ({"n": 2}, "n"),
        ({"stream": "false"}, "stream"),
        ({"stream": "true"}, "stream"),
    ],
)
def test_fields_the_server_cannot_serve_are_refused_by_name(
    shared_server: HttpServer, extra: dict[str, Any], param: str
) -> None:
    calls = len(shared_server.replay.requests)
    with shared_server.client() as http:
        before = http.get("/v1/qodeassist/chats").json()
        answer = http.post(
            "/v1/chat/completions", json={"model": CHAT_AGENT, "messages": HI, **extra}
        )
        code = "invalid_request" if param == "stream" else "unsupported_parameter"
        assert_openai_error(answer, 400, "invalid_request_error", code)
        assert answer.json()["error"]["param"] == param
        assert param in answer.json()["error"]["message"]
        assert http.get("/v1/qodeassist/chats").json() == before  # no chat was started
    assert len(shared_server.replay.requests) == calls  # nor the provider asked


def test_the_openai_client_sees_the_refused_tools_field(shared_server: HttpServer) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client_of(shared_server).chat.completions.create(
            model=CHAT_AGENT,
            messages=HI,  # type: ignore[arg-type]
            tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
        )
    assert caught.value.param == "tools"  # type: ignore[attr-defined]
    assert caught.value.code == "unsupported_parameter"


def test_harmless_values_of_those_fields_are_served(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO])
    reply = client_of(http_server).chat.completions.create(
        model=CHAT_AGENT,
        messages=HI,  # type: ignore[arg-type]
        tools=[],
        tool_choice="none",
        response_format={"type": "text"},
        n=1,
        stream=False,
    )
    assert reply.choices[0].message.content == "Hello"


def test_a_non_streamed_request_whose_client_leaves_closes_its_upstream(
    http_server: HttpServer,
) -> None:
    from tests.e2e.test_cancellation import first_half

    http_server.replay.script("/v1/messages", [first_half(HELLO)])
    body = json.dumps({"model": CHAT_AGENT, "messages": HI}).encode()
    port = int(http_server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {http_server.token}\r\n".encode()
            + b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        upstream = http_server.replay.wait_for_requests(1)[0]
        assert upstream.wait_holding(10)
    assert upstream.wait_disconnected(10), "the provider request stayed open"
    with http_server.client() as http:  # the chat ended, and is stored
        chats = http.get("/v1/qodeassist/chats").json()
        assert len(chats) == 1
        assert http.get(f"/v1/qodeassist/chats/{chats[0]['chatId']}").json()["busy"] is False


def test_an_image_up_to_the_documented_limit_fits_in_the_body(http_server: HttpServer) -> None:
    """The 4 MiB body limit of other routes would refuse any image over ~3 MiB here."""
    http_server.replay.script("/v1/messages", [HELLO])
    png = base64.b64decode(PIXEL)
    big = base64.b64encode(png + b"\0" * (6 * 1024 * 1024)).decode()
    reply = client_of(http_server).chat.completions.create(
        model=CHAT_AGENT,
        messages=[{"role": "user", "content": [image_part(f"data:image/png;base64,{big}")]}],
    )
    assert reply.choices[0].message.content == "Hello"
    sent = http_server.replay.requests[0].json["messages"][-1]["content"]
    assert any(b.get("type") == "image" for b in sent if isinstance(b, dict))
    over = base64.b64encode(b"\0" * (20 * 1024 * 1024 + 1)).decode()
    with pytest.raises(openai.BadRequestError) as caught:
        client_of(http_server).chat.completions.create(
            model=CHAT_AGENT,
            messages=[{"role": "user", "content": [image_part(f"data:image/png;base64,{over}")]}],
        )
    assert "20 MiB" in caught.value.message
    assert len(http_server.replay.requests) == 1


def test_a_message_into_a_busy_chat_is_a_409_and_the_first_goes_on(
    http_server: HttpServer,
) -> None:
    from tests.e2e.test_cancellation import first_half

    http_server.replay.script("/v1/messages", [first_half(HELLO)])
    client = client_of(http_server)
    stream = client.chat.completions.create(model=CHAT_AGENT, messages=HI, stream=True)  # type: ignore[arg-type]
    chat_id = stream.response.headers["x-qodeassist-chat-id"]
    first = http_server.replay.wait_for_requests(1)[0]
    assert first.wait_holding(10)
    with http_server.client() as http:
        busy = http.post(
            "/v1/chat/completions",
            json={"model": CHAT_AGENT, "messages": HI, "qodeassist": {"chatId": chat_id}},
        )
        assert_openai_error(busy, 409, "invalid_request_error", "chat_busy")
        assert "still answering" in busy.json()["error"]["message"]
        assert busy.headers["x-should-retry"] == "false"
    retrying = openai.OpenAI(
        base_url=f"{http_server.url}/v1", api_key=http_server.token, max_retries=2
    )
    with retrying, pytest.raises(openai.ConflictError):  # at once: the client does not retry
        retrying.chat.completions.create(
            model=CHAT_AGENT,
            messages=HI,  # type: ignore[arg-type]
            extra_body={"qodeassist": {"chatId": chat_id}},
        )
    assert not first.disconnected.is_set()  # the first answer was not cancelled
    assert len(http_server.replay.requests) == 1
    stream.close()


def test_rotating_the_token_while_the_environment_sets_it_is_refused(
    workspace: Workspace,
) -> None:
    workspace.extra_env["QODEASSIST_HTTP_TOKEN"] = "from-the-environment"
    refused = workspace.run("serve", "--http-rotate-token")
    assert refused.returncode == 1, refused.describe()
    assert "QODEASSIST_HTTP_TOKEN" in refused.stderr
    assert "cannot rotate" in refused.stderr
    assert not (workspace.data / "http-token").exists()


def test_a_token_file_others_can_read_is_tightened(
    workspace: Workspace, replay: ReplayServer
) -> None:
    token_file = workspace.data / "http-token"
    token_file.write_text("a-token-that-was-shared-by-mistake\n", encoding="utf-8")
    token_file.chmod(0o644)
    server = start_http(workspace, replay)
    try:
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert server.token == "a-token-that-was-shared-by-mistake"
        assert "0600" in server.banner or "tightened" in server.banner
    finally:
        stop(server)


def test_a_failed_turn_is_not_retried_into_orphan_chats(http_server: HttpServer) -> None:
    from tests.support.replay_server import Reply

    http_server.replay.script(
        "/v1/messages", [Reply("anthropic/error_http_401_authentication.json", status=401)]
    )
    client = openai.OpenAI(
        base_url=f"{http_server.url}/v1", api_key=http_server.token, max_retries=2
    )
    with client, pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model=CHAT_AGENT, messages=HI)  # type: ignore[arg-type]
    assert caught.value.status_code >= 500
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert len(http_server.replay.requests) == 1  # the client did not send it again
    with http_server.client() as http:
        assert len(http.get("/v1/qodeassist/chats").json()) <= 1


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (
            "/v1/chat/completions",
            {"model": CHAT_AGENT, "messages": HI, "qodeassist": {"chatId": 5}},
            "qodeassist.chatId",
        ),
        (
            "/v1/chat/completions",
            {"model": CHAT_AGENT, "messages": [{"role": "user", "content": [{"text": 3}]}]},
            "messages[0].content[0]",
        ),
        ("/v1/qodeassist/edits/e1", {"chatId": "c1", "action": "explode"}, "action"),
        ("/v1/qodeassist/permissions/q1", {"answer": 3}, "answer"),
    ],
)
def test_a_body_of_the_wrong_shape_is_a_400_naming_the_field(
    shared_server: HttpServer, path: str, body: dict[str, Any], param: str
) -> None:
    calls = len(shared_server.replay.requests)
    with shared_server.client() as http:
        answer = http.post(path, json={"unknown_extra": True, **body})
        assert_openai_error(answer, 400, "invalid_request_error", "invalid_request")
        assert answer.json()["error"]["param"] == param
        assert answer.json()["error"]["message"].startswith(param)
    assert len(shared_server.replay.requests) == calls


def test_unknown_fields_of_a_completion_are_accepted(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO])
    with http_server.client() as http:
        answer = http.post(
            "/v1/chat/completions",
            json={"model": CHAT_AGENT, "messages": HI, "user": "u1", "seed": 7, "logprobs": False},
        )
        assert answer.status_code == 200, answer.text
