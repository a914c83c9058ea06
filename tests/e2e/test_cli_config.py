"""``qodeassist-lsp config get | set | unset``: the real CLI on real settings files."""

from __future__ import annotations

from pathlib import Path

from tests.support.workspace import Workspace, run_forked

SETTINGS = """\
# My settings: keep this comment.
[completion]
# when to complete
mode = "automatic"  # trailing comment
debounce_ms = 300

[logging]
level = "info"
"""


def test_config_set_keeps_comments_and_order_and_get_reads_it_back(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, "http://127.0.0.1:9")
    path = workspace.write("settings.toml", SETTINGS)

    result = workspace.run("config", "set", "completion.mode", "manual")

    assert result.returncode == 0, result.describe()
    assert path.read_text(encoding="utf-8") == SETTINGS.replace(
        'mode = "automatic"', 'mode = "manual"'
    )
    got = workspace.run("config", "get", "completion.mode")
    assert (got.returncode, got.stdout) == (0, "manual\n"), got.describe()


def test_config_set_refuses_an_invalid_value_and_leaves_the_file_alone(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, "http://127.0.0.1:9")
    path = workspace.write("settings.toml", SETTINGS)

    bad_value = workspace.run("config", "set", "completion.debounce_ms", "-5")
    unknown = workspace.run("config", "set", "completion.moed", "manual")

    assert bad_value.returncode == 1, bad_value.describe()
    assert "debounce_ms" in bad_value.error_lines[0]
    assert "0–10000" in bad_value.error_lines[0]
    assert unknown.returncode == 1
    assert "did you mean 'mode'" in unknown.error_lines[0]
    assert path.read_text(encoding="utf-8") == SETTINGS


def test_config_unset_and_the_project_scope(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, "http://127.0.0.1:9")
    path = workspace.write("settings.toml", SETTINGS)

    unset = workspace.run("config", "unset", "completion.debounce_ms")
    project = workspace.run("config", "set", "completion.lines_before", "7", "--project")
    refused = workspace.run("config", "set", "general.allowed_roots", '["/tmp"]', "--project")
    effective = workspace.run("config", "get", "completion.lines_before")

    assert unset.returncode == 0, unset.describe()
    assert "debounce_ms" not in path.read_text(encoding="utf-8")
    assert "# when to complete" in path.read_text(encoding="utf-8")
    assert project.returncode == 0, project.describe()
    project_file = workspace.project / ".qodeassist" / "settings.toml"
    assert project_file.read_text(encoding="utf-8") == "[completion]\nlines_before = 7\n"
    assert refused.returncode == 1
    assert "may only be set in the user settings file" in refused.error_lines[0]
    assert effective.stdout == "7\n", effective.describe()


def test_concurrent_config_set_commands_each_keep_their_key(tmp_path: Path) -> None:
    """Six ``config set`` processes at once, each a different key: none is lost."""
    workspace = Workspace(tmp_path, "http://127.0.0.1:9")
    path = workspace.write("settings.toml", SETTINGS)
    tools = ["read_file", "list_folder", "find_files", "search_text", "git_log", "todo"]
    jobs = [(workspace, ("config", "set", f"tools.enabled.{t}", "false")) for t in tools]

    results = run_forked(jobs, workers=6)

    assert [r.returncode for r in results] == [0] * len(tools), [r.describe() for r in results]
    text = path.read_text(encoding="utf-8")
    assert all(f"{tool} = false" in text for tool in tools), text
    assert text.startswith(SETTINGS)  # the comments and the other keys are kept
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []
