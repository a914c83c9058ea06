"""``memory_read`` / ``memory_write``: their classes, the kit's switches, secrets refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, QUICK_REFACTOR
from qodeassist_lsp.config.settings import ToolsSettings
from qodeassist_lsp.core.memory import Memory
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.tools.kit import KitSources, ToolKit
from qodeassist_lsp.tools.workspace import ToolWorkspace


def kit_with_memory(
    workspace: Callable[[], ToolWorkspace], memory: Memory, settings: ToolsSettings
) -> ToolRegistry:
    kit = ToolKit(KitSources(lambda: settings, workspace, memory=lambda: memory))
    registry = ToolRegistry()
    kit.contribute(registry, CHAT_ASSISTANT)
    return registry


async def test_write_then_read_through_the_registry(
    workspace: Callable[[], ToolWorkspace], tmp_path: Path
) -> None:
    memory = Memory(tmp_path / "data", tmp_path / "project/.qodeassist")
    registry = kit_with_memory(workspace, memory, ToolsSettings())
    assert registry.permission_of("memory_read") == "read"
    assert registry.permission_of("memory_write") == "write"
    written = await registry.execute("memory_write", {"text": "Deploy on Fridays is banned"})
    assert not written.is_error and "Remembered" in written.content
    assert [(e.text, e.scope, e.source) for e in memory.entries()] == [
        ("Deploy on Fridays is banned", "project", "tool")
    ]
    found = await registry.execute("memory_read", {"query": "friday deploy"})
    assert "Deploy on Fridays is banned" in found.content
    listed = await registry.execute("memory_read", {})
    assert "(project) Deploy on Fridays" in listed.content


async def test_a_secret_is_an_error_the_model_reads(
    workspace: Callable[[], ToolWorkspace], tmp_path: Path
) -> None:
    memory = Memory(tmp_path / "data", None)
    registry = kit_with_memory(workspace, memory, ToolsSettings())
    out = await registry.execute("memory_write", {"text": "sk-ant-abcdefghijklmnopqrstuvwx"})
    assert out.is_error and "looks like a secret" in out.content
    assert memory.entries() == []


def test_switches_and_refactor_leave_the_write_tool_out(
    workspace: Callable[[], ToolWorkspace], tmp_path: Path
) -> None:
    memory = Memory(tmp_path / "data", None)
    off = ToolsSettings.model_validate({"enabled": {"memory_write": False}})
    registry = kit_with_memory(workspace, memory, off)
    assert registry.permission_of("memory_write") == "" and registry.permission_of("memory_read")
    kit = ToolKit(KitSources(ToolsSettings, workspace, memory=lambda: memory))
    refactor = ToolRegistry()
    kit.contribute(refactor, QUICK_REFACTOR)
    assert refactor.permission_of("memory_write") == ""
