"""``build``: the user's ``[tools] build_command``, run in the first workspace folder.

Only offered when ``build_command`` is set (a user-level setting: a cloned project cannot choose
what runs). The output keeps its tail, where compilers put the summary and the last errors.
"""

from __future__ import annotations

import shlex

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError
from qodeassist_lsp.tools.process import run_program


class BuildArgs(ToolArguments):
    """``build`` takes no arguments."""


class BuildTool(KitTool[BuildArgs]):
    """Run the configured build command."""

    name = "build"
    description = (
        "Build the project with the command the user configured, and return its exit code "
        "and the end of its output (errors and warnings). Takes no arguments."
    )
    permission = "execute"
    arguments = BuildArgs

    async def call(self, args: BuildArgs, context: ToolContext) -> ToolOutput:
        """Run ``build_command``; a failed build is an error result."""
        settings = self._settings()
        command = settings.build_command.strip()
        if not command:
            raise ToolInputError("no build command is configured ([tools] build_command)")
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ToolInputError(f"[tools] build_command cannot be split ({exc})") from None
        workspace = self._workspace()
        root = workspace.root
        if root is None:
            raise ToolInputError("no workspace folder is open to build in")
        if workspace.runner is not None:  # the editor's terminal (ACP)
            finished = await workspace.runner(argv, root, settings.build_timeout_s)
        else:
            finished = await run_program(argv, root, settings.build_timeout_s, keep="tail")
        text = finished.report(command, settings.build_timeout_s, "tail")
        return ToolOutput(text, is_error=finished.timed_out or finished.exit_code != 0)
