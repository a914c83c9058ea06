"""``model: "pool"`` with ``qodeassist.requires`` over the HTTP API: served by requirements, queued."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.e2e.http.conftest import HttpServer, start_http, stop
from tests.support.replay_server import ReplayServer, Reply
from tests.support.workspace import Workspace

CLAUDE = "Claude Chat — Sonnet"
HELLO = "anthropic/stream_text_hello.sse"


def ask(server: HttpServer, requires: dict[str, Any], **extension: Any) -> Any:
    with server.client() as http:
        return http.post(
            "/v1/chat/completions",
            json={
                "model": "pool",
                "messages": [{"role": "user", "content": "Hi"}],
                "qodeassist": {"requires": requires, **extension},
            },
        )


def test_the_agent_meeting_the_requirements_answers_and_is_named(http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO])
    answer = ask(http_server, {"tools": True, "thinking": True}, events=True)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["model"] == CLAUDE
    assert body["choices"][0]["message"]["content"] == "Hello"
    chosen = body["qodeassist"]["events"][0]
    assert chosen["kind"] == "agentChosen"
    assert chosen["reason"] == f"pool: {CLAUDE} meets tools, thinking"


def test_a_second_request_waits_for_the_busy_local_provider(
    workspace: Workspace, replay: ReplayServer
) -> None:
    # A model on this machine gets one pool request at a time. The e2e Claude is on loopback,
    # which alone no longer makes it local (it could be a proxy to the paid API): it says so.
    claude = workspace.config / "providers/claude.toml"
    claude.write_text(claude.read_text() + "local = true\n")
    http_server = start_http(workspace, replay)
    try:
        queued_behind_the_busy_agent(http_server)
    finally:
        stop(http_server)


def queued_behind_the_busy_agent(http_server: HttpServer) -> None:
    """Two pool requests: the second waits until the first has its answer."""
    http_server.replay.script("/v1/messages", [Reply(HELLO, first_byte_delay=1.5), Reply(HELLO)])
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(ask, http_server, {"tools": True})
        time.sleep(0.5)
        second = pool.submit(ask, http_server, {})
        time.sleep(0.6)
        assert not second.done(), "the second request must queue behind the busy agent"
        assert len(http_server.replay.requests) == 1
        answers = [first.result(30), second.result(30)]
    assert [a.status_code for a in answers] == [200, 200]
    assert [a.json()["model"] for a in answers] == [CLAUDE, CLAUDE]
    assert len(http_server.replay.requests) == 2


def test_requirements_no_agent_meets_are_a_404_saying_what_each_lacks(
    http_server: HttpServer,
) -> None:
    answer = ask(http_server, {"tags": ["rust"]})
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["code"] == "no_agent_meets"
    assert f"{CLAUDE} lacks tag 'rust'" in error["message"]
    assert http_server.replay.requests == []


def test_model_auto_is_served_when_a_router_is_configured(
    workspace: Workspace, replay: ReplayServer
) -> None:
    workspace.write(
        "pipelines.toml",
        '[pipelines]\nchat_assistant = ["Claude Chat — Sonnet"]\n'
        'chat_router = "Claude Chat — Sonnet"\n',
    )
    server = start_http(workspace, replay)
    try:
        with server.client() as http:
            models = [m["id"] for m in http.get("/v1/models").json()["data"]]
            assert models == [CLAUDE, "auto"]
            # The router's "Hello" names no agent: the first chat agent answers.
            replay.script("/v1/messages", [HELLO, HELLO])
            answer = http.post(
                "/v1/chat/completions",
                json={
                    "model": "auto",
                    "messages": [{"role": "user", "content": "Hi"}],
                    "qodeassist": {"events": True},
                },
            )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["model"] == CLAUDE
        chosen = body["qodeassist"]["events"][0]
        assert chosen["kind"] == "agentChosen" and chosen["fallback"] is True
    finally:
        stop(server)
