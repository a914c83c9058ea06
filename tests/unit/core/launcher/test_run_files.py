"""One server per machine user: the start lock across launchers and processes."""

from __future__ import annotations

import asyncio
import json
import sys

from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo
from tests.support.tiny_launch import Tiny, alive


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
from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher

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
    tiny: Tiny, launchers: list
) -> None:
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
            # A request that cannot connect makes the next one re-probe, and start its own.
            ours.request_failed(ErrorInfo(ErrorCategory.NETWORK, "connection refused"))
            await ours.ensure_ready()
            assert not ours.adopted and ours.pid == tiny.spawns()[1]
    finally:
        if other.returncode is None:
            assert other.stdin is not None
            other.stdin.close()
            await other.wait()


async def test_pid_file_names_the_server_and_is_removed_with_it(
    tiny: Tiny, launchers: list
) -> None:
    launcher = tiny.launcher(name="Tiny Local")
    launchers.append(launcher)
    assert launcher.lock_path.name == f"127.0.0.1_{tiny.port}.lock"
    await launcher.ensure_ready()
    info = json.loads(launcher.pid_path.read_text())
    assert info["provider"] == "Tiny Local" and info["pid"] == launcher.pid
    assert info["ready_url"] == f"{tiny.url}/health" and not info["detached"]
    await launcher.stop()
    assert not launcher.pid_path.exists()
