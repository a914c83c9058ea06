from typing import Any

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, QUICK_REFACTOR
from qodeassist_lsp.core.tools import (
    ToolContext,
    ToolContributorRegistry,
    ToolOutput,
    ToolRegistry,
)
from qodeassist_lsp.wire.tools import ToolSpec


class Echo:
    permission = "read"
    spec = ToolSpec(
        "echo", "Echo the text", {"type": "object", "properties": {"t": {"type": "string"}}}
    )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(arguments["t"])


class Boom:
    permission = "read"
    spec = ToolSpec("boom", "Always fails")

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        raise RuntimeError("disk on fire")


async def test_execute_known_unknown_and_failing_tools() -> None:
    registry = ToolRegistry()
    contributors = ToolContributorRegistry()
    contributors.add(lambda r, _p: r.register(Echo()))
    contributors.add(lambda r, _p: r.register(Boom()))
    contributors.apply_to(registry, CHAT_ASSISTANT)
    assert [s.name for s in registry.specs()] == ["echo", "boom"]
    assert await registry.execute("echo", {"t": "hi"}) == ToolOutput("hi")
    assert await registry.execute("nope", {}) == ToolOutput("Error: Tool not found: nope", True)
    assert await registry.execute("boom", {}) == ToolOutput("Error: disk on fire", True)
    registry.unregister("boom")
    assert len(registry) == 1


class Refuser:
    """A gate that refuses every write and records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def check(self, tool: Any, arguments: dict[str, Any], context: ToolContext) -> str | None:
        self.asked.append((tool.spec.name, context.scope))
        return "writes are denied" if tool.permission == "write" else None


class Writer:
    permission = "write"
    spec = ToolSpec("write", "Writes")

    def __init__(self) -> None:
        self.ran = False

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        self.ran = True
        return ToolOutput("written")


async def test_the_gate_decides_before_a_tool_runs() -> None:
    gate = Refuser()
    contributors = ToolContributorRegistry()
    contributors.gate = gate
    writer = Writer()
    contributors.add(lambda r, _p: r.register(writer))
    contributors.add(lambda r, _p: r.register(Echo()))
    registry = ToolRegistry()
    contributors.apply_to(registry, CHAT_ASSISTANT)
    chat = ToolContext(scope="chat-1")
    assert await registry.execute("write", {}, chat) == ToolOutput("Error: writes are denied", True)
    assert not writer.ran
    assert await registry.execute("echo", {"t": "ok"}, chat) == ToolOutput("ok")
    assert gate.asked == [("write", "chat-1"), ("echo", "chat-1")]
    assert registry.permission_of("write") == "write"
    assert registry.permission_of("nope") == ""


async def test_contributors_learn_the_pipeline() -> None:
    contributors = ToolContributorRegistry()
    contributors.add(
        lambda r, pipeline: r.register(Echo() if pipeline is QUICK_REFACTOR else Writer())
    )
    registry = ToolRegistry()
    contributors.apply_to(registry, QUICK_REFACTOR)
    assert [s.name for s in registry.specs()] == ["echo"]


def test_cap_output_keeps_the_head_and_says_what_was_cut() -> None:
    from qodeassist_lsp.core.tools import TOOL_OUTPUT_CAP, cap_output

    assert cap_output("short") == "short"
    exact = "x" * TOOL_OUTPUT_CAP
    assert cap_output(exact) == exact
    text = "é" * TOOL_OUTPUT_CAP  # two bytes each: a character may not be cut in half
    cut = cap_output(text)
    head, note = cut.rsplit("\n", 1)
    assert note == f"[output cut: {TOOL_OUTPUT_CAP} of {2 * TOOL_OUTPUT_CAP} bytes shown]"
    assert head == "é" * (TOOL_OUTPUT_CAP // 2)
    assert cap_output("ab\ud800" * 10, cap=8).endswith("[output cut: 8 of 50 bytes shown]")
