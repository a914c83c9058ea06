"""``mcp serve``'s tool kit: the same tools the editor's, ACP and HTTP chats get."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.cli.tool_kit import workbench_for
from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.tools import ToolRegistry


def test_the_kit_has_the_memory_tools(tmp_path: Path) -> None:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    registry = ToolRegistry()
    workbench_for(Runtime(config), tmp_path).kit().contribute(registry, CHAT_ASSISTANT)
    names = {spec.name for spec in registry.specs()}
    assert {"memory_read", "memory_write", "read_file"} <= names
