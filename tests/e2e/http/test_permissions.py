"""An ``ask`` tool over HTTP: denied unless the request allows it."""

from __future__ import annotations

import json

import openai

from tests.e2e.http.conftest import HttpServer
from tests.e2e.http.test_openai_api import CHAT_AGENT, HELLO, client_of

TOOL_CALLS = "anthropic/stream_tool_use_kit_calls_SYNTHETIC.sse"


def run_tools(server: HttpServer, **extra: object) -> str:
    server.replay.script("/v1/messages", [TOOL_CALLS, HELLO])
    answer = client_of(server).chat.completions.create(
        model=CHAT_AGENT, messages=[{"role": "user", "content": "run it"}], **extra
    )
    assert isinstance(answer, openai.types.chat.ChatCompletion)
    assert answer.choices[0].message.content == "Hello"
    return json.dumps(server.replay.requests[1].json["messages"][-1])


def test_an_ask_tool_is_denied_over_http_by_default(http_server: HttpServer) -> None:
    results = run_tools(http_server)
    assert "inside the project" in results  # read is allowed
    assert "tool-ran" not in results
    assert "did not allow them" in results


def test_an_ask_tool_runs_when_the_request_allows_it(http_server: HttpServer) -> None:
    results = run_tools(http_server, extra_body={"qodeassist": {"permissions": "allow"}})
    assert "tool-ran" in results
