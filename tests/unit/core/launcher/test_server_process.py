"""Stopping started servers: SIGTERM then kill, and the pid-reuse guard of detached ones."""

from __future__ import annotations

import os
import signal

from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher
from tests.support.tiny_launch import Tiny, alive, health, wait_gone


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
