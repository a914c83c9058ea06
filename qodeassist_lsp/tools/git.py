"""``git_status``, ``git_diff``, ``git_log``: the repository's state, read-only.

``git`` runs as a program (no shell) with what could write or run other programs switched off:
no optional locks (status does not refresh the index), no pager, no external diff or textconv
drivers, no credential prompt. Paths are confined like every tool path and passed after ``--``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import A, KitTool, ToolArguments, ToolInputError
from qodeassist_lsp.tools.process import run_program

GIT_TIMEOUT_S: Final = 30.0
_ENV: Final = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


class _GitTool(KitTool[A]):
    """Runs one read-only git command in the workspace."""

    async def _git(self, args: list[str], path: str) -> ToolOutput:
        workspace = self._workspace()
        if path.strip() in ("", "."):
            root = workspace.root
            if root is None:
                raise ToolInputError("no workspace folder is open")
            cwd, spec = root, []
        else:
            target = workspace.resolve(path)
            cwd = target if target.is_dir() else target.parent
            spec = ["--", str(target)]
        argv = ["git", "--no-pager", "-c", "core.fsmonitor=false", *args, *spec]
        finished = await run_program(argv, Path(cwd), GIT_TIMEOUT_S, env=_ENV)
        if finished.timed_out or finished.exit_code != 0:
            return ToolOutput(finished.report(" ".join(argv[3:]), GIT_TIMEOUT_S, "head"), True)
        text = finished.output.strip()
        if finished.dropped:
            text += f"\n[{finished.dropped} more bytes not shown; narrow it with `path`]"
        return ToolOutput(text or "(no output)")


class GitStatusArgs(ToolArguments):
    """Arguments of ``git_status``."""

    path: str = Field(default=".", description="Limit to this file or folder. Default: '.'.")


class GitStatusTool(_GitTool[GitStatusArgs]):
    """``git status`` (short form, with the branch)."""

    name = "git_status"
    description = (
        "Show the git status of the project: the branch and the changed, staged and untracked "
        "files (short format: 'XY path', X = staged, Y = not staged)."
    )
    arguments = GitStatusArgs

    async def call(self, args: GitStatusArgs, context: ToolContext) -> ToolOutput:
        """Run ``git status --short --branch``."""
        return await self._git(["status", "--short", "--branch"], args.path)


class GitDiffArgs(ToolArguments):
    """Arguments of ``git_diff``."""

    path: str = Field(default=".", description="Limit to this file or folder. Default: '.'.")
    staged: bool = Field(default=False, description="Show staged changes instead of unstaged ones.")


class GitDiffTool(_GitTool[GitDiffArgs]):
    """``git diff`` (unified, no external drivers)."""

    name = "git_diff"
    description = (
        "Show the uncommitted changes of the project as a unified diff (set `staged` for the "
        "staged ones). Limit it to a file or folder with `path`."
    )
    arguments = GitDiffArgs

    async def call(self, args: GitDiffArgs, context: ToolContext) -> ToolOutput:
        """Run ``git diff``."""
        staged = ["--cached"] if args.staged else []
        command = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", *staged]
        return await self._git(command, args.path)


class GitLogArgs(ToolArguments):
    """Arguments of ``git_log``."""

    max_count: int = Field(default=10, ge=1, le=200, description="Commits to show. Default: 10.")
    path: str = Field(default=".", description="Only commits touching this file or folder.")


class GitLogTool(_GitTool[GitLogArgs]):
    """``git log`` (one block per commit)."""

    name = "git_log"
    description = (
        "Show the latest commits of the project (hash, date, author, subject), newest first. "
        "Limit it with `max_count` and `path`."
    )
    arguments = GitLogArgs

    async def call(self, args: GitLogArgs, context: ToolContext) -> ToolOutput:
        """Run ``git log``."""
        command = [
            "log",
            "--no-color",
            f"--max-count={args.max_count}",
            "--date=short",
            "--format=%h %ad %an: %s",
        ]
        return await self._git(command, args.path)
