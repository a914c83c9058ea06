"""The ``create_file``, ``edit_file`` and ``delete_file`` tools (permission class ``write``).

Each tool checks its arguments and hands the change to the `EditManager`, which proposes it
to the user (or applies it with auto-apply). A refused change (a path outside the workspace or
ignored, a block that matches nowhere or twice, a binary file) is a tool error the model reads.
`edit_tools` is the contributor that offers them to chat sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.pipelines import PipelineSpec, ToolAccess
from qodeassist_lsp.config.settings import ToolSwitches
from qodeassist_lsp.core.tools import (
    PermissionClass,
    ToolContext,
    ToolContributor,
    ToolOutput,
    ToolRegistry,
)
from qodeassist_lsp.tools.edits.blocks import EditRefused, blocks_of
from qodeassist_lsp.tools.edits.pending import EditManager
from qodeassist_lsp.wire.tools import ToolSpec

_PATH = {
    "type": "string",
    "description": "The file's path, relative to the project root (or absolute inside it).",
}

EDIT_FILE_DESCRIPTION = (
    "Change an existing file with edit blocks. Read the file first. Each block's `search` "
    "must copy the current lines exactly, with their indentation, plus a few unchanged lines "
    "around the change so it matches one place; `replace` is what those lines become. Blocks "
    "apply in order. An empty `search` appends `replace` at the end of the file. `edits` may "
    "also be text of <<<<<<< SEARCH / ======= / >>>>>>> REPLACE blocks. The user reviews the "
    "change before it is applied; do not propose the same change twice."
)


class _FileTool:
    """What the three tools share: the manager and the write permission."""

    permission: PermissionClass = "write"
    spec: ToolSpec

    def __init__(self, manager: EditManager) -> None:
        self._manager = manager

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        """Hand the change to the manager; a refused change is an error for the model."""
        try:
            return await self._propose(arguments, context)
        except (EditRefused, OSError) as exc:
            return ToolOutput(f"Error: {exc}", is_error=True)

    async def _propose(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        raise NotImplementedError


def _path(arguments: dict[str, Any]) -> str:
    path = arguments.get("path", arguments.get("filepath", arguments.get("filename")))
    if not isinstance(path, str):
        raise EditRefused('"path" (a string) is required')
    return path


class CreateFileTool(_FileTool):
    """Create a new file with the given content."""

    spec = ToolSpec(
        "create_file",
        "Create a new file (and its folders) with the given content. Fails if the file "
        "exists: change existing files with edit_file. The user reviews the file first.",
        {
            "type": "object",
            "properties": {
                "path": _PATH,
                "content": {"type": "string", "description": "The whole content of the file."},
            },
            "required": ["path"],
        },
    )

    async def _propose(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        content = arguments.get("content", "")
        if not isinstance(content, str):
            raise EditRefused('"content" must be a string')
        return await self._manager.propose("create", _path(arguments), context, content=content)


class EditFileTool(_FileTool):
    """Change an existing file with edit blocks."""

    spec = ToolSpec(
        "edit_file",
        EDIT_FILE_DESCRIPTION,
        {
            "type": "object",
            "properties": {
                "path": _PATH,
                "edits": {
                    "type": "array",
                    "description": "The edit blocks, applied in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "search": {
                                "type": "string",
                                "description": "Current lines to replace, copied exactly.",
                            },
                            "replace": {"type": "string", "description": "Their new text."},
                        },
                        "required": ["search", "replace"],
                    },
                },
            },
            "required": ["path", "edits"],
        },
    )

    async def _propose(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        blocks = blocks_of(arguments)
        return await self._manager.propose("edit", _path(arguments), context, blocks=blocks)


class DeleteFileTool(_FileTool):
    """Delete a file."""

    spec = ToolSpec(
        "delete_file",
        "Delete a file of the project. The user reviews the deletion first.",
        {"type": "object", "properties": {"path": _PATH}, "required": ["path"]},
    )

    async def _propose(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return await self._manager.propose("delete", _path(arguments), context)


async def preview_call(
    manager: EditManager, name: str, arguments: dict[str, Any]
) -> tuple[Path, str | None, str | None] | None:
    """Return (path, old text, new text) the file tool ``name`` would give; None if it cannot.

    Nothing is kept: the ACP host shows this diff in the permission question before the call.
    Raises `EditRefused` when the tool would refuse the call (a path outside the workspace, a
    block that matches nothing), so the host refuses it without asking.
    """
    try:
        if name == "create_file":
            content = arguments.get("content", "")
            text = content if isinstance(content, str) else ""
            return await manager.preview("create", _path(arguments), content=text)
        if name == "edit_file":
            return await manager.preview("edit", _path(arguments), blocks=blocks_of(arguments))
        if name == "delete_file":
            return await manager.preview("delete", _path(arguments))
    except OSError:
        return None
    return None


def edit_tools(
    manager: EditManager, switches: Callable[[], ToolSwitches | None] = lambda: None
) -> ToolContributor:
    """Return the contributor offering the file tools to pipelines with full tool access."""

    def contribute(registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        if pipeline.tool_access is not ToolAccess.ALL:
            return
        enabled = switches()
        for tool in (CreateFileTool(manager), EditFileTool(manager), DeleteFileTool(manager)):
            if enabled is None or getattr(enabled, tool.spec.name, True):
                registry.register(tool)

    return contribute
