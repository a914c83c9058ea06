"""ProviderLauncher against a real tiny HTTP server started as the ``[launch]`` command."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

import pytest

from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import FinishedEvent, TextEvent
from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.core.launcher.supervisor import LauncherState, ProviderLauncher
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo, WireError
from tests.support.tiny_launch import Tiny, alive, health, wait_gone


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


async def test_a_ready_server_is_not_probed_again_until_a_request_fails(
    tiny: Tiny, launchers: list
) -> None:
    owner, other = tiny.launcher(), tiny.launcher()
    launchers.extend([owner, other])
    await owner.ensure_ready()
    await other.ensure_ready()
    assert other.adopted
    before = tiny.probes()
    for _ in range(5):
        await owner.ensure_ready()
        await other.ensure_ready()
    assert tiny.probes() == before
    # An HTTP answer (even an error) shows the server is there: still no probe.
    other.request_failed(ErrorInfo(ErrorCategory.PROVIDER, "overloaded", status=503))
    await other.ensure_ready()
    assert tiny.probes() == before
    # No answer at all: the next call probes once, then trusts the server again.
    other.request_failed(ErrorInfo(ErrorCategory.NETWORK, "connection refused"))
    await other.ensure_ready()
    await other.ensure_ready()
    assert tiny.probes() == before + 1 and other.adopted


async def test_an_adopted_server_that_went_away_is_replaced_after_a_failed_request(
    tiny: Tiny, launchers: list
) -> None:
    owner, other = tiny.launcher(), tiny.launcher()
    launchers.extend([owner, other])
    await owner.ensure_ready()
    await other.ensure_ready()
    await owner.stop()
    other.request_failed(ErrorInfo(ErrorCategory.NETWORK, "connection refused"))
    await other.ensure_ready()
    assert not other.adopted and other.pid == tiny.spawns()[1]
    assert await health(tiny.url) == 200


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


async def test_runtime_requests_do_not_probe_and_a_lost_server_comes_back(
    tree, tiny: Tiny, launchers: list
) -> None:
    owner = tiny.launcher()
    launchers.append(owner)
    await owner.ensure_ready()
    write_tiny_provider(tree, tiny, auto_start=True)
    runtime = Runtime(tree.load())

    async def chat() -> str:
        request = runtime.sessions.create("Tiny Chat").send(user_text("ping"))
        events = [event async for event in request.events()]
        return "".join(e.text for e in events if isinstance(e, TextEvent))

    try:
        assert await chat() == "pong"
        launcher = runtime.launcher("Tiny")
        assert launcher is not None and launcher.adopted
        probes = tiny.probes()
        for _ in range(3):
            assert await chat() == "pong"
        assert tiny.probes() == probes and launcher.probe.count == 1
        await owner.stop()  # the adopted server goes away behind the runtime's back
        assert await chat() == ""  # this request finds nothing listening ...
        assert await chat() == "pong"  # ... so the next one re-probes and starts a server
        assert launcher.pid == tiny.spawns()[1]
    finally:
        await runtime.aclose()


async def test_runtime_does_not_start_without_auto_start(tree, tiny: Tiny) -> None:
    write_tiny_provider(tree, tiny, auto_start=False)
    runtime = Runtime(tree.load())
    try:
        with pytest.raises(WireError):  # the request is sent, and nothing answers it
            await runtime.provider("Tiny").list_models()
        assert tiny.spawns() == []
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(("extra", "outcome"), [((), "ready"), (("--exit", "1"), "failed")])
async def test_progress_lines_of_a_starting_server_are_reported(
    tiny: Tiny, launchers: list, extra: tuple[str, ...], outcome: str
) -> None:
    heard: list[tuple[int | None, str]] = []
    launcher = ProviderLauncher(
        "Tiny",
        tiny.config("--progress", *extra),
        run_dir=tiny.run_dir,
        probe_interval_s=0.1,
        on_progress=lambda percent, message: heard.append((percent, message)),
    )
    launchers.append(launcher)
    if outcome == "failed":
        with pytest.raises(LaunchError):
            await launcher.ensure_ready()
    else:
        await launcher.ensure_ready()
    assert heard == [
        (0, "downloading model.gguf: 0 of 100 MiB"),
        (50, "downloading model.gguf: 50 of 100 MiB"),
        (100, "downloading model.gguf: 100 of 100 MiB"),
        (None, outcome),
    ]
