"""Readiness: waiting for a spawned server, adopting a loading one, and the errors."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.core.launcher.supervisor import LauncherState
from qodeassist_lsp.wire.errors import ErrorCategory
from tests.support.tiny_launch import Tiny, health, wait_gone


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


async def test_a_probe_the_deadline_cut_short_does_not_hide_the_last_answer() -> None:
    # On a loaded machine the last probe before the deadline gets only what is left of it and
    # may time out; the error still says what the server answered before (HTTP 503).
    from types import SimpleNamespace

    from qodeassist_lsp.config.providers import LaunchConfig
    from qodeassist_lsp.core.launcher.probe import Probe, ProbeKind
    from qodeassist_lsp.core.launcher.readiness import Readiness

    answers = iter([Probe(ProbeKind.STATUS, "answered HTTP 503", 503)])

    async def probe(wait_s: float) -> Probe:
        answer = next(answers, None)
        if answer is not None:
            return answer
        await asyncio.sleep(wait_s)
        return Probe(ProbeKind.TIMEOUT, f"did not answer within {wait_s:g} s")

    config = LaunchConfig(command="x", ready_url="http://127.0.0.1:9/health", ready_timeout_s=1.0)
    readiness = Readiness("Tiny", config, probe, interval_s=0.05)  # type: ignore[arg-type]
    with pytest.raises(LaunchError) as caught:
        await readiness.wait(
            SimpleNamespace(exited=False, waiter=None),  # type: ignore[arg-type]
            SimpleNamespace(tail=lambda chars: ""),  # type: ignore[arg-type]
        )
    assert "answered HTTP 503" in caught.value.info.message
    assert "did not answer" not in caught.value.info.message
