"""ProviderLauncher against a real tiny HTTP server started as the ``[launch]`` command."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core import launcher as launcher_module
from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import FinishedEvent, TextEvent
from qodeassist_lsp.core.launcher import LaunchError, LauncherState, ProviderLauncher
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.wire.errors import ErrorCategory, WireError

TINY_SERVER = r"""
import argparse, json, os, signal, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--spawn-log")
parser.add_argument("--report")
parser.add_argument("--exit", type=int)
parser.add_argument("--delay", type=float, default=0.0)
parser.add_argument("--ready-after", type=float, default=0.0)
parser.add_argument("--status", type=int, default=200)
parser.add_argument("--ignore-term", action="store_true")
parser.add_argument("extra", nargs="*")
args = parser.parse_args()
started = time.monotonic()
if args.spawn_log:
    with open(args.spawn_log, "a") as log:
        log.write(f"{os.getpid()}\n")
if args.report:
    with open(args.report, "w") as report:
        json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}, report)
if args.exit is not None:
    print("tiny: loading the model failed: model.gguf is not a GGUF file", flush=True)
    print("tiny: giving up", file=sys.stderr, flush=True)
    sys.exit(args.exit)
if args.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(args.delay)

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, status, body, kind="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            ready = time.monotonic() - started >= args.ready_after
            status = args.status if ready else 503
            self._send(status, json.dumps({"status": "ok" if status == 200 else "loading"}))
        elif self.path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": "tiny"}]}))
        else:
            self._send(404, "{}")

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "pong"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, body, "text/event-stream")

server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print(f"tiny: listening on {args.port}", flush=True)
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Tiny:
    """Builds launch configurations for the tiny server in one temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.script = root / "tiny_server.py"
        self.script.write_text(TINY_SERVER, encoding="utf-8")
        self.spawn_log = root / "spawns.log"
        self.run_dir = root / "run"
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self, *extra: str, **fields: Any) -> LaunchConfig:
        values: dict[str, Any] = {
            "command": sys.executable,
            "args": [
                str(self.script),
                "--port",
                str(self.port),
                "--spawn-log",
                str(self.spawn_log),
                *extra,
            ],
            "ready_url": f"{self.url}/health",
            "ready_timeout_s": 10.0,
            "auto_start": True,
        }
        values.update(fields)
        return LaunchConfig.model_validate(values)

    def launcher(self, *extra: str, name: str = "Tiny", **fields: Any) -> ProviderLauncher:
        return ProviderLauncher(
            name,
            self.config(*extra, **fields),
            run_dir=self.run_dir,
            probe_interval_s=0.1,
            stop_grace_s=2.0,
        )

    def spawns(self) -> list[int]:
        if not self.spawn_log.exists():
            return []
        return [int(line) for line in self.spawn_log.read_text().split()]


@pytest.fixture
def tiny(tmp_path: Path) -> Tiny:
    return Tiny(tmp_path)


@pytest.fixture
async def launchers() -> AsyncIterator[list[ProviderLauncher]]:
    """Launchers a test creates; every one is closed (attached servers stopped) afterwards."""
    created: list[ProviderLauncher] = []
    yield created
    for launcher in created:
        await launcher.aclose()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    if not Path("/proc/self/stat").exists():
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # an unreaped zombie has exited


async def health(url: str) -> int | None:
    async with httpx.AsyncClient(trust_env=False) as client:
        try:
            return (await client.get(f"{url}/health", timeout=2)).status_code
        except httpx.HTTPError:
            return None


async def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_spawns_waits_for_ready_and_stops(tiny: Tiny, launchers: list) -> None:
    states: list[LauncherState] = []
    launcher = ProviderLauncher(
        "Tiny",
        tiny.config("--delay", "0.3"),
        run_dir=tiny.run_dir,
        probe_interval_s=0.1,
        on_state=states.append,
    )
    launchers.append(launcher)
    await launcher.ensure_ready()
    assert launcher.state is LauncherState.READY
    assert launcher.pid == tiny.spawns()[0] and not launcher.adopted
    assert await health(tiny.url) == 200
    assert "listening" in launcher.output_tail()
    info = json.loads(launcher.pid_path.read_text())
    assert info["pid"] == launcher.pid and info["owner_pid"] == os.getpid()
    pid = launcher.pid
    await launcher.stop()
    assert launcher.state is LauncherState.IDLE and launcher.pid is None
    assert not alive(pid)
    assert await health(tiny.url) is None
    assert not launcher.pid_path.exists()
    assert states[:3] == [LauncherState.PROBING, LauncherState.STARTING, LauncherState.PROBING]
    assert LauncherState.READY in states and states[-2:] == [
        LauncherState.STOPPING,
        LauncherState.IDLE,
    ]


async def test_adopts_a_running_server_and_never_stops_it(tiny: Tiny, launchers: list) -> None:
    owner = tiny.launcher()
    other = tiny.launcher()
    launchers.extend([owner, other])
    await owner.ensure_ready()
    await other.ensure_ready()
    assert other.adopted and other.pid is None and other.state is LauncherState.READY
    await other.stop()
    assert other.state is LauncherState.IDLE
    assert await health(tiny.url) == 200
    assert len(tiny.spawns()) == 1


async def test_concurrent_calls_share_one_start(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher("--delay", "0.3")
    launchers.append(launcher)
    await asyncio.gather(*(launcher.ensure_ready() for _ in range(8)))
    assert len(tiny.spawns()) == 1
    await asyncio.gather(*(launcher.ensure_ready() for _ in range(8)))
    assert len(tiny.spawns()) == 1


async def test_one_server_per_user_two_launchers_race(tiny: Tiny, launchers: list) -> None:
    first, second = tiny.launcher("--delay", "0.5"), tiny.launcher("--delay", "0.5")
    launchers.extend([first, second])
    await asyncio.gather(first.ensure_ready(), second.ensure_ready())
    assert len(tiny.spawns()) == 1
    assert sorted([first.adopted, second.adopted]) == [False, True]
    assert first.lock_path == second.lock_path and first.lock_path.exists()


LANGUAGE_SERVER = r"""
import asyncio, json, sys
from pathlib import Path
from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core.launcher import ProviderLauncher

async def main():
    config = LaunchConfig.model_validate_json(sys.argv[1])
    launcher = ProviderLauncher("Tiny", config, run_dir=Path(sys.argv[2]), probe_interval_s=0.1)
    await launcher.ensure_ready()
    print(json.dumps({"pid": launcher.pid, "adopted": launcher.adopted}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await launcher.aclose()

asyncio.run(main())
"""


async def test_another_process_adopts_and_takes_over_when_owner_exits(
    tiny: Tiny, launchers: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher_module, "_RECHECK_S", 0.0)
    config = tiny.config("--delay", "0.5")
    other = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LANGUAGE_SERVER,
        config.model_dump_json(),
        str(tiny.run_dir),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    ours = tiny.launcher("--delay", "0.5")
    launchers.append(ours)
    try:
        assert other.stdout is not None and other.stdin is not None
        results = await asyncio.gather(other.stdout.readline(), ours.ensure_ready())
        theirs = json.loads(results[0])
        assert len(tiny.spawns()) == 1
        assert [theirs["adopted"], ours.adopted].count(True) == 1
        if ours.adopted:
            # The owning language server exits: its attached server goes with it and the
            # survivor starts its own on the next request.
            other.stdin.write(b"quit\n")
            await other.stdin.drain()
            assert await other.wait() == 0
            assert not alive(theirs["pid"])
            await ours.ensure_ready()
            assert not ours.adopted and ours.pid == tiny.spawns()[1]
    finally:
        if other.returncode is None:
            assert other.stdin is not None
            other.stdin.close()
            await other.wait()


async def test_timeout_kills_the_server_and_says_so(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher("--status", "503", ready_timeout_s=1.0)
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    info = caught.value.info
    assert info.category is ErrorCategory.NETWORK
    assert "did not become ready within 1 s" in info.message
    assert "HTTP 503" in info.message and "ready_timeout_s" in info.message
    assert launcher.state is LauncherState.FAILED
    assert await wait_gone(tiny.spawns()[0])


async def test_crash_reports_exit_code_and_output_tail(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher("--exit", "3")
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    info = caught.value.info
    assert info.category is ErrorCategory.NETWORK
    assert "exited with code 3 before it was ready" in info.message
    assert "not a GGUF file" in info.message and "giving up" in info.message
    assert launcher.state is LauncherState.FAILED and launcher.last_error == info
    # Within the cool-down the same error comes back without spawning again.
    with pytest.raises(LaunchError):
        await launcher.ensure_ready()
    assert len(tiny.spawns()) == 1


async def test_exit_code_1_is_a_configuration_error(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher("--exit", "1")
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    assert caught.value.info.category is ErrorCategory.CONFIG


async def test_missing_command_is_a_configuration_error(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher(command="qodeassist-no-such-server-binary")
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    info = caught.value.info
    assert info.category is ErrorCategory.CONFIG
    assert "'qodeassist-no-such-server-binary' was not found" in info.message
    assert "[launch] command" in info.message


async def test_port_taken_by_another_program(tiny: Tiny, launchers: list) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", tiny.port))
        sock.listen()

        async def answer_404() -> None:
            loop = asyncio.get_running_loop()
            sock.setblocking(False)
            conn, _ = await loop.sock_accept(sock)
            with conn:
                await loop.sock_recv(conn, 4096)
                await loop.sock_sendall(
                    conn,
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )

        launcher = tiny.launcher()
        launchers.append(launcher)
        server = asyncio.create_task(answer_404())
        with pytest.raises(LaunchError) as caught:
            await launcher.ensure_ready()
        await server
    info = caught.value.info
    assert info.category is ErrorCategory.CONFIG
    assert f"127.0.0.1:{tiny.port} is taken" in info.message and "HTTP 404" in info.message
    assert tiny.spawns() == []


async def test_adopts_a_server_that_is_still_loading(tiny: Tiny, launchers: list) -> None:
    loading = await asyncio.create_subprocess_exec(
        sys.executable,
        str(tiny.script),
        "--port",
        str(tiny.port),
        "--ready-after",
        "0.8",
        stdout=asyncio.subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if await health(tiny.url) is not None:
                break
            await asyncio.sleep(0.05)
        launcher = tiny.launcher()
        launchers.append(launcher)
        await launcher.ensure_ready()
        assert launcher.adopted and tiny.spawns() == []
    finally:
        loading.terminate()
        await loading.wait()


async def test_environment_expansion_and_default_cwd(tiny: Tiny, launchers: list) -> None:
    report = tiny.root / "report.json"
    launcher = tiny.launcher(
        "--report",
        "${REPORT_FILE}",
        "${PROVIDER_NAME}-${HOME}-${NOT_SET_ANYWHERE}",
        env={"REPORT_FILE": str(report), "EXTRA": "1"},
        name="Tiny Local",
    )
    launchers.append(launcher)
    await launcher.ensure_ready()
    seen = json.loads(report.read_text())
    assert seen["cwd"] == str(Path.home())
    assert seen["env"]["PROVIDER_NAME"] == "Tiny Local" and seen["env"]["EXTRA"] == "1"
    assert seen["env"]["QODEASSIST_OWNER_PID"] == str(os.getpid())
    assert seen["argv"][-1] == f"Tiny Local-{os.environ['HOME']}-${{NOT_SET_ANYWHERE}}"


async def test_cwd_is_expanded_and_checked(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher(cwd="${NOWHERE_DIR}/x", env={"NOWHERE_DIR": str(tiny.root / "no")})
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    assert caught.value.info.category is ErrorCategory.CONFIG
    assert "working directory" in caught.value.info.message


async def test_server_that_ignores_sigterm_is_killed(tiny: Tiny, launchers: list) -> None:
    launcher = ProviderLauncher(
        "Tiny",
        tiny.config("--ignore-term"),
        run_dir=tiny.run_dir,
        probe_interval_s=0.1,
        stop_grace_s=0.3,
    )
    launchers.append(launcher)
    await launcher.ensure_ready()
    pid = launcher.pid
    assert pid is not None
    await launcher.stop()
    assert not alive(pid)


async def test_restarts_after_the_server_died(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher()
    launchers.append(launcher)
    await launcher.ensure_ready()
    first = launcher.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    assert await wait_gone(first)
    await asyncio.sleep(0.1)
    await launcher.ensure_ready()
    assert launcher.pid not in (None, first) and len(tiny.spawns()) == 2


async def test_stop_during_start_cancels_it(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher("--delay", "5")
    launchers.append(launcher)
    starting = asyncio.create_task(launcher.ensure_ready())
    for _ in range(100):
        if tiny.spawns():
            break
        await asyncio.sleep(0.05)
    await launcher.stop()
    with pytest.raises(LaunchError, match="cancelled"):
        await starting
    assert await wait_gone(tiny.spawns()[0])
    assert launcher.state is LauncherState.IDLE


async def test_detached_server_outlives_aclose_and_stop_is_guarded(
    tiny: Tiny, launchers: list
) -> None:
    launcher = tiny.launcher(detach=True)
    await launcher.ensure_ready()
    pid = launcher.pid
    assert pid == tiny.spawns()[0] and not launcher.adopted
    try:
        owned = launcher._owned
        assert owned is not None and owned.marker is not None
        # Pid reuse guard: a process whose start time differs is never signalled.
        real_marker, owned.marker = owned.marker, "1"
        await launcher.stop()
        assert alive(pid) and await health(tiny.url) == 200
        # aclose() leaves a detached server running; a later launcher adopts it.
        await launcher.aclose()
        again = tiny.launcher(detach=True)
        launchers.append(again)
        await again.ensure_ready()
        assert again.adopted
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGTERM)
        assert await wait_gone(pid)
    assert real_marker


async def test_detached_stop_terminates_it(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher(detach=True)
    launchers.append(launcher)
    await launcher.ensure_ready()
    pid = launcher.pid
    assert pid is not None
    await launcher.stop()
    assert await wait_gone(pid)


def write_tiny_provider(tree: Any, tiny: Tiny, *, auto_start: bool) -> None:
    args = json.dumps(
        [str(tiny.script), "--port", str(tiny.port), "--spawn-log", str(tiny.spawn_log)]
    )
    tree.write(
        "config/providers/tiny.toml",
        f"""
        name = "Tiny"
        client_api = "llama.cpp"
        url = "{tiny.url}"

        [launch]
        command = {json.dumps(sys.executable)}
        args = {args}
        ready_url = "{tiny.url}/health"
        auto_start = {"true" if auto_start else "false"}
        """,
    )
    tree.write(
        "config/agents/tiny_chat.toml",
        'name = "Tiny Chat"\nextends = "Wire Base"\nprovider_instance = "Tiny"\nmodel = "tiny"\n',
    )


async def test_runtime_starts_auto_start_servers_and_stops_them(tree, tiny: Tiny) -> None:
    write_tiny_provider(tree, tiny, auto_start=True)
    runtime = Runtime(tree.load())
    try:
        assert runtime.launcher("Local") is None
        assert await runtime.provider("Tiny").list_models() == ["tiny"]
        launcher = runtime.launcher("Tiny")
        assert launcher is runtime.provider("Tiny").launcher
        assert launcher is not None and launcher.state is LauncherState.READY
        assert launcher.run_dir == tree.paths.data_root / "run"
        request = runtime.sessions.create("Tiny Chat").send(user_text("ping"))
        events = [event async for event in request.events()]
        assert "".join(e.text for e in events if isinstance(e, TextEvent)) == "pong"
        assert isinstance(events[-1], FinishedEvent)
        pid = launcher.pid
        assert pid is not None
        # A reload that keeps [launch] keeps the server.
        await runtime.reload(tree.load())
        assert runtime.launcher("Tiny") is launcher and launcher.pid == pid
    finally:
        await runtime.aclose()
    assert not alive(pid)


async def test_runtime_does_not_start_without_auto_start(tree, tiny: Tiny) -> None:
    write_tiny_provider(tree, tiny, auto_start=False)
    runtime = Runtime(tree.load())
    try:
        with pytest.raises(WireError):  # the request is sent, and nothing answers it
            await runtime.provider("Tiny").list_models()
        assert tiny.spawns() == []
    finally:
        await runtime.aclose()
