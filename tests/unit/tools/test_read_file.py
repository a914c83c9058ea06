"""read_file: ranges, buffers, and every refusal a tool error the model reads."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from qodeassist_lsp.tools.read_file import MAX_READ_BYTES, ReadFileTool
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.conftest import Buffers, call


async def test_reads_a_file_with_a_header(workspace: Callable[[], ToolWorkspace]) -> None:
    out = await call(ReadFileTool(workspace), path="src/main.py")
    assert not out.is_error
    assert out.content == "File: src/main.py (lines 1-2 of 2)\n\ndef main():\n    return 42\n"


async def test_reads_a_range(workspace: Callable[[], ToolWorkspace], project: Path) -> None:
    (project / "many.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await call(ReadFileTool(workspace), path="many.txt", start_line=10, end_line=12)
    assert out.content == "File: many.txt (lines 10-12)\n\nline 10\nline 11\nline 12\n"
    past = await call(ReadFileTool(workspace), path="many.txt", start_line=500)
    assert past.is_error and "past the end" in past.content


async def test_an_open_buffer_wins_over_the_disk(
    workspace: Callable[[], ToolWorkspace], project: Path, buffers: Buffers
) -> None:
    buffers.texts[project / "src/main.py"] = "unsaved\n"
    out = await call(ReadFileTool(workspace), path="src/main.py")
    assert out.content == "File: src/main.py (open buffer) (lines 1-1 of 1)\n\nunsaved\n"


async def test_outside_the_workspace_is_refused(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    out = await call(ReadFileTool(workspace), path="../outside.txt")
    assert out.is_error and "outside the workspace folders" in out.content
    assert "allowed_roots" in out.content
    os.symlink(project.parent / "outside.txt", project / "link.txt")
    linked = await call(ReadFileTool(workspace), path="link.txt")
    assert linked.is_error and "it leads to" in linked.content
    absolute = await call(ReadFileTool(workspace), path="/etc/passwd")
    assert absolute.is_error and "outside" in absolute.content


async def test_ignored_files_are_refused(workspace: Callable[[], ToolWorkspace]) -> None:
    out = await call(ReadFileTool(workspace), path="secrets/key.txt")
    assert out.is_error and ".qodeassistignore" in out.content and "hunter2" not in out.content
    log = await call(ReadFileTool(workspace), path="debug.log")
    assert log.is_error and ".gitignore" in log.content


async def test_binary_and_huge_files_are_refused(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    (project / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    out = await call(ReadFileTool(workspace), path="image.png")
    assert out.is_error and "binary" in out.content
    (project / "huge.txt").write_text(("y" * 99 + "\n") * (MAX_READ_BYTES // 50))
    huge = await call(ReadFileTool(workspace), path="huge.txt")
    assert huge.is_error and "start_line and end_line" in huge.content
    part = await call(ReadFileTool(workspace), path="huge.txt", start_line=1, end_line=5000)
    assert not part.is_error and "[cut at" in part.content
    assert len(part.content) < MAX_READ_BYTES + 200


async def test_malformed_arguments_are_a_tool_error(
    workspace: Callable[[], ToolWorkspace],
) -> None:
    missing = await call(ReadFileTool(workspace))
    assert missing.is_error and "path" in missing.content and "invalid arguments" in missing.content
    wrong = await call(ReadFileTool(workspace), path="src/main.py", start_line="first")
    assert wrong.is_error and "start_line" in wrong.content
    folder = await call(ReadFileTool(workspace), path="src")
    assert folder.is_error and "is a folder" in folder.content
    gone = await call(ReadFileTool(workspace), path="nope.py")
    assert gone.is_error and "no such file" in gone.content


async def test_a_fifo_is_refused_not_read(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    os.mkfifo(project / "pipe")
    out = await call(ReadFileTool(workspace), path="pipe")
    assert out.is_error and "not a regular file" in out.content


class EditorReads:
    """An editor that reads files for the tools (an ACP client with ``fs.readTextFile``)."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.asked: list[Path] = []

    async def read_text(self, path: Path) -> str | None:
        self.asked.append(path)
        return self.texts.get(path)


async def test_an_editor_that_reads_files_is_asked_after_the_buffers(project: Path) -> None:
    main = (project / "src/main.py").resolve()
    editor = EditorReads({main: "from the editor\n"})
    view = ToolWorkspace.of([project], editor=editor)
    out = await call(ReadFileTool(lambda: view), path="src/main.py")
    assert out.content == "File: src/main.py (open buffer) (lines 1-1 of 1)\n\nfrom the editor\n"
    readme = await call(ReadFileTool(lambda: view), path="README.md")
    assert readme.content.endswith("# Demo\n") and editor.asked == [
        main,
        main.parent.parent / "README.md",
    ]
