"""The tools' one path resolver: folders, the user's allowed roots, refusals that say why."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.confinement import OutsideAllowedRoots, PathRefused
from qodeassist_lsp.tools.workspace import ToolWorkspace


def test_relative_paths_start_at_the_first_folder_and_show_per_folder(tmp_path: Path) -> None:
    one, two, extra = tmp_path / "one", tmp_path / "two", tmp_path / "extra"
    for folder in (one, two, extra):
        folder.mkdir()
        (folder / "f.txt").write_text("x")
    workspace = ToolWorkspace.of([one, two], allowed=[str(extra)])
    assert workspace.resolve("f.txt") == (one / "f.txt").resolve()
    assert workspace.shown(workspace.resolve(str(two / "f.txt"))) == "f.txt"
    allowed = workspace.resolve(str(extra / "f.txt"), "file")  # general.allowed_roots
    assert workspace.shown(allowed) == str(allowed)
    with pytest.raises(OutsideAllowedRoots, match="allowed_roots"):
        workspace.resolve(str(tmp_path / "elsewhere.txt"))


def test_without_a_folder_relative_paths_are_refused(tmp_path: Path) -> None:
    workspace = ToolWorkspace.of([])
    with pytest.raises(PathRefused, match="no workspace folder is open"):
        workspace.resolve("notes.txt")
    with pytest.raises(PathRefused, match="empty"):
        ToolWorkspace.of([tmp_path]).resolve("  ")
