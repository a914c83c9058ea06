"""A backend whose start failed says why, to every later caller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.lsp.backend import Backend

WHY = "bundled agents not found next to /nowhere; reinstall qodeassist-lsp"


def _no_bundled_agents(project: Path | None) -> ConfigPaths:
    raise FileNotFoundError(WHY)


async def test_a_failed_start_is_what_reload_and_runtime_raise() -> None:
    backend = Backend(_no_bundled_agents)
    with pytest.raises(FileNotFoundError):
        await backend.start(None, None)

    for call in (backend.reload, backend.runtime):
        with pytest.raises(RuntimeError, match="could not start: bundled agents not found") as info:
            # A waiter of the first load is woken by the failure, not left waiting forever.
            await asyncio.wait_for(call(), timeout=30)
        assert isinstance(info.value.__cause__, FileNotFoundError)


async def test_a_waiter_of_the_first_load_hears_the_failure() -> None:
    backend = Backend(_no_bundled_agents)
    waiter = asyncio.create_task(backend.runtime())
    await asyncio.sleep(0)  # the waiter is parked on the first load
    with pytest.raises(FileNotFoundError):
        await backend.start(None, None)
    with pytest.raises(RuntimeError, match=WHY.split(";")[0]):
        await asyncio.wait_for(waiter, timeout=30)


async def test_reload_before_start_still_says_so() -> None:
    with pytest.raises(RuntimeError, match=r"Backend.start\(\) was not called"):
        await Backend(_no_bundled_agents).reload()
