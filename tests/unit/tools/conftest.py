"""A workspace folder for tool tests, with the real ignore files and an outside neighbour."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.context.ignore import FolderIgnores, IgnoreFilter
from qodeassist_lsp.core.tools import Tool, ToolContext, ToolOutput, ToolRegistry
from qodeassist_lsp.tools.workspace import ToolWorkspace


class Buffers:
    """Open buffers by real path."""

    def __init__(self) -> None:
        self.texts: dict[Path, str] = {}

    def text_of(self, path: Path) -> str | None:
        return self.texts.get(path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src/main.py").write_text("def main():\n    return 42\n")
    (root / "README.md").write_text("# Demo\n")
    (root / ".qodeassistignore").write_text("secrets/\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "secrets").mkdir()
    (root / "secrets/key.txt").write_text("TOKEN=hunter2\n")
    (root / "build").mkdir()
    (root / "build/out.py").write_text("def main(): pass\n")
    (root / "debug.log").write_text("def main log\n")
    (tmp_path / "outside.txt").write_text("not yours\n")
    return root


@pytest.fixture
def buffers() -> Buffers:
    return Buffers()


@pytest.fixture
def workspace(project: Path, buffers: Buffers) -> Callable[[], ToolWorkspace]:
    filters = [IgnoreFilter(project, file_name=n) for n in (".qodeassistignore", ".gitignore")]
    view = ToolWorkspace.of([project], ignore=FolderIgnores(filters), buffers=buffers)
    return lambda: view


async def call(tool: Tool, **arguments: Any) -> ToolOutput:
    """Run ``tool`` the way a session does: through a registry (errors become outputs)."""
    registry = ToolRegistry()
    registry.register(tool)
    return await registry.execute(tool.spec.name, arguments, ToolContext(scope="chat-1"))
