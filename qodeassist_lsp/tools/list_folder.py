"""``list_folder``: the entries of one workspace folder, ignored ones left out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final

from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments
from qodeassist_lsp.tools.workspace import SKIPPED_DIRS, ToolWorkspace

MAX_ENTRIES: Final = 500


class ListFolderArgs(ToolArguments):
    """Arguments of ``list_folder``."""

    path: str = Field(
        default=".", description="Folder path relative to the project root; '.' is the root."
    )


class ListFolderTool(KitTool[ListFolderArgs]):
    """List a folder of the workspace."""

    name = "list_folder"
    description = (
        "List the files and sub-folders of one project folder (not recursive). Folders end "
        "with '/'. Use '.' for the project root. To find files anywhere, use find_files."
    )
    permission = "read"
    arguments = ListFolderArgs

    async def call(self, args: ListFolderArgs, context: ToolContext) -> ToolOutput:
        """Return one entry per line."""
        workspace = self._workspace()
        folder = workspace.resolve(args.path, "folder")
        entries = await asyncio.to_thread(_entries, workspace, folder)
        shown = workspace.shown(folder)
        if not entries:
            return ToolOutput(f"Folder: {shown} (empty)")
        more = len(entries) - MAX_ENTRIES
        lines = entries[:MAX_ENTRIES] + ([f"[{more} more entries not shown]"] if more > 0 else [])
        return ToolOutput(f"Folder: {shown} ({len(entries)} entries)\n" + "\n".join(lines))


def _entries(workspace: ToolWorkspace, folder: Path) -> list[str]:
    dirs: list[str] = []
    files: list[str] = []
    for child in folder.iterdir():
        if child.name in SKIPPED_DIRS or workspace.ignore.ignored_by(child) is not None:
            continue
        (dirs if child.is_dir() else files).append(child.name)
    return [f"{d}/" for d in sorted(dirs)] + sorted(files)
