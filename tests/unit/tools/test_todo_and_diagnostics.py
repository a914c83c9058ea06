"""todo (one list per chat) and diagnostics (asked of the editor)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from qodeassist_lsp.core.tools import ToolContext, ToolRegistry
from qodeassist_lsp.tools.diagnostics import Diagnostic, DiagnosticsTool, DiagnosticsUnavailable
from qodeassist_lsp.tools.todo import TodoTool
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.conftest import call


async def test_todo_lists_are_per_chat() -> None:
    registry = ToolRegistry()
    registry.register(TodoTool())

    async def todo(scope: str, **arguments: object) -> str:
        out = await registry.execute("todo", dict(arguments), ToolContext(scope=scope))
        return ("ERR " if out.is_error else "") + out.content

    assert await todo("a", operation="add", tasks=["read", "fix"]) == (
        "Todo (0/2 done):\n1. read\n2. fix"
    )
    assert await todo("a", operation="complete", ids=[1]) == "Todo (1/2 done):\n1. ~~read~~\n2. fix"
    assert await todo("b", operation="list") == "The todo list is empty."
    assert (await todo("a", operation="complete", ids=[7])).startswith("ERR Error: 'complete'")
    assert "operation" in await todo("a", operation="shred")


class Editor:
    def __init__(self, found: list[Diagnostic] | None) -> None:
        self.found = found
        self.asked: list[Path | None] = []

    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        self.asked.append(path)
        if self.found is None:
            raise DiagnosticsUnavailable("method not found")
        return self.found


async def test_diagnostics_formats_what_the_editor_reports(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    main = project / "src/main.py"
    editor = Editor(
        [
            Diagnostic(main, 2, 5, "warning", "unused value", "ruff"),
            Diagnostic(main, 1, 1, "error", "syntax error"),
            Diagnostic(project / "secrets/key.txt", 1, 1, "error", "leaked"),
            Diagnostic(project.parent / "outside.txt", 1, 1, "error", "elsewhere"),
        ]
    )
    out = await call(DiagnosticsTool(workspace, editor))
    assert out.content.splitlines() == [
        "1 errors, 1 other diagnostics:",
        "src/main.py:1:1: error: syntax error",
        "src/main.py:2:5: warning: unused value [ruff]",
    ]
    errors = await call(DiagnosticsTool(workspace, editor), path="src/main.py", severity="error")
    assert errors.content.splitlines()[1:] == ["src/main.py:1:1: error: syntax error"]
    assert editor.asked[-1] == main


async def test_an_editor_without_diagnostics_is_a_tool_error(
    workspace: Callable[[], ToolWorkspace],
) -> None:
    out = await call(DiagnosticsTool(workspace, Editor(None)))
    assert out.is_error and "the editor did not provide diagnostics" in out.content
