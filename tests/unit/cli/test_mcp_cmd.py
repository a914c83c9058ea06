"""``mcp serve``'s tool kit: the same tools the editor's, ACP and HTTP chats get."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.cli.tool_kit import connected_hub, workbench_for
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


async def test_mcp_list_closes_the_hub_and_the_runtime_it_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[Runtime] = []
    close = Runtime.aclose

    async def recorded(runtime: Runtime) -> None:
        closed.append(runtime)
        await close(runtime)

    monkeypatch.setattr(Runtime, "aclose", recorded)
    monkeypatch.chdir(tmp_path)
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    async with connected_hub(config) as hub:
        assert hub.status()["servers"] == []
        assert closed == []
    assert len(closed) == 1
