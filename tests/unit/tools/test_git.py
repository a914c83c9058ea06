"""git_status, git_diff, git_log: read-only, confined, errors as tool errors."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from qodeassist_lsp.tools.git import GitDiffTool, GitLogTool, GitStatusTool
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.conftest import call

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.org", *args],
        cwd=project,
        check=True,
        capture_output=True,
    )


async def test_status_diff_and_log(workspace: Callable[[], ToolWorkspace], project: Path) -> None:
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "src/main.py", "README.md")
    git(project, "commit", "-q", "-m", "First commit")
    (project / "src/main.py").write_text("def main():\n    return 43\n")
    index = (project / ".git/index").stat().st_mtime_ns

    status = await call(GitStatusTool(workspace))
    assert not status.is_error
    assert status.content.splitlines()[:2] == ["## main", " M src/main.py"]

    diff = await call(GitDiffTool(workspace), path="src/main.py")
    assert "-    return 42\n+    return 43" in diff.content
    staged = await call(GitDiffTool(workspace), staged=True)
    assert staged.content == "(no output)"

    log = await call(GitLogTool(workspace), max_count=5)
    assert log.content.endswith("Ada: First commit")
    assert (project / ".git/index").stat().st_mtime_ns == index  # read-only: no index refresh


async def test_refusals(workspace: Callable[[], ToolWorkspace], project: Path) -> None:
    outside = await call(GitDiffTool(workspace), path="../outside.txt")
    assert outside.is_error and "outside" in outside.content
    not_a_repo = await call(GitLogTool(workspace))
    assert not_a_repo.is_error and "not a git repository" in not_a_repo.content.lower()
    bad = await call(GitLogTool(workspace), max_count=0)
    assert bad.is_error and "max_count" in bad.content
