"""`ParentWatch`: the server ends when the editor's process exits, never while it lives."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from qodeassist_lsp.core.parent_watch import ParentWatch, process_alive

EDITOR = 4242


class Ticks:
    """The watch's clock, stepped by the test: one probe per step, no sleeps."""

    def __init__(self) -> None:
        self.asked: asyncio.Queue[None] = asyncio.Queue()
        self.given: asyncio.Queue[None] = asyncio.Queue()

    async def wait(self) -> None:
        self.asked.put_nowait(None)
        await self.given.get()

    async def step(self) -> None:
        """Wait until the watch waits for its next probe, then let it probe."""
        await self.asked.get()
        self.given.put_nowait(None)

    async def waiting_again(self) -> None:
        """Return once the watch has probed and waits again (it is still watching)."""
        await self.asked.get()


class World:
    """The processes the watch sees, and what it reported."""

    def __init__(self, alive: set[int], parent: int = 100) -> None:
        self.alive = alive
        self.parent = parent
        self.ticks = Ticks()
        self.gone: list[str] = []
        self.ended = asyncio.Event()

    async def on_gone(self, which: str) -> None:
        self.gone.append(which)
        self.ended.set()

    def watch(self) -> ParentWatch:
        return ParentWatch(
            self.on_gone,
            alive=lambda pid: pid in self.alive,
            parent=lambda: self.parent,
            wait=self.ticks.wait,
        )


async def test_the_editor_exiting_ends_the_server_once() -> None:
    world = World({EDITOR})
    watch = world.watch()
    watch.start(EDITOR)
    assert watch.watching == f"the editor's process {EDITOR}"
    await world.ticks.step()
    await world.ticks.waiting_again()
    world.alive.clear()
    world.ticks.given.put_nowait(None)
    await world.ended.wait()
    assert world.gone == [f"the editor's process {EDITOR}"]


async def test_a_live_editor_never_ends_the_server_even_if_our_parent_changes() -> None:
    world = World({EDITOR})
    watch = world.watch()
    watch.start(EDITOR)
    world.parent = 1  # re-parented: the processId given is what counts
    for _ in range(5):
        await world.ticks.step()
    await world.ticks.waiting_again()
    assert world.gone == []
    await watch.stop()
    assert world.gone == []


async def test_without_a_process_id_our_parent_changing_ends_the_server() -> None:
    world = World(set(), parent=100)
    watch = world.watch()
    watch.start(None)
    assert watch.watching == "the parent process 100"
    await world.ticks.step()
    await world.ticks.waiting_again()
    world.parent = 1
    world.ticks.given.put_nowait(None)
    await world.ended.wait()
    assert world.gone == ["the parent process 100"]


@pytest.mark.parametrize("process_id", [EDITOR, os.getpid(), 0, -1])
async def test_a_pid_not_seen_alive_at_start_or_our_own_falls_back_to_the_parent(
    process_id: int,
) -> None:
    # An editor on the host of a container sends a pid of another namespace: never "gone".
    world = World({os.getpid()}, parent=100)
    watch = world.watch()
    watch.start(process_id)
    assert watch.watching == "the parent process 100"
    await world.ticks.step()
    await world.ticks.waiting_again()
    assert world.gone == []
    await watch.stop()


async def test_started_by_init_nothing_is_watched() -> None:
    world = World(set(), parent=1)
    watch = world.watch()
    watch.start(None)
    assert watch.watching == ""
    await watch.stop()


async def test_a_probe_that_breaks_keeps_the_server_serving() -> None:
    calls: list[int] = []

    def broken(pid: int) -> bool:
        calls.append(pid)
        if len(calls) > 1:
            raise RuntimeError("no /proc")
        return True

    world = World({EDITOR})
    watch = ParentWatch(world.on_gone, alive=broken, wait=world.ticks.wait)
    watch.start(EDITOR)
    await world.ticks.step()
    await world.ticks.waiting_again()
    assert len(calls) == 2 and world.gone == []
    await watch.stop()


async def test_stop_cancels_the_watch() -> None:
    world = World({EDITOR})
    watch = world.watch()
    watch.start(EDITOR)
    await world.ticks.asked.get()
    await watch.stop()
    world.alive.clear()
    world.ticks.given.put_nowait(None)
    await watch.stop()  # twice is fine
    assert world.gone == []


async def test_stop_from_the_ending_itself_does_not_cancel_it() -> None:
    stopped = asyncio.Event()
    world = World({EDITOR})

    async def on_gone(which: str) -> None:
        await watch.stop()  # the server's close stops the watch that is ending it
        stopped.set()

    watch = ParentWatch(on_gone, alive=lambda pid: pid in world.alive, wait=world.ticks.wait)
    watch.start(EDITOR)
    world.alive.clear()
    await world.ticks.step()
    await stopped.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")
def test_process_alive_on_real_processes() -> None:
    assert process_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", ""])
    if sys.platform == "linux":  # exited, not yet reaped: a zombie is not alive
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert not process_alive(child.pid)
    child.wait()
    assert not process_alive(child.pid)
