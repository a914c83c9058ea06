"""terminal and build: no shell, the allow list, time limit, output cap, group killed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from qodeassist_lsp.config.settings import ToolsSettings
from qodeassist_lsp.tools.build import BuildTool
from qodeassist_lsp.tools.process import OUTPUT_CAP, Finished, run_program
from qodeassist_lsp.tools.terminal import TerminalTool
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.conftest import call

pytestmark = pytest.mark.skipif(
    not Path("/proc").is_dir(), reason="POSIX programs, process groups and /proc"
)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def settings(**values: object) -> Callable[[], ToolsSettings]:
    return lambda: ToolsSettings.model_validate(values)


async def test_runs_an_allowed_command_without_a_shell(
    workspace: Callable[[], ToolWorkspace],
) -> None:
    tool = TerminalTool(workspace, settings())
    out = await call(tool, command="echo hello; rm -rf / $(whoami)", cwd="src")
    assert not out.is_error
    assert (
        out.content == "$ echo hello; rm -rf / $(whoami)\n(exit code 0)\nhello; rm -rf / $(whoami)"
    )
    listed = await call(tool, command="ls", cwd="src")
    assert listed.content.endswith("main.py")


async def test_refusals_are_tool_errors(workspace: Callable[[], ToolWorkspace]) -> None:
    tool = TerminalTool(workspace, settings())
    refused = await call(tool, command="rm -rf src")
    assert refused.is_error and "'rm' is not on the allow list" in refused.content
    assert "terminal_allow_list" in refused.content
    outside = await call(tool, command="ls", cwd="..")
    assert outside.is_error and "outside" in outside.content
    quotes = await call(tool, command="echo 'unclosed")
    assert quotes.is_error and "cannot split" in quotes.content
    failing = await call(tool, command="ls no-such-file")
    assert failing.is_error and "(exit code 2)" in failing.content
    anything = TerminalTool(workspace, settings(terminal_allow_list=[]))
    missing = await call(anything, command="no-such-program-qa")
    assert missing.is_error and "command not found" in missing.content


async def test_a_command_that_never_ends_is_killed_with_its_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {marker}; echo started; wait"
    began = time.monotonic()
    finished = await run_program(["sh", "-c", script], tmp_path, 0.5)
    assert finished.timed_out and finished.exit_code is None
    assert time.monotonic() - began < 10
    assert "started" in finished.output
    assert "killed after 0.5 s" in finished.report("sh", 0.5, "head")
    await asyncio.sleep(0.2)
    assert not alive(int(marker.read_text()))  # the background child went with the group


async def test_a_flood_is_capped(tmp_path: Path) -> None:
    finished = await run_program(["yes", "flood"], tmp_path, 0.5)
    assert finished.timed_out
    assert len(finished.output.encode()) <= OUTPUT_CAP and finished.dropped > 0
    assert "bytes of output not shown" in finished.report("yes", 0.5, "head")
    tail = await run_program(
        ["sh", "-c", "yes | head -c 200000; echo LAST"], tmp_path, 5, keep="tail"
    )
    assert tail.output.endswith("LAST\n") and tail.dropped == 200005 - OUTPUT_CAP


async def test_cancelling_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    task = asyncio.create_task(
        run_program(["sh", "-c", f"echo $$ > {marker}; sleep 60"], tmp_path, 60)
    )
    for _ in range(200):  # the shell writes its pid first
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(int(marker.read_text()))


async def test_build_runs_the_configured_command(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    tool = BuildTool(workspace, settings(build_command="sh -c 'echo compiling; exit 3'"))
    out = await call(tool)
    assert (
        out.is_error and out.content == "$ sh -c 'echo compiling; exit 3'\n(exit code 3)\ncompiling"
    )


async def test_build_without_a_command_explains(workspace: Callable[[], ToolWorkspace]) -> None:
    out = await call(BuildTool(workspace, settings()))
    assert out.is_error and "build_command" in out.content


async def test_a_chat_cancelled_mid_tool_kills_the_command_and_stays_cancelled(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    marker = project / "pid"
    tool = TerminalTool(workspace, settings(terminal_allow_list=[]))
    task = asyncio.create_task(call(tool, command=f"sh -c 'echo $$ > {marker}; sleep 60'"))
    for _ in range(200):
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # not turned into a tool result
        await task
    assert not alive(int(marker.read_text()))


class Runner:
    """A `ProgramRunner` that records what it was asked to run (an editor's terminal)."""

    def __init__(self) -> None:
        self.runs: list[tuple[list[str], Path, float]] = []

    async def __call__(
        self, argv: Sequence[str], cwd: Path, timeout_s: float, *, env: object = None
    ) -> Finished:
        self.runs.append((list(argv), cwd, timeout_s))
        return Finished(0, "ran elsewhere\n", 0)


async def test_terminal_and_build_run_through_the_workspace_runner(project: Path) -> None:
    runner = Runner()
    view = ToolWorkspace.of([project], runner=runner)
    out = await call(TerminalTool(lambda: view, settings()), command="git status")
    assert not out.is_error and "ran elsewhere" in out.content
    built = await call(BuildTool(lambda: view, settings(build_command="make all")))
    assert not built.is_error
    git, make = (run[0] for run in runner.runs)  # git runs with its safety options first
    assert git[0] == "git" and git[-1] == "status" and make == ["make", "all"]
    assert runner.runs[0][1] == view.root
