"""``config get | set | unset`` argument forms: ``--project`` is a scope flag that takes no value."""

from __future__ import annotations

from pathlib import Path

from tests.unit.cli.conftest import RunCli


def test_project_before_the_key_is_the_scope_not_a_folder(run_cli: RunCli, tmp_path: Path) -> None:
    # Issue 43: `--project [DIR]` swallowed the key ("unrecognized arguments" / all settings).
    code, _, err = run_cli("config", "set", "--project", "completion.mode", "manual")
    assert code == 0, err
    project_file = tmp_path / ".qodeassist" / "settings.toml"
    assert project_file.read_text(encoding="utf-8") == '[completion]\nmode = "manual"\n'
    code, out, err = run_cli("config", "get", "--project", "completion.mode")
    assert (code, out) == (0, "manual\n"), err
    code, _, err = run_cli("config", "unset", "--project", "completion.mode")
    assert code == 0, err
    assert "mode" not in project_file.read_text(encoding="utf-8")


def test_project_dir_names_another_project(run_cli: RunCli, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    code, _, err = run_cli(
        "config", "set", "--project", "--project-dir", str(other), "completion.mode", "manual"
    )
    assert code == 0, err
    assert (other / ".qodeassist" / "settings.toml").is_file()
    assert not (tmp_path / ".qodeassist").exists()
    code, out, _ = run_cli("config", "get", "completion.mode", "--project-dir", str(other))
    assert out == "manual\n"
    assert run_cli("config", "get", "completion.mode")[1] == "automatic\n"
