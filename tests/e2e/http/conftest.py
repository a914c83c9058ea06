"""``qodeassist-lsp serve --http`` as a real process, its providers on a loopback replay server."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.replay_server import ReplayServer
from tests.support.workspace import Workspace


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class HttpServer:
    """A running ``serve --http`` process."""

    process: subprocess.Popen[str]
    url: str
    token: str
    workspace: Workspace
    replay: ReplayServer
    banner: str

    def client(self, token: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]


def start_http(ws: Workspace, replay: ReplayServer, *extra: str) -> HttpServer:
    port = free_port()
    process = ws.popen("serve", "--http", f"127.0.0.1:{port}", "--project", str(ws.project), *extra)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    banner = ""
    while "#token=" not in banner:
        line = process.stderr.readline()
        if not line:
            raise AssertionError(f"serve --http ended: {process.wait()} {banner}")
        banner += line
        assert time.monotonic() < deadline, banner
    token = banner.split("#token=", 1)[1].split()[0]
    # Keep reading the logs: a full stderr pipe would block the server.
    threading.Thread(target=process.stderr.read, daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if (
                httpx.get(f"{url}/health", headers={"Authorization": f"Bearer {token}"}).status_code
                == 200
            ):
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "serve --http never answered /health"
        time.sleep(0.1)
    return HttpServer(process, url, token, ws, replay, banner)


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path, replay: ReplayServer) -> Workspace:
    ws = Workspace(tmp_path, replay.url, log_level="INFO")
    (ws.project / "notes.txt").write_text("inside the project\n", encoding="utf-8")
    return ws


@pytest.fixture
def http_server(workspace: Workspace, replay: ReplayServer) -> Iterator[HttpServer]:
    server = start_http(workspace, replay)
    try:
        yield server
    finally:
        stop(server)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for a module's tests that neither script the provider nor change state."""
    with ReplayServer() as replay:
        ws = Workspace(tmp_path_factory.mktemp("http"), replay.url, log_level="INFO")
        server = start_http(ws, replay)
        try:
            yield server
        finally:
            stop(server)


def stop(server: HttpServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    for stream in (server.process.stdout, server.process.stderr):
        if stream is not None:
            stream.close()
