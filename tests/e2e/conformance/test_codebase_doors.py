"""``search_codebase`` and ``@codebase`` through the LSP server, ACP agent, HTTP API and CLI.

The conformance home gains two modules (``settings_parser.py`` defines ``parse_settings_file``,
``app.py`` calls it) and an ignored one. Each door is the real process against the replayed
provider: after ``codebase/reindex`` (waiting for the build) through the door's own operation
method, the model's ``search_codebase`` call gives it the snippet of the defining module, and a
message ``@codebase where do we parse the settings file`` reaches the provider with that snippet
attached; the ``.qodeassistignore``d file is in neither. ``qodeassist-lsp chat`` has no operation
method: the command starts the build and ``@codebase`` waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.acp.conftest import Editor, running_agent
from tests.e2e.conformance.doors import (
    AGENT,
    http_server,
    lsp_server,
    make_home,
    sent_to_provider,
    told,
    via_cli,
)
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, tool_call_reply

ROUTE = "/v1/chat/completions"
MARKER = "zebraquux"
PARSER = '''"""Reading the settings file."""


def parse_settings_file(path):
    """Return the settings read from the file at path."""
    with open(path) as stream:
        return stream.read()
'''
APP = """from settings_parser import parse_settings_file


def run():
    return parse_settings_file("app.toml")
"""
QUESTION = "@codebase where do we parse the settings file"


@pytest.fixture
def home(tmp_path: Path, replay: ReplayServer) -> Path:
    root = make_home(tmp_path / "home", replay)
    project = root / "project"
    (project / "settings_parser.py").write_text(PARSER)
    (project / "app.py").write_text(APP)
    (project / ".qodeassistignore").write_text("secret.txt\nprivate_parse.py\n")
    (project / "private_parse.py").write_text(
        f"def parse_settings_file_{MARKER}(path):\n    return '{MARKER} settings file'\n"
    )
    return root


Send = Callable[[str], Awaitable[None]]
Op = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


@contextlib.asynccontextmanager
async def lsp_door(home: Path) -> AsyncIterator[tuple[Op, Send]]:
    async with lsp_server(home) as lsp:

        async def op(path: str, params: dict[str, Any]) -> dict[str, Any]:
            answer = await lsp.request(f"qodeassist/{path}", params)
            assert "error" not in answer, answer
            result: dict[str, Any] = answer["result"]
            return result

        async def send(message: str) -> None:
            answer = await lsp.request("qodeassist/chat/send", {"message": message})
            assert "error" not in answer, answer
            end = await lsp.terminal(answer["result"]["requestId"])
            assert end["kind"] == "finished", end

        yield op, send


@contextlib.asynccontextmanager
async def acp_door(home: Path) -> AsyncIterator[tuple[Op, Send]]:
    async with running_agent(home, Editor()) as conn:
        session = await conn.new_session(cwd=str(home / "project"), mcp_servers=[])

        async def op(path: str, params: dict[str, Any]) -> dict[str, Any]:
            return await conn.ext_method(f"qodeassist/{path}", params)

        async def send(message: str) -> None:
            reply = await conn.prompt(session_id=session.session_id, prompt=[text_block(message)])
            assert reply.stop_reason == "end_turn", reply

        yield op, send


@contextlib.asynccontextmanager
async def http_door(home: Path) -> AsyncIterator[tuple[Op, Send]]:
    async with http_server(home) as http:

        async def op(path: str, params: dict[str, Any]) -> dict[str, Any]:
            answer = await http.post(f"/v1/qodeassist/{path}", json=params)
            assert answer.status_code == 200, answer.text
            result: dict[str, Any] = answer.json()
            return result

        async def send(message: str) -> None:
            body = {"model": AGENT, "messages": [{"role": "user", "content": message}]}
            reply = await http.post(ROUTE, json=body)
            assert reply.status_code == 200, reply.text

        yield op, send


DOORS = {"lsp": lsp_door, "acp": acp_door, "http": http_door}


@pytest.mark.parametrize("door", DOORS)
async def test_search_codebase_gives_the_model_the_snippet(
    door: str, home: Path, replay: ReplayServer
) -> None:
    replay.script(
        ROUTE,
        [
            tool_call_reply("search_codebase", {"query": "parse settings file"}),
            chat_reply("It is in settings_parser.py."),
        ],
    )
    async with asyncio.timeout(90), DOORS[door](home) as (op, send):
        status = await op("codebase/reindex", {"wait": True})
        assert status["state"] == "ready", status
        await send("Where do we parse the settings file?")
    result = told(replay)
    assert "settings_parser.py:4-" in result, result
    assert "def parse_settings_file(path):" in result, result
    assert MARKER not in sent_to_provider(replay)
    offered = [t["function"]["name"] for t in replay.requests[0].json.get("tools", [])]
    assert {"search_codebase", "find_definition"} <= set(offered), offered


@pytest.mark.parametrize("door", DOORS)
async def test_codebase_mention_attaches_the_snippet(
    door: str, home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, [chat_reply("In settings_parser.py.")])
    async with asyncio.timeout(90), DOORS[door](home) as (op, send):
        await op("codebase/reindex", {"wait": True})
        await send(QUESTION)
    _snippet_attached(replay)


async def test_codebase_mention_attaches_the_snippet_through_the_cli(
    home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, [chat_reply("In settings_parser.py.")])
    outcome = await via_cli(home, QUESTION)
    assert outcome.refused is None, outcome.refused
    _snippet_attached(replay)


def _snippet_attached(replay: ReplayServer) -> None:
    users = [m for m in replay.requests[0].json["messages"] if m["role"] == "user"]
    sent = json.dumps(users[-1]["content"], ensure_ascii=False)
    assert "where do we parse the settings file" in sent, sent
    assert "@codebase" not in sent.split("Snippets of the codebase")[0], sent
    assert "settings_parser.py:4-" in sent, sent
    assert "def parse_settings_file(path):" in sent, sent
    assert MARKER not in sent_to_provider(replay)
