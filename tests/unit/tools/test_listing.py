"""list_folder, find_files and search_text: ignored and VCS paths never show up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from qodeassist_lsp.tools.find_files import FindFilesTool
from qodeassist_lsp.tools.list_folder import ListFolderTool
from qodeassist_lsp.tools.search_text import MAX_MATCHES, SearchTextTool
from qodeassist_lsp.tools.workspace import ToolWorkspace
from tests.unit.tools.conftest import Buffers, call


async def test_list_folder_leaves_out_ignored_entries(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    (project / ".git").mkdir()
    out = await call(ListFolderTool(workspace))
    lines = out.content.splitlines()
    assert lines == [
        "Folder: . (4 entries)",
        "src/",
        ".gitignore",
        ".qodeassistignore",
        "README.md",
    ]
    outside = await call(ListFolderTool(workspace), path="..")
    assert outside.is_error and "outside" in outside.content


async def test_find_files_by_glob(workspace: Callable[[], ToolWorkspace], project: Path) -> None:
    (project / "src/util.py").write_text("")
    out = await call(FindFilesTool(workspace), pattern="*.py")
    assert out.content.splitlines() == ["src/main.py", "src/util.py"]  # not build/out.py
    anchored = await call(FindFilesTool(workspace), pattern="src/**/*.py", path=".")
    assert anchored.content.splitlines() == ["src/main.py", "src/util.py"]
    none = await call(FindFilesTool(workspace), pattern="*.rs")
    assert not none.is_error and "No file matches" in none.content
    empty = await call(FindFilesTool(workspace), pattern="")
    assert empty.is_error and "pattern" in empty.content


async def test_search_text_honours_both_ignore_files(
    workspace: Callable[[], ToolWorkspace], project: Path, buffers: Buffers
) -> None:
    out = await call(SearchTextTool(workspace), pattern=r"def main")
    assert out.content.splitlines() == ["1 matches for 'def main':", "src/main.py:1: def main():"]
    secret = await call(SearchTextTool(workspace), pattern="hunter2")
    assert "No match" in secret.content
    buffers.texts[project / "README.md"] = "# Demo\ndef main in the buffer\n"
    buffered = await call(SearchTextTool(workspace), pattern="DEF MAIN", glob="*.md")
    assert buffered.content.splitlines()[1:] == ["README.md:2: def main in the buffer"]
    bad = await call(SearchTextTool(workspace), pattern="(unclosed")
    assert bad.is_error and "invalid regular expression" in bad.content


async def test_search_text_stops_at_the_cap(
    workspace: Callable[[], ToolWorkspace], project: Path
) -> None:
    (project / "many.txt").write_text("hit\n" * (MAX_MATCHES * 3))
    (project / "blob.bin").write_bytes(b"hit\0" * 10)
    out = await call(SearchTextTool(workspace), pattern="hit")
    lines = out.content.splitlines()
    assert lines[0].startswith(f"{MAX_MATCHES}+ matches") and "stopped at" in lines[-1]
    assert not any("blob.bin" in line for line in lines)
