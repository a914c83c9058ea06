"""``terminal``: one command of the allow list, run without a shell inside the workspace.

The command line is split like a POSIX shell would (quotes, escapes) but run directly, so
``;``, ``|`` or ``$(…)`` are plain arguments, never shell syntax. The executable must be on
``[tools] terminal_allow_list`` (case-insensitive, by the name as given; an empty list allows
any), and so must every program it would run (``command_rules`` reads the argv: ``find -exec``,
``git -c``, ``timeout CMD``…). No pager or editor runs (``TERMINAL_ENV``).
``terminal_command_timeout_s`` bounds it; output is capped (see ``process``).
"""

from __future__ import annotations

import shlex

from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError
from qodeassist_lsp.tools.command_rules import TERMINAL_ENV, checked_argv
from qodeassist_lsp.tools.process import run_program

MAX_COMMAND_CHARS = 4096


class TerminalArgs(ToolArguments):
    """Arguments of ``terminal``."""

    command: str = Field(
        min_length=1,
        max_length=MAX_COMMAND_CHARS,
        description="The command line, e.g. 'ls -la src' or 'git log -5'. No shell: pipes, "
        "redirections, ';' and '&&' do not work.",
    )
    cwd: str = Field(
        default=".", description="Folder to run in, relative to the project root. Default: '.'."
    )


class TerminalTool(KitTool[TerminalArgs]):
    """Run an allowed command."""

    name = "terminal"
    description = (
        "Run one command in the project folder and return its exit code and output (stdout "
        "and stderr together). Only allowed programs run; there is no shell, so no pipes, "
        "redirections or '&&'. The user may be asked to approve it."
    )
    permission = "execute"
    arguments = TerminalArgs

    async def call(self, args: TerminalArgs, context: ToolContext) -> ToolOutput:
        """Run the command; a non-zero exit or a timeout is an error result."""
        try:
            argv = shlex.split(args.command)
        except ValueError as exc:
            raise ToolInputError(f"cannot split the command line ({exc})") from None
        if not argv:
            raise ToolInputError("the command is empty")
        settings = self._settings()
        argv = checked_argv(argv, settings.terminal_allow_list)
        workspace = self._workspace()
        cwd = workspace.resolve(args.cwd, "folder")
        timeout = settings.terminal_command_timeout_s
        finished = await (workspace.runner or run_program)(argv, cwd, timeout, env=TERMINAL_ENV)
        text = finished.report(args.command, timeout, "head")
        return ToolOutput(text, is_error=finished.timed_out or finished.exit_code != 0)
