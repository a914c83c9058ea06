"""Bad input to ``qodeassist-lsp acp``, as raw JSON lines: each gets a clear error, and the
agent keeps serving (the next request on the same pipe is answered)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tests.e2e.acp.conftest import agent_env
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, chat_sse

ROUTE = "/v1/chat/completions"


class Pipe:
    """The agent process with raw JSON-RPC lines on its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[dict[str, Any]] = []

    async def send(self, line: bytes | dict[str, Any]) -> None:
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(data.rstrip(b"\n") + b"\n")
        await self.process.stdin.drain()

    async def answer(self, request_id: int, within: float = 30) -> dict[str, Any]:
        """Return the response to ``request_id`` (notifications before it are kept in seen)."""
        assert self.process.stdout is not None
        async with asyncio.timeout(within):
            while True:
                line = await self.process.stdout.readline()
                assert line, "the agent closed stdout"
                message = json.loads(line)  # stdout carries protocol only
                self.seen.append(message)
                if message.get("id") == request_id and "method" not in message:
                    return message

    async def call(self, request_id: int, method: str, params: Any) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.answer(request_id)


async def start(home: Path) -> Pipe:
    with (home / "agent.log").open("ab") as log:  # the child keeps its own copy of the fd
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "qodeassist_lsp", "acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=log, env=agent_env(home), cwd=str(home / "project"),
        )  # fmt: skip
    return Pipe(process)


async def stop(pipe: Pipe) -> int:
    assert pipe.process.stdin is not None
    pipe.process.stdin.close()
    return await asyncio.wait_for(pipe.process.wait(), 15)


async def test_malformed_lines_unknown_methods_and_sessions_get_errors(acp_home: Path) -> None:
    pipe = await start(acp_home)
    await pipe.send(b"{this is not json")
    await pipe.send(b"[1, 2")
    ready = await pipe.call(1, "initialize", {"protocolVersion": 1})
    assert ready["result"]["protocolVersion"] == 1

    unknown = await pipe.call(2, "session/frobnicate", {})
    assert unknown["error"]["code"] == -32601

    fork = await pipe.call(3, "session/fork", {"sessionId": "x", "cwd": "/"})
    assert fork["error"]["code"] == -32601
    nes = await pipe.call(33, "nes/suggest", {"sessionId": "x"})
    assert nes["error"]["code"] == -32602  # served, but uri, version and position are missing

    missing = await pipe.call(4, "session/prompt", {"sessionId": "nope", "prompt": []})
    assert missing["error"]["code"] == -32602
    assert "no session 'nope'" in missing["error"]["data"]["message"]

    invalid = await pipe.call(5, "session/prompt", {"prompt": "not a list"})
    assert invalid["error"]["code"] == -32602

    relative = await pipe.call(6, "session/new", {"cwd": "relative/path", "mcpServers": []})
    assert relative["error"]["code"] == -32602
    assert "absolute path" in relative["error"]["data"]["message"]

    load = await pipe.call(
        7, "session/load",
        {"cwd": str(acp_home / "project"), "sessionId": "no-such-chat", "mcpServers": []},
    )  # fmt: skip
    assert load["error"]["code"] == -32602 and "no chat" in load["error"]["data"]["message"]

    new = await pipe.call(8, "session/new", {"cwd": str(acp_home / "project"), "mcpServers": []})
    assert new["result"]["sessionId"]
    assert await stop(pipe) == 0


async def test_lines_that_are_not_messages_get_json_rpc_errors_and_the_agent_goes_on(
    acp_home: Path,
) -> None:
    pipe = await start(acp_home)
    lines = [
        (b"{this is not json", None, -32700),
        (b"[]", None, -32600),
        (b"42", None, -32600),
        (b'"str"', None, -32600),
        (b"null", None, -32600),
        (b'[{"jsonrpc": "2.0", "id": 70, "method": "initialize"}]', None, -32600),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "initialize"}', None, -32600),
        (b'{"jsonrpc": "2.0", "id": 71, "method": 7}', 71, -32600),
        (b'{"jsonrpc": "2.0", "id": 72, "method": "initialize", "params": "x"}', 72, -32600),
        (b'{"jsonrpc": "1.0", "id": 73, "method": "initialize"}', 73, -32600),
        (b"{}", None, -32600),
    ]
    for line, _id, _code in lines:
        await pipe.send(line)
    await pipe.send(b'{"jsonrpc": "2.0", "id": 74, "error": "a response we never asked for"}')
    ready = await pipe.call(1, "initialize", {"protocolVersion": 1})
    assert ready["result"]["protocolVersion"] == 1
    errors = [m for m in pipe.seen if "error" in m]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(i, c) for _l, i, c in lines]
    assert all(e["jsonrpc"] == "2.0" and e["error"]["data"]["message"] for e in errors)
    assert "not JSON" in errors[0]["error"]["data"]["message"]
    assert "batches" in errors[1]["error"]["data"]["message"]
    new = await pipe.call(2, "session/new", {"cwd": str(acp_home / "project"), "mcpServers": []})
    assert new["result"]["sessionId"]
    assert await stop(pipe) == 0


async def test_a_second_prompt_while_one_runs_is_refused(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, Reply(body=chat_sse("slow", " answer"), split="events", delay=1.0,
                               content_type="text/event-stream"))  # fmt: skip
    pipe = await start(acp_home)
    await pipe.call(1, "initialize", {"protocolVersion": 1})
    new = await pipe.call(2, "session/new", {"cwd": str(acp_home / "project"), "mcpServers": []})
    session = new["result"]["sessionId"]
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    await replay.wait_for_requests_async(1)
    second = await pipe.call(4, "session/prompt", prompt)
    assert second["error"]["code"] == -32600
    assert "already answering" in second["error"]["data"]["message"]
    load = {"cwd": str(acp_home / "project"), "sessionId": session, "mcpServers": []}
    reloaded = await pipe.call(6, "session/load", load)
    assert reloaded["error"]["code"] == -32600
    assert "cancel it before loading it" in reloaded["error"]["data"]["message"]
    first = await pipe.answer(3)
    assert first["result"]["stopReason"] == "end_turn"
    replay.script(ROUTE, chat_reply("later"))
    third = await pipe.call(7, "session/prompt", prompt)
    assert third["result"]["stopReason"] == "end_turn"
    assert await stop(pipe) == 0


async def test_a_refused_second_prompt_leaves_the_first_to_session_cancel(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, Reply(body=chat_sse("partial")[:60], hold_open=True,
                               content_type="text/event-stream"))  # fmt: skip
    pipe = await start(acp_home)
    await pipe.call(1, "initialize", {"protocolVersion": 1})
    new = await pipe.call(2, "session/new", {"cwd": str(acp_home / "project"), "mcpServers": []})
    session = new["result"]["sessionId"]
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    [upstream] = await replay.wait_for_requests_async(1)
    assert await upstream.wait_holding_async(10)
    second = await pipe.call(4, "session/prompt", prompt)
    assert second["error"]["code"] == -32600
    assert "session/cancel" in second["error"]["data"]["message"]
    assert not upstream.disconnected.is_set()  # the refusal cancelled nothing
    await pipe.send(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
    )
    first = await pipe.answer(3)
    assert first["result"]["stopReason"] == "cancelled"
    assert await upstream.wait_disconnected_async(5)
    replay.script(ROUTE, chat_reply("again"))
    third = await pipe.call(5, "session/prompt", prompt)
    assert third["result"]["stopReason"] == "end_turn"
    assert await stop(pipe) == 0


async def test_a_provider_failure_is_a_clear_error_and_the_session_goes_on(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, [Reply.json({"error": {"message": "model overloaded"}}, status=400),
                          chat_reply("recovered")])  # fmt: skip
    pipe = await start(acp_home)
    await pipe.call(1, "initialize", {"protocolVersion": 1})
    new = await pipe.call(2, "session/new", {"cwd": str(acp_home / "project"), "mcpServers": []})
    prompt = {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "x"}]}
    failed = await pipe.call(3, "session/prompt", prompt)
    assert failed["error"]["code"] == -32603
    assert "model overloaded" in failed["error"]["data"]["message"]
    assert failed["error"]["data"]["category"] == "validation"
    again = await pipe.call(4, "session/prompt", prompt)
    assert again["result"]["stopReason"] == "end_turn"
    assert await stop(pipe) == 0


async def test_an_editor_that_goes_away_mid_turn_ends_the_agent_and_the_upstream_stream(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, Reply(body=chat_sse("partial")[:60], hold_open=True,
                               content_type="text/event-stream"))  # fmt: skip
    pipe = await start(acp_home)
    await pipe.call(1, "initialize", {"protocolVersion": 1})
    new = await pipe.call(2, "session/new", {"cwd": str(acp_home / "project"), "mcpServers": []})
    prompt = {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "x"}]}
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    [upstream] = await replay.wait_for_requests_async(1)
    assert await upstream.wait_holding_async(10)
    assert await stop(pipe) == 0
    assert await upstream.wait_disconnected_async(5)
    # What was said so far is saved.
    [saved] = (acp_home / "data/chat_history").glob("*.json")
    assert '"x"' in saved.read_text()
