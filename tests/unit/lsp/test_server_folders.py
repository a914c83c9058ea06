"""The server's workspace folders: computed once per change, yet never stale."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.workspace import Workspace

from qodeassist_lsp.lsp.server import QodeAssistServer


def test_the_folders_follow_a_folder_added_and_removed(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    server = QodeAssistServer()
    first = types.WorkspaceFolder(uri=one.as_uri(), name="one")
    server.protocol._workspace = Workspace(one.as_uri(), workspace_folders=[first])
    assert server.workspace_folders() == [one]
    server.workspace_folders().append(tmp_path)  # a caller's list is its own
    assert server.workspace_folders() == [one]
    server.workspace.add_folder(types.WorkspaceFolder(uri=two.as_uri(), name="two"))
    assert server.workspace_folders() == [one, two]
    server.workspace.remove_folder(one.as_uri())
    assert server.workspace_folders() == [two]
