from typing import Any

from qodeassist_lsp.core.tools import ToolContributorRegistry, ToolOutput, ToolRegistry
from qodeassist_lsp.wire.tools import ToolSpec


class Echo:
    spec = ToolSpec(
        "echo", "Echo the text", {"type": "object", "properties": {"t": {"type": "string"}}}
    )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(arguments["t"])


class Boom:
    spec = ToolSpec("boom", "Always fails")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        raise RuntimeError("disk on fire")


async def test_execute_known_unknown_and_failing_tools() -> None:
    registry = ToolRegistry()
    contributors = ToolContributorRegistry()
    contributors.add(lambda r: r.register(Echo()))
    contributors.add(lambda r: r.register(Boom()))
    contributors.apply_to(registry)
    assert [s.name for s in registry.specs()] == ["echo", "boom"]
    assert await registry.execute("echo", {"t": "hi"}) == ToolOutput("hi")
    assert await registry.execute("nope", {}) == ToolOutput("Error: Tool not found: nope", True)
    assert await registry.execute("boom", {}) == ToolOutput("Error: disk on fire", True)
    registry.unregister("boom")
    assert len(registry) == 1
