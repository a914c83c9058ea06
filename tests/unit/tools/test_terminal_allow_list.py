"""The terminal's allow list limits which programs RUN, also through listed programs' options.

Each case runs the real program in a real git repository and checks that the program the
command tried to smuggle in (``touch`` here, not on the default allow list) never ran.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from qodeassist_lsp.config.settings import ToolsSettings
from qodeassist_lsp.tools.terminal import TerminalTool
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.conftest import call

pytestmark = pytest.mark.skipif(
    not (Path("/proc").is_dir() and shutil.which("git") and shutil.which("touch")),
    reason="POSIX programs and git",
)

SMUGGLED = [
    "find . -maxdepth 0 -exec touch ran ;",
    "find . -maxdepth 0 -execdir touch ran ;",
    "git -c alias.x=!touch\\ ran x",
    "git -c core.fsmonitor=touch\\ ran status",
    "git --config-env=core.fsmonitor=HOME status",
    "git -c core.pager=touch\\ ran -p log",
    "git rebase --exec touch\\ ran HEAD",
    "git grep -Otouch main",
]


@pytest.fixture
def repo(project: Path) -> Path:
    for argv in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                 "commit", "-qm", "first"]):  # fmt: skip
        subprocess.run(["git", *argv], cwd=project, check=True, capture_output=True)
    return project


def settings(**values: object) -> Callable[[], ToolsSettings]:
    return lambda: ToolsSettings.model_validate(values)


@pytest.mark.parametrize("command", SMUGGLED)
async def test_a_listed_program_does_not_run_an_unlisted_one(
    repo: Path, workspace: Callable[[], ToolWorkspace], command: str
) -> None:
    out = await call(TerminalTool(workspace, settings()), command=command)
    assert out.is_error, out.content
    assert "terminal_allow_list" in out.content
    assert not (repo / "ran").exists() and not (repo / "src/ran").exists()


async def test_find_does_not_delete_and_git_does_not_clean(
    repo: Path, workspace: Callable[[], ToolWorkspace]
) -> None:
    (repo / "untracked.txt").write_text("mine\n")
    tool = TerminalTool(workspace, settings())
    deleted = await call(tool, command="find . -name untracked.txt -delete")
    cleaned = await call(tool, command="git clean -fd")
    assert deleted.is_error and "-delete deletes files" in deleted.content
    assert cleaned.is_error and "'git clean' is not run" in cleaned.content
    assert (repo / "untracked.txt").exists()


async def test_ordinary_uses_of_listed_programs_still_run(
    repo: Path, workspace: Callable[[], ToolWorkspace]
) -> None:
    tool = TerminalTool(workspace, settings())
    for command in ("git log --oneline -1", "git -C src status --short", "find . -name main.py",
                    "git --no-pager diff HEAD", "git config --get user.name"):  # fmt: skip
        out = await call(tool, command=command)
        assert not out.is_error or "exit code 1" in out.content, (command, out.content)
    assert "first" in (await call(tool, command="git log --oneline -1")).content


async def test_a_runner_runs_only_a_listed_program(
    repo: Path, workspace: Callable[[], ToolWorkspace]
) -> None:
    allow = ["timeout", "env", "xargs", "nice", "git", "ls"]
    tool = TerminalTool(workspace, settings(terminal_allow_list=allow))
    assert not (await call(tool, command="timeout 5 git status")).is_error
    assert not (await call(tool, command="nice -n 5 ls")).is_error
    for command in ("timeout 5 touch ran", "env touch ran", "xargs touch ran",
                    "env PATH=. git status", "timeout 5 git -c alias.x=!touch\\ ran x"):  # fmt: skip
        out = await call(tool, command=command)
        assert out.is_error and "terminal_allow_list" in out.content, (command, out.content)
    assert not (repo / "ran").exists()


async def test_shells_are_never_run_through_the_list_and_an_empty_list_checks_nothing(
    repo: Path, workspace: Callable[[], ToolWorkspace]
) -> None:
    listed = TerminalTool(workspace, settings(terminal_allow_list=["sh"]))
    out = await call(listed, command="sh -c 'touch ran'")
    assert out.is_error and "a shell runs whatever it is given" in out.content
    assert not (repo / "ran").exists()
    anything = TerminalTool(workspace, settings(terminal_allow_list=[]))
    assert not (await call(anything, command="touch ran")).is_error
    assert (repo / "ran").exists()
