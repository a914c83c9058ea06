"""The four doors of one scenario: the LSP server, the ACP agent, the HTTP API and the CLI.

Each door runs as the real process, in a home whose chat agent talks to a loopback
`ReplayServer`, and turns "send this message" into an `Outcome` the conformance tests compare:
whether the send was refused (and why), what the model was told about its tool call, and what
the provider received. The home is the same for every door: a project with ``secret.txt``
listed in ``.qodeassistignore``, ``build/`` in ``.gitignore``, write tools allowed without
asking (nobody answers questions here), execute tools denied, edits not applied without the
user.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from acp import RequestError, text_block

from tests.e2e.acp.conftest import Editor, agent_env, running_agent
from tests.support.replay_server import ReplayServer
from tests.support.streams import write_embedded_instances

AGENT = "E2E Tool Chat"
SECRET = "TOP-SECRET-7f3a"
TOKEN = "conformance-token"
TERMINAL = ("finished", "failed", "cancelled")


def make_home(root: Path, replay: ReplayServer) -> Path:
    """Config, data and a project of the scenarios; every door is started in it."""
    for name in ("config/agents", "config/providers", "data", "project", "home"):
        (root / name).mkdir(parents=True)
    write_embedded_instances(root / "config/providers", replay.url)
    (root / "config/agents/e2e.toml").write_text(
        f'schema_version = 1\nname = "{AGENT}"\nextends = "Embedded Chat"\nenable_tools = true\n'
    )
    (root / "config/pipelines.toml").write_text(f'[pipelines]\nchat_assistant = ["{AGENT}"]\n')
    (root / "config/settings.toml").write_text(
        '[tools.permissions]\nwrite = "allow"\nexecute = "deny"\n'
    )
    project = root / "project"
    (project / ".qodeassistignore").write_text("secret.txt\n")
    (project / ".gitignore").write_text("build/\n")
    (project / "secret.txt").write_text(f"{SECRET}\n")
    (project / "build").mkdir()
    (project / "build/out.py").write_text("x = 1\n")
    (project / "greet.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (root / "outside.txt").write_text(f"outside {SECRET}\n")
    return root


@dataclass
class Outcome:
    """What one send through a door came to."""

    refused: str | None = None
    """The error the send was refused with; None: it ran."""
    answer: str = ""
    """The text the user was answered."""
    events: list[str] = field(default_factory=list)


def told(replay: ReplayServer) -> str:
    """What the model was told about its last tool call ("" without one)."""
    if not replay.requests:
        return ""
    tools = [m for m in replay.requests[-1].json["messages"] if m["role"] == "tool"]
    return str(tools[-1]["content"]) if tools else ""


def sent_to_provider(replay: ReplayServer) -> str:
    """Every request body the provider received, as text."""
    return "\n".join(json.dumps(r.json, ensure_ascii=False) for r in replay.requests)


def saved(home: Path) -> str:
    """Every file under the data root (chat histories), as text."""
    chunks = [
        p.read_bytes().decode("utf-8", "replace") for p in (home / "data").rglob("*") if p.is_file()
    ]
    return "\n".join(chunks)


# -- LSP ---------------------------------------------------------------------------------------
class _Lsp:
    """A minimal LSP client over the server's stdio that answers the server's own requests."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self._answers: dict[int, dict[str, Any]] = {}
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read_all())

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()

    async def _read_all(self) -> None:
        assert self.process.stdout is not None
        while True:
            length = 0
            while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                return
            message = json.loads(await self.process.stdout.readexactly(length))
            if "method" in message and "id" in message:  # the server asks: nobody is there
                await self.send({"id": message["id"], "result": None})
            elif message.get("method") == "qodeassist/chat/event":
                self.events.append(message["params"])
            elif "id" in message:
                self._answers[message["id"]] = message
            self._changed.set()

    async def _until(self, found: Any) -> Any:
        while (value := found()) is None:
            self._changed.clear()
            await self._changed.wait()
        return value

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        await self.send({"id": ident, "method": method, "params": params})
        answer: dict[str, Any] = await self._until(lambda: self._answers.get(ident))
        return answer

    async def terminal(self, request_id: str) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            ends = [
                e for e in self.events if e.get("requestId") == request_id and e["kind"] in TERMINAL
            ]
            return ends[0] if ends else None

        event: dict[str, Any] = await self._until(found)
        return event


@contextlib.asynccontextmanager
async def lsp_server(home: Path, *more_folders: Path) -> AsyncIterator[_Lsp]:
    """Start the server in the project folder, initialized with it (and ``more_folders``)."""
    project = home / "project"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qodeassist_lsp",
        env=agent_env(home),
        cwd=project,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    lsp = _Lsp(process)
    try:
        answer = await lsp.request(
            "initialize",
            {
                "processId": None,
                "rootUri": project.as_uri(),
                "workspaceFolders": [
                    {"uri": folder.as_uri(), "name": folder.name}
                    for folder in (project, *more_folders)
                ],
                "capabilities": {},
            },
        )
        assert "error" not in answer, answer
        await lsp.send({"method": "initialized", "params": {}})
        yield lsp
        await lsp.request("shutdown", None)
        await lsp.send({"method": "exit"})
        await asyncio.wait_for(process.wait(), 10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        lsp._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lsp._reader


async def via_lsp(home: Path, message: str) -> Outcome:
    """Send ``message`` with ``qodeassist/chat/send``; follow the chat's events to the end."""
    async with asyncio.timeout(60), lsp_server(home) as lsp:
        answer = await lsp.request("qodeassist/chat/send", {"message": message})
        if "error" in answer:
            return Outcome(refused=str(answer["error"]["message"]))
        request_id = answer["result"]["requestId"]
        end = await lsp.terminal(request_id)
        mine = [e for e in lsp.events if e.get("requestId") == request_id]
        text = "".join(e.get("text", "") for e in mine if e["kind"] == "text")
        refused = None if end["kind"] == "finished" else str(end)
        return Outcome(refused=refused, answer=text, events=[e["kind"] for e in mine])


# -- ACP ---------------------------------------------------------------------------------------
async def via_acp(home: Path, message: str) -> Outcome:
    """Send ``message`` with ``session/prompt`` through the ACP SDK's own client."""
    editor = Editor()
    async with asyncio.timeout(60), running_agent(home, editor) as conn:
        session = await conn.new_session(cwd=str(home / "project"), mcp_servers=[])
        try:
            await conn.prompt(session_id=session.session_id, prompt=[text_block(message)])
        except RequestError as exc:
            return Outcome(refused=f"{exc} {json.dumps(exc.data, ensure_ascii=False)}")
    return Outcome(answer=editor.text(), events=[u.session_update for _s, u in editor.updates])


# -- HTTP --------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def http_server(home: Path) -> AsyncIterator[httpx.AsyncClient]:
    """``serve --http`` in the project, once it answers ``/health``: a client with the token."""
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qodeassist_lsp",
        "serve",
        "--http",
        f"127.0.0.1:{port}",
        "--project",
        str(home / "project"),
        env={**agent_env(home), "QODEASSIST_HTTP_TOKEN": TOKEN},
        cwd=home / "project",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        ) as http:
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/health")).status_code == 200:
                        break
                await asyncio.sleep(0.1)  # polls a starting process; the answer decides
            yield http
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


async def via_http(home: Path, message: str, *, bad_first: bool = False) -> Outcome:
    """Send ``message`` with ``POST /v1/chat/completions`` to ``serve --http``.

    ``bad_first``: send a request whose messages are a string first; the outcome's ``refused``
    is then its answer, a line break and whether ``message`` was answered after it.
    """
    body = {"model": AGENT, "messages": [{"role": "user", "content": message}]}
    async with asyncio.timeout(60), http_server(home) as http:
        if bad_first:
            bad = await http.post("/v1/chat/completions", json={"model": AGENT, "messages": "x"})
            good = await http.post("/v1/chat/completions", json=body)
            after = "answered" if good.status_code == 200 else good.text
            return Outcome(refused=f"{bad.status_code} {bad.text}\n{after}")
        reply = await http.post("/v1/chat/completions", json=body)
    if reply.status_code != 200:
        return Outcome(refused=f"{reply.status_code} {reply.text}")
    return Outcome(answer=reply.json()["choices"][0]["message"]["content"] or "")


# -- CLI ---------------------------------------------------------------------------------------
async def via_cli(home: Path, message: str) -> Outcome:
    """Send ``message`` with ``qodeassist-lsp chat`` (its tools over the project folder)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qodeassist_lsp",
        "chat",
        "--agent",
        AGENT,
        "--workspace",
        str(home / "project"),
        message,
        env={**agent_env(home), "PYTHONIOENCODING": "utf-8"},
        cwd=home / "project",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    if process.returncode != 0:
        lines = [line for line in err.decode().splitlines() if line.startswith("qodeassist-lsp:")]
        return Outcome(refused="\n".join(lines) or err.decode()[-2000:])
    return Outcome(answer=out.decode().strip())


DOORS = {"lsp": via_lsp, "acp": via_acp, "http": via_http, "cli": via_cli}


# -- a malformed chat request, then a good one on the same connection ------------------------------
async def malformed_lsp(home: Path) -> tuple[str, str]:
    """``chat/send`` whose message is a number; then a good one. Return (error, answer)."""
    async with asyncio.timeout(60), lsp_server(home) as lsp:
        bad = await lsp.request("qodeassist/chat/send", {"message": 42})
        good = await lsp.request("qodeassist/chat/send", {"message": "hi"})
        await lsp.terminal(good["result"]["requestId"])
        return json.dumps(bad.get("error")), "answered"


async def malformed_acp(home: Path) -> tuple[str, str]:
    """``session/prompt`` whose prompt is a string; then a good one."""
    from tests.e2e.acp.test_acp_bad_input import start, stop

    pipe = await start(home)
    try:
        await pipe.call(1, "initialize", {"protocolVersion": 1})
        new = await pipe.call(2, "session/new", {"cwd": str(home / "project"), "mcpServers": []})
        session = new["result"]["sessionId"]
        bad = await pipe.call(3, "session/prompt", {"sessionId": session, "prompt": "hi"})
        good = await pipe.call(
            4, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        )
        return json.dumps(bad.get("error")), "answered" if "result" in good else str(good)
    finally:
        await stop(pipe)


async def malformed_http(home: Path) -> tuple[str, str]:
    """``POST /v1/chat/completions`` whose messages are a string; then a good one."""
    outcome = await via_http(home, "hi", bad_first=True)
    error, _, answer = (outcome.refused or "").partition("\n")
    return error, answer


MALFORMED = {"lsp": malformed_lsp, "acp": malformed_acp, "http": malformed_http}
