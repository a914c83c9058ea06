"""Confinement: symlinks followed, then containment in a workspace folder or an allowed root."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from qodeassist_lsp.config.confinement import (
    Confinement,
    NotARegularFile,
    OutsideAllowedRoots,
    PathRefused,
)
from qodeassist_lsp.config.settings_loader import (
    load_settings,
    project_settings_path,
    user_settings_path,
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ("project/src", "outside/dir", "extra"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "project/src/a.py").write_text("inside")
    (tmp_path / "outside/secret.txt").write_text("secret")
    (tmp_path / "outside/dir/deep.txt").write_text("deep")
    (tmp_path / "extra/ok.txt").write_text("ok")
    return tmp_path


def test_files_inside_the_workspace_resolve(tree: Path) -> None:
    roots = Confinement.of([tree / "project"])
    assert roots.for_read("src/a.py", tree / "project") == tree / "project/src/a.py"
    assert roots.for_read(tree / "project/src/a.py").read_text() == "inside"
    assert roots.contains(tree / "project/new.txt")


@pytest.mark.parametrize("relative", ["../outside/secret.txt", "src/../../outside/secret.txt"])
def test_dotdot_escapes_are_refused(tree: Path, relative: str) -> None:
    roots = Confinement.of([tree / "project"])
    with pytest.raises(
        OutsideAllowedRoots, match=r"is outside the workspace folders.*allowed_roots"
    ):
        roots.for_read(relative, tree / "project")
    with pytest.raises(OutsideAllowedRoots):
        roots.for_read(str(tree / "project" / relative))


def test_absolute_paths_outside_are_refused_naming_path_and_setting(tree: Path) -> None:
    roots = Confinement.of([tree / "project"])
    with pytest.raises(OutsideAllowedRoots) as caught:
        roots.for_read("/etc/passwd")
    message = str(caught.value)
    assert message.startswith("/etc/passwd is outside the workspace folders")
    assert "`allowed_roots` in [general]" in message and "a project's settings cannot" in message
    assert isinstance(caught.value, PermissionError)  # callers treating OSError as unreadable


def test_a_symlink_pointing_out_is_refused_with_its_target(tree: Path) -> None:
    os.symlink(tree / "outside/secret.txt", tree / "project/link.txt")
    roots = Confinement.of([tree / "project"])
    with pytest.raises(
        OutsideAllowedRoots, match=r"link\.txt \(it leads to .*outside/secret\.txt\)"
    ):
        roots.for_read(tree / "project/link.txt")


def test_a_file_under_a_symlinked_folder_is_refused(tree: Path) -> None:
    os.symlink(tree / "outside/dir", tree / "project/linked_dir")
    roots = Confinement.of([tree / "project"])
    with pytest.raises(OutsideAllowedRoots):
        roots.for_read("linked_dir/deep.txt", tree / "project")
    with pytest.raises(OutsideAllowedRoots):
        roots.for_write("linked_dir/new.txt", tree / "project")


def test_a_symlinked_workspace_folder_is_followed_too(tree: Path) -> None:
    os.symlink(tree / "project", tree / "alias")
    roots = Confinement.of([tree / "alias"])
    assert roots.for_read(tree / "project/src/a.py") == tree / "project/src/a.py"


def test_a_fifo_is_refused_as_a_fifo(tree: Path) -> None:
    os.mkfifo(tree / "project/pipe")
    roots = Confinement.of([tree / "project"])
    with pytest.raises(NotARegularFile, match="pipe is a FIFO, not a regular file"):
        roots.for_read(tree / "project/pipe")
    with pytest.raises(NotARegularFile, match="FIFO"):
        roots.for_write(tree / "project/pipe")


def test_a_device_is_refused_as_a_device() -> None:
    roots = Confinement.of([Path("/dev")])
    with pytest.raises(NotARegularFile, match="/dev/null is a device, not a regular file"):
        roots.for_read("/dev/null")
    with pytest.raises(OutsideAllowedRoots):
        Confinement.of([Path("/tmp")]).for_read("/dev/null")


def test_a_socket_and_a_directory_are_refused(tmp_path: Path) -> None:
    roots = Confinement.of([tmp_path])
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        with pytest.raises(NotARegularFile, match="is a socket"):
            roots.for_read(tmp_path / "s")
    with pytest.raises(NotARegularFile, match="is a directory"):
        roots.for_read(tmp_path)


def test_missing_files_are_missing_not_refused(tree: Path) -> None:
    roots = Confinement.of([tree / "project"])
    with pytest.raises(FileNotFoundError, match="no such file"):
        roots.for_read("nope.txt", tree / "project")
    assert roots.for_write("new.txt", tree / "project") == tree / "project/new.txt"


def test_an_allowed_extra_root_is_readable(tree: Path) -> None:
    roots = Confinement.of([tree / "project"], [str(tree / "extra")])
    assert roots.for_read(tree / "extra/ok.txt").read_text() == "ok"
    with pytest.raises(PathRefused):
        roots.for_read(tree / "outside/secret.txt")


def test_without_a_workspace_everything_is_refused(tree: Path) -> None:
    with pytest.raises(OutsideAllowedRoots, match=r"workspace folders \(none is open\)"):
        Confinement.of([]).for_read(tree / "project/src/a.py")


def test_a_prefix_is_not_containment(tree: Path) -> None:
    (tree / "project-other").mkdir()
    (tree / "project-other/x.txt").write_text("x")
    with pytest.raises(OutsideAllowedRoots):
        Confinement.of([tree / "project"]).for_read(tree / "project-other/x.txt")


def test_only_user_level_settings_add_roots(tmp_path: Path) -> None:
    config, project = tmp_path / "config", tmp_path / "project"
    project_settings_path(project).parent.mkdir(parents=True)
    config.mkdir()
    project_settings_path(project).write_text('[general]\nallowed_roots = ["/"]\n')
    settings, problems = load_settings(config, project, None)
    assert settings.general.allowed_roots == []
    assert any("general.allowed_roots may only be set" in p.message for p in problems)

    user_settings_path(config).write_text('[general]\nallowed_roots = ["~/notes", "/srv/docs"]\n')
    settings, _ = load_settings(config, project, None)
    assert settings.general.allowed_roots == ["~/notes", "/srv/docs"]
    # A project cannot replace the user's list either.
    settings, _ = load_settings(config, project, None)
    assert "/" not in settings.general.allowed_roots
    # The editor's settings are user-level.
    settings, _ = load_settings(config, project, {"general": {"allowedRoots": ["/opt/x"]}})
    assert settings.general.allowed_roots == ["/opt/x"]


def test_relative_allowed_roots_are_rejected(tmp_path: Path) -> None:
    user_settings_path(tmp_path).write_text('[general]\nallowed_roots = ["relative/dir"]\n')
    settings, problems = load_settings(tmp_path, None, None)
    assert settings.general.allowed_roots == []
    assert any("not an absolute path" in p.message for p in problems)
