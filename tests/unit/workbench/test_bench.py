"""`Workbench`: one composition of tools, edits, skills and chat, the same rules for every door."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.tools import ToolContext, ToolOutput, ToolRegistry
from qodeassist_lsp.tools.edits.blocks import EditRefused
from qodeassist_lsp.tools.permissions import (
    ALLOW_FOR_CHAT,
    RUNNING_CALL,
    NotAsked,
    PermissionCall,
)
from qodeassist_lsp.wire.tools import ToolSpec
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


def test_the_open_documents_ignore_rule_follows_an_edited_qodeassistignore(
    bench: Workbench,
) -> None:
    project = bench.ports.folders()[0]
    ignored = bench.ignored_file()
    secret, kept = str(project / "secret.txt"), str(project / "kept.py")
    assert ignored(secret) and not ignored(kept)
    (project / ".qodeassistignore").write_text("kept.py\n")
    bench.qodeassist_ignore(project).reload()  # as after ``check_interval_s``
    assert ignored(kept) and not ignored(secret)


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


class _Run:
    permission = "execute"
    spec = ToolSpec("terminal", "run", {"type": "object"})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput("ran")


class _CallAsker:
    """A door's asker that sees the call (as ACP's): allows for the chat, or will not ask."""

    def __init__(self, refuse: str | None = None) -> None:
        self.calls: list[PermissionCall] = []
        self.refuse = refuse

    async def ask_call(self, call: PermissionCall, actions: Sequence[str]) -> str | None:
        self.calls.append(call)
        if self.refuse is not None:
            raise NotAsked(self.refuse)
        return ALLOW_FOR_CHAT


async def test_the_one_gate_asks_the_doors_asker_and_remembers_each_chat(tmp_path: Path) -> None:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    asker = _CallAsker()
    bench = Workbench(Runtime(config), Ports(folders=lambda: [tmp_path], asker=asker))
    assert isinstance(bench.view, Runtime)
    bench.wire(bench.view.contributors)
    assert bench.view.contributors.gate is bench.gate  # one gate, built by the workbench
    context = ToolContext("chat-a", call_id="call-1")
    assert await bench.gate.check(_Run(), {"command": "ls"}, context) is None
    [call] = asker.calls
    assert call.context is context and call.question.endswith("$ ls")
    assert call.setting == '[tools.permissions] execute = "ask"'
    assert RUNNING_CALL.get() == "call-1"  # what a client's terminal shows its output in
    assert await bench.gate.check(_Run(), {}, ToolContext("chat-a")) is None  # remembered
    assert len(asker.calls) == 1
    asker.refuse = "the file is ignored. The user was not asked"
    refusal = await bench.gate.check(_Run(), {}, ToolContext("chat-b"))  # another chat asks
    assert refusal == "terminal was not run: the file is ignored. The user was not asked"


async def test_a_chat_served_by_another_door_is_asked_there(tmp_path: Path) -> None:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    editor, http = _CallAsker(), _CallAsker()
    bench = Workbench(Runtime(config), Ports(folders=lambda: [tmp_path], asker=editor))
    bench.gate.serve("http-chat", http)
    assert await bench.gate.check(_Run(), {}, ToolContext("http-chat")) is None
    assert (len(editor.calls), len(http.calls)) == (0, 1)
    bench.gate.release("http-chat")  # its "Allow for this chat" stays the chat's
    assert await bench.gate.check(_Run(), {}, ToolContext("http-chat")) is None
    assert (len(editor.calls), len(http.calls)) == (0, 1)
