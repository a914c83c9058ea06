"""``serve --stdio --http``: an editor (raw LSP over stdio) and an HTTP client share one runtime
and the same chat histories in one process."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
import openai

from tests.e2e.http.conftest import free_port
from tests.e2e.http.test_openai_api import CHAT_AGENT, HELLO
from tests.support.replay_server import ReplayServer
from tests.support.workspace import Workspace

TOKEN = "beside-token"


class Lsp:
    """A minimal JSON-RPC client over the server's stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        await self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = await self.read()
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message.get("result")


async def test_an_editor_and_a_script_share_one_runtime(
    workspace: Workspace, replay: ReplayServer
) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qodeassist_lsp",
        "serve",
        "--stdio",
        "--http",
        f"127.0.0.1:{port}",
        env={**workspace.env, "QODEASSIST_HTTP_TOKEN": TOKEN},
        cwd=workspace.project,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    lsp = Lsp(process)
    url = f"http://127.0.0.1:{port}"
    try:
        async with asyncio.timeout(90):
            await lsp.request(
                "initialize",
                {"processId": None, "rootUri": workspace.project.as_uri(), "capabilities": {}},
            )
            await lsp.send({"method": "initialized", "params": {}})
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as http:
                while True:
                    try:
                        if (await http.get("/health")).json().get("state") == "ready":
                            break
                    except httpx.TransportError:
                        pass
                    await asyncio.sleep(0.2)
            replay.script("/v1/messages", [HELLO])
            async with openai.AsyncOpenAI(
                base_url=f"{url}/v1", api_key=TOKEN, max_retries=0
            ) as client:
                answer = await client.chat.completions.create(
                    model=CHAT_AGENT, messages=[{"role": "user", "content": "Hi"}]
                )
            assert answer.choices[0].message.content == "Hello"
            chat_id = answer.model_extra["qodeassist"]["chatId"]  # type: ignore[index]
            # The editor sees the chat the script had: one history folder, one runtime.
            listed = await lsp.request("qodeassist/chat/list", {})
            assert chat_id in [chat["chatId"] for chat in listed]
            await lsp.request("shutdown", None)
            await lsp.send({"method": "exit"})
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
