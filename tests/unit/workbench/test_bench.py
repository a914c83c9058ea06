"""`Workbench`: one composition of tools, edits, skills and chat, the same rules for every door."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.tools import ToolContext, ToolRegistry
from qodeassist_lsp.tools.edits.blocks import EditRefused
from qodeassist_lsp.workbench.bench import Workbench
from qodeassist_lsp.workbench.ports import Ports


@pytest.fixture
def bench(tmp_path: Path) -> Workbench:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    project = tmp_path / "project"
    project.mkdir()
    (project / ".qodeassistignore").write_text("secret.txt\n")
    (project / ".gitignore").write_text("build/\n")
    return Workbench(Runtime(config), Ports(folders=lambda: [project]))


def test_the_chat_tools_are_offered_behind_the_gate(bench: Workbench) -> None:
    runtime = bench.view
    assert isinstance(runtime, Runtime)
    bench.wire(runtime.contributors)
    registry = ToolRegistry()
    runtime.contributors.apply_to(registry, CHAT_ASSISTANT)
    names = {spec.name for spec in registry.specs()}
    assert {"memory_read", "memory_write", "read_file", "edit_file", "create_file"} <= names
    assert registry.gate is bench.gate is not None


@pytest.mark.parametrize(
    ("path", "listed_by"),
    [("secret.txt", ".qodeassistignore"), ("build/out.py", ".gitignore")],
)
async def test_an_ignored_file_is_not_created_and_the_message_names_the_ignore_file(
    bench: Workbench, path: str, listed_by: str
) -> None:
    with pytest.raises(EditRefused, match=rf"{path} is excluded by {listed_by}"):
        await bench.edits.propose("create", path, ToolContext("chat"), content="x = 1\n")
    assert not (bench.ports.folders()[0] / path).exists()


async def test_an_edit_that_breaks_the_syntax_is_flagged(bench: Workbench) -> None:
    output = await bench.edits.propose("create", "ok.py", ToolContext("chat"), content="def (:\n")
    assert "warning:" in str(output)


def test_the_chat_checks_mentions_against_the_qodeassistignore_of_its_folder(
    bench: Workbench,
) -> None:
    project = bench.ports.folders()[0]
    ignore = bench.qodeassist_ignore(project)
    assert ignore is not None and ignore.is_ignored(project / "secret.txt")
    assert bench.qodeassist_ignore(project) is ignore  # one filter per folder and file


def test_every_chat_of_the_process_counts_in_one_agent_pool(bench: Workbench) -> None:
    """ACP makes a chat service per session, HTTP beside an editor one more: one pool."""
    first = bench.chat_service(lambda _chat, _event: None)
    second = bench.chat_service(lambda _chat, _event: None, folders=lambda: [Path("/elsewhere")])
    assert first._pool is second._pool


def test_the_workbench_builds_each_chat_services_plan_runner(
    bench: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plan mode is composed with the chat, once, here: no chat service makes its own."""
    built: list[object] = []
    make = bench.plan_runner
    monkeypatch.setattr(bench, "plan_runner", lambda chats: built.append(chats) or make(chats))
    service = bench.chat_service(lambda _chat, _event: None)
    assert built == [service] and service.plans is not None
