"""`HttpHost`: the tools its chats are offered when no editor wired them."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.http_api.host import HttpHost, Surroundings


async def test_the_kit_has_the_memory_tools(tmp_path: Path) -> None:
    config = load_configuration(ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root()))
    runtime = Runtime(config)
    host = HttpHost(Surroundings(source=runtime, folders=lambda: [tmp_path], status=dict))  # type: ignore[arg-type]
    host._wire(runtime)
    registry = ToolRegistry()
    runtime.contributors.apply_to(registry, CHAT_ASSISTANT)
    names = {spec.name for spec in registry.specs()}
    assert {"memory_read", "memory_write", "read_file"} <= names
    await runtime.aclose()
