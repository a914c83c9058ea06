"""`AcpHost`: the tools an ACP session's chat is offered."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.acp_agent.host import AcpHost
from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.tools import ToolRegistry


def test_the_kit_has_the_memory_tools(tmp_path: Path) -> None:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    host = AcpHost(config, permission_timeout=1.0)
    registry = ToolRegistry()
    host.runtime.contributors.apply_to(registry, CHAT_ASSISTANT)
    names = {spec.name for spec in registry.specs()}
    assert {"memory_read", "memory_write", "read_file"} <= names
