"""``ToolKit``: the built-in tools, registered on every session that uses tools.

``contribute`` is the ``core.tools.ToolContributor`` added to the runtime's contributor
registry: for each chat session it registers every tool switched on in ``[tools.enabled]``;
a quick refactor session gets the read-class ones only. Settings and the workspace are read at
call time (the contributor runs per session; a tool reads its settings per call), so a reload
or a new workspace folder applies to the next call without re-wiring anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from qodeassist_lsp.config.pipelines import PipelineSpec, ToolAccess
from qodeassist_lsp.config.settings import ToolsSettings
from qodeassist_lsp.core.memory import Memory
from qodeassist_lsp.core.tools import Tool, ToolRegistry
from qodeassist_lsp.tools.build import BuildTool
from qodeassist_lsp.tools.diagnostics import DiagnosticsSource, DiagnosticsTool
from qodeassist_lsp.tools.find_files import FindFilesTool
from qodeassist_lsp.tools.git import GitDiffTool, GitLogTool, GitStatusTool
from qodeassist_lsp.tools.list_folder import ListFolderTool
from qodeassist_lsp.tools.memory import MemoryReadTool, MemoryWriteTool
from qodeassist_lsp.tools.read_file import ReadFileTool
from qodeassist_lsp.tools.search_text import SearchTextTool
from qodeassist_lsp.tools.terminal import TerminalTool
from qodeassist_lsp.tools.todo import TodoTool
from qodeassist_lsp.tools.workspace import ToolWorkspace


@dataclass(frozen=True)
class KitSources:
    """Where the kit reads its settings and workspace from, and the editor's diagnostics."""

    settings: Callable[[], ToolsSettings]
    workspace: Callable[[], ToolWorkspace]
    diagnostics: DiagnosticsSource | None = None
    """None: no editor to ask (the CLI), so no ``diagnostics`` tool."""
    memory: Callable[[], Memory] | None = None
    """The persistent memory; None: no ``memory_read`` / ``memory_write`` tools."""


class ToolKit:
    """The built-in tools, one instance of each per server (the todo lists live here)."""

    def __init__(self, sources: KitSources) -> None:
        self._settings = sources.settings
        workspace = sources.workspace
        tools: list[Tool] = [
            ReadFileTool(workspace),
            ListFolderTool(workspace),
            FindFilesTool(workspace),
            SearchTextTool(workspace),
            GitStatusTool(workspace),
            GitDiffTool(workspace),
            GitLogTool(workspace),
            TodoTool(),
            TerminalTool(workspace, sources.settings),
            BuildTool(workspace, sources.settings),
        ]
        if sources.diagnostics is not None:
            tools.insert(4, DiagnosticsTool(workspace, sources.diagnostics))
        if sources.memory is not None:
            tools += [MemoryReadTool(sources.memory), MemoryWriteTool(sources.memory)]
        self.tools = tuple(tools)

    def available(self, pipeline: PipelineSpec) -> list[Tool]:
        """Return the tools a session of ``pipeline`` gets under the current settings."""
        settings = self._settings()
        enabled = settings.enabled
        chosen = []
        for tool in self.tools:
            name = tool.spec.name
            if not getattr(enabled, name, True):
                continue
            if pipeline.tool_access is ToolAccess.READ and tool.permission != "read":
                continue
            if name == "build" and not settings.build_command.strip():
                continue
            chosen.append(tool)
        return chosen

    def contribute(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        """Register the available tools on ``registry`` (the ``ToolContributor``)."""
        for tool in self.available(pipeline):
            registry.register(tool)
