"""The permission gate: allow / deny / ask per class, "Allow for this chat" per chat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qodeassist_lsp.config.settings import ToolPermissions
from qodeassist_lsp.core.tools import ToolContext, ToolOutput, ToolRegistry
from qodeassist_lsp.tools.permissions import ACTIONS, PermissionGate
from qodeassist_lsp.wire.tools import ToolSpec


class Probe:
    """A tool that counts its runs."""

    def __init__(self, name: str, permission: Any) -> None:
        self.spec = ToolSpec(name, "probe")
        self.permission = permission
        self.runs = 0

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        self.runs += 1
        return ToolOutput("ran")


class Asker:
    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.questions: list[tuple[str, Sequence[str]]] = []

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        self.questions.append((question, actions))
        return self.answers.pop(0)


def registry(policy: dict[str, str], asker: Asker | None, *tools: Probe) -> ToolRegistry:
    permissions = ToolPermissions.model_validate(policy)
    out = ToolRegistry(PermissionGate(lambda: permissions, asker))
    for tool in tools:
        out.register(tool)
    return out


async def test_defaults_allow_reads_and_ask_for_the_rest() -> None:
    read, run = Probe("read_file", "read"), Probe("terminal", "execute")
    asker = Asker("Deny")
    tools = registry({}, asker, read, run)
    assert (await tools.execute("read_file", {}, ToolContext("c1"))).content == "ran"
    denied = await tools.execute("terminal", {"command": "ls"}, ToolContext("c1"))
    assert denied.is_error and "the user denied it" in denied.content and run.runs == 0
    [(question, actions)] = asker.questions
    assert actions == ACTIONS == ("Allow once", "Allow for this chat", "Deny")
    assert question.split("\n")[1:] == ["$ ls"]  # the command line, not JSON


async def test_allow_once_asks_again_allow_for_this_chat_does_not() -> None:
    run = Probe("terminal", "execute")
    asker = Asker("Allow once", "Allow for this chat", "Deny")
    tools = registry({}, asker, run)
    for _ in range(3):
        await tools.execute("terminal", {}, ToolContext("chat-a"))
    assert run.runs == 3 and len(asker.questions) == 2  # the third call was allowed for chat-a
    other = await tools.execute("terminal", {}, ToolContext("chat-b"))
    assert other.is_error and len(asker.questions) == 3  # another chat is asked again


async def test_deny_never_asks_and_no_answer_or_no_asker_means_deny() -> None:
    write = Probe("edit_file", "write")
    asker = Asker(None)
    denying = registry({"write": "deny"}, asker, write)
    out = await denying.execute("edit_file", {}, ToolContext("c"))
    assert out.is_error and '[tools.permissions] write = "deny"' in out.content
    assert asker.questions == [] and write.runs == 0
    silent = await registry({}, asker, write).execute("edit_file", {}, ToolContext("c"))
    assert silent.is_error and "did not answer" in silent.content
    nobody = await registry({}, None, write).execute("edit_file", {}, ToolContext("c"))
    assert nobody.is_error and "no editor to ask" in nobody.content and write.runs == 0
    allowed = registry({"write": "ALLOW"}, None, write)
    assert (await allowed.execute("edit_file", {}, ToolContext("c"))).content == "ran"
