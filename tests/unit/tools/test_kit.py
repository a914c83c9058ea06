"""The kit's contributor: switches, the refactor's read-only set, build only when set."""

from __future__ import annotations

from collections.abc import Callable

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, QUICK_REFACTOR, PipelineSpec
from qodeassist_lsp.config.settings import ToolsSettings
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.tools.kit import KitSources, ToolKit
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.test_todo_and_diagnostics import Editor

READ = [
    "read_file", "list_folder", "find_files", "search_text", "diagnostics",
    "git_status", "git_diff", "git_log", "todo",
]  # fmt: skip


def names(kit: ToolKit, pipeline: PipelineSpec) -> list[str]:
    registry = ToolRegistry()
    kit.contribute(registry, pipeline)
    return [spec.name for spec in registry.specs()]


def test_chat_gets_every_enabled_tool_refactor_the_read_ones(
    workspace: Callable[[], ToolWorkspace],
) -> None:
    current = ToolsSettings()
    kit = ToolKit(KitSources(lambda: current, workspace, Editor([])))
    assert names(kit, CHAT_ASSISTANT) == [*READ, "terminal"]  # no build_command, no build
    assert names(kit, QUICK_REFACTOR) == READ
    current = ToolsSettings.model_validate(
        {"build_command": "make", "enabled": {"terminal": False, "git_log": False}}
    )
    chat = names(kit, CHAT_ASSISTANT)  # settings are read per session
    assert "build" in chat and "terminal" not in chat and "git_log" not in chat


def test_without_an_editor_there_is_no_diagnostics_tool(
    workspace: Callable[[], ToolWorkspace],
) -> None:
    kit = ToolKit(KitSources(ToolsSettings, workspace))
    assert "diagnostics" not in names(kit, CHAT_ASSISTANT)


def test_every_tool_has_a_schema_small_models_can_follow(
    workspace: Callable[[], ToolWorkspace],
) -> None:
    kit = ToolKit(KitSources(ToolsSettings, workspace, Editor([])))
    for tool in kit.tools:
        spec = tool.spec
        assert len(spec.description) > 60, spec.name
        schema = spec.schema()
        assert schema["type"] == "object" and "title" not in schema
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{spec.name}.{name}"
            assert "title" not in prop and "default" not in prop
