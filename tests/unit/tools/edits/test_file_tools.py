"""The file tools: write permission, argument checks, offered to chat only, switches honoured."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, QUICK_REFACTOR, PipelineSpec
from qodeassist_lsp.config.settings import ToolSwitches
from qodeassist_lsp.core.events import FileEditEvent, SessionEvent
from qodeassist_lsp.core.tools import ToolContext, ToolRegistry
from qodeassist_lsp.tools.edits.blocks import EditRefused
from qodeassist_lsp.tools.edits.checkpoints import CheckpointStore
from qodeassist_lsp.tools.edits.file_tools import edit_tools
from qodeassist_lsp.tools.edits.pending import EditManager, EditScope
from qodeassist_lsp.tools.edits.ports import NoEditor


def manager(root: Path) -> EditManager:
    scope = EditScope(lambda: Confinement.of([root]), lambda: root)
    return EditManager(CheckpointStore(root / ".cp"), NoEditor(), scope, lambda c, e: None)


def registry(
    root: Path, pipeline: PipelineSpec, switches: ToolSwitches | None = None
) -> ToolRegistry:
    tools = ToolRegistry()
    edit_tools(manager(root), lambda: switches)(tools, pipeline)
    return tools


def test_chat_gets_the_three_write_tools_and_refactor_none(tmp_path: Path):
    chat = registry(tmp_path, CHAT_ASSISTANT)
    assert [s.name for s in chat.specs()] == ["create_file", "edit_file", "delete_file"]
    assert {chat.permission_of(n) for n in ("create_file", "edit_file", "delete_file")} == {"write"}
    assert not registry(tmp_path, QUICK_REFACTOR)


def test_tools_switched_off_in_tools_enabled_are_not_offered(tmp_path: Path):
    switches = ToolSwitches(edit_file=False, create_file=False)
    assert [s.name for s in registry(tmp_path, CHAT_ASSISTANT, switches).specs()] == ["delete_file"]
    switches = ToolSwitches(delete_file=False)
    names = [s.name for s in registry(tmp_path, CHAT_ASSISTANT, switches).specs()]
    assert names == ["create_file", "edit_file"]


async def test_edit_file_takes_search_replace_text_and_reports_the_proposal(tmp_path: Path):
    (tmp_path / "m.py").write_text("a = 1\nb = 2\n")
    events: list[SessionEvent] = []
    out = await registry(tmp_path, CHAT_ASSISTANT).execute(
        "edit_file",
        {"path": "m.py", "edits": "<<<<<<< SEARCH\nb = 2\n=======\nb = 3\n>>>>>>> REPLACE"},
        ToolContext("chat", "req", "call", events.append),
    )
    assert not out.is_error and out.content.startswith("Proposed: change m.py")
    assert isinstance(events[0], FileEditEvent) and "+b = 3" in events[0].diff


async def test_malformed_arguments_are_tool_errors(tmp_path: Path):
    tools = registry(tmp_path, CHAT_ASSISTANT)
    cases = [
        ("edit_file", {"edits": []}, "no edit blocks"),
        ("edit_file", {"path": 3, "edits": [{"search": "", "replace": "x"}]}, '"path"'),
        ("create_file", {"path": "n.py", "content": 5}, '"content" must be a string'),
        ("delete_file", {}, '"path" (a string) is required'),
    ]
    for name, arguments, fragment in cases:
        out = await tools.execute(name, arguments, ToolContext("chat", "req", "call"))
        assert out.is_error and fragment in out.content, (name, out.content)


async def test_preview_shows_the_change_without_keeping_it_and_the_event_names_the_call(
    tmp_path: Path,
):
    from qodeassist_lsp.tools.edits.file_tools import preview_call

    (tmp_path / "m.py").write_text("a = 1\n")
    edits = {"path": "m.py", "edits": [{"search": "a = 1", "replace": "a = 2"}]}
    edit_manager = manager(tmp_path)
    path, old, new = await preview_call(edit_manager, "edit_file", edits) or ("", "", "")
    assert (path, old, new) == (tmp_path / "m.py", "a = 1\n", "a = 2\n")
    assert await preview_call(edit_manager, "create_file", {"path": "n.py", "content": "x"}) == (
        tmp_path / "n.py",
        None,
        "x",
    )
    with pytest.raises(EditRefused, match="outside"):
        await preview_call(
            edit_manager, "edit_file", {"path": "../out.py", "edits": edits["edits"]}
        )
    assert await preview_call(edit_manager, "read_file", {"path": "m.py"}) is None
    assert (tmp_path / "m.py").read_text() == "a = 1\n" and not (tmp_path / "n.py").exists()
    events: list[SessionEvent] = []
    tools = ToolRegistry()
    edit_tools(edit_manager)(tools, CHAT_ASSISTANT)
    await tools.execute("edit_file", edits, ToolContext("chat", "req", "call-7", events.append))
    assert isinstance(events[0], FileEditEvent) and events[0].call_id == "call-7"
    assert edit_manager.get(events[0].edit_id) is not None
