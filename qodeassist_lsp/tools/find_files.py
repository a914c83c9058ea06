"""``find_files``: workspace files whose path matches a glob, ignored ones left out.

Patterns have ``.gitignore`` semantics (through ``pathspec``): ``*.py`` matches at any depth,
``src/**/*.ts`` is anchored at the folder searched, ``**`` spans folders.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final

from pathspec import GitIgnoreSpec
from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError
from qodeassist_lsp.tools.workspace import ToolWorkspace

MAX_RESULTS: Final = 200


class FindFilesArgs(ToolArguments):
    """Arguments of ``find_files``."""

    pattern: str = Field(
        min_length=1,
        description="Glob pattern, e.g. '*.py', 'src/**/*.ts', 'README*', 'test_*.py'.",
    )
    path: str = Field(default=".", description="Folder to search in; '.' is the project root.")


class FindFilesTool(KitTool[FindFilesArgs]):
    """Find workspace files by glob."""

    name = "find_files"
    description = (
        "Find project files whose path matches a glob pattern (gitignore style: '*.py' matches "
        "at any depth, 'src/**/*.ts' only under src). Returns matching paths relative to the "
        "project root, one per line."
    )
    permission = "read"
    arguments = FindFilesArgs

    async def call(self, args: FindFilesArgs, context: ToolContext) -> ToolOutput:
        """Return the matching paths."""
        try:
            spec = GitIgnoreSpec.from_lines([args.pattern])
        except ValueError as exc:
            raise ToolInputError(f"invalid glob pattern {args.pattern!r}: {exc}") from None
        workspace = self._workspace()
        folder = workspace.resolve(args.path, "folder")
        found = await asyncio.to_thread(_find, workspace, folder, spec)
        if not found:
            return ToolOutput(f"No file matches {args.pattern!r} under {workspace.shown(folder)}.")
        more = len(found) > MAX_RESULTS
        lines = [workspace.shown(p) for p in found[:MAX_RESULTS]]
        if more:
            lines.append(f"[more than {MAX_RESULTS} files match; narrow the pattern or the path]")
        return ToolOutput("\n".join(lines))


def _find(workspace: ToolWorkspace, folder: Path, spec: GitIgnoreSpec) -> list[Path]:
    found = []
    for path in workspace.walk(folder):
        if spec.match_file(path.relative_to(folder).as_posix()):
            found.append(path)
            if len(found) > MAX_RESULTS:
                break
    return found
