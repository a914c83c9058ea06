"""Writing settings.toml: keys checked, values validated, comments kept, bad files untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.settings_writer import (
    SettingsFile,
    SettingsWriteError,
    format_value,
    parse_key,
    parse_value,
    settings_path,
)
from qodeassist_lsp.lsp.sections import SETTINGS_MODEL


def test_parse_key_accepts_dotted_and_camel_case_leaf_keys() -> None:
    assert parse_key("completion.mode", SETTINGS_MODEL) == ("completion", "mode")
    assert parse_key("completion.debounceMs", SETTINGS_MODEL) == ("completion", "debounce_ms")
    assert parse_key("tools.enabled.read_file", SETTINGS_MODEL)[:2] == ("tools", "enabled")


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("completion", "is a section"),
        ("completion.mode.x", "has no sub-keys"),
        ("complete.mode", "did you mean 'completion'"),
        ("", "not a settings key"),
    ],
)
def test_parse_key_refuses_what_is_not_a_leaf_setting(key: str, message: str) -> None:
    with pytest.raises(SettingsWriteError, match=message):
        parse_key(key, SETTINGS_MODEL)


def test_values_from_the_command_line_are_toml_or_else_strings() -> None:
    assert parse_value("true") is True
    assert parse_value("12") == 12
    assert parse_value('["a", "b"]') == ["a", "b"]
    assert parse_value("manual") == "manual"
    assert format_value(["a"]) == '["a"]'
    assert format_value("manual") == "manual"


def test_a_new_file_and_a_new_section_are_created(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "settings.toml"
    SettingsFile(path, "user", SETTINGS_MODEL).update(
        {"chat.autoCompress": False, "logging.level": "debug"}
    )
    assert SettingsFile(path, "user", SETTINGS_MODEL).values() == {
        "chat": {"auto_compress": False},
        "logging": {"level": "debug"},
    }


def test_invalid_toml_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[completion\nmode = 1\n", encoding="utf-8")
    with pytest.raises(SettingsWriteError, match="invalid TOML"):
        SettingsFile(path, "user", SETTINGS_MODEL).update({"completion.mode": "manual"})
    assert path.read_text(encoding="utf-8") == "[completion\nmode = 1\n"


def test_a_refused_value_writes_nothing_even_beside_a_valid_change(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[completion]\nmode = 'manual' # mine\n", encoding="utf-8")
    with pytest.raises(SettingsWriteError, match="multi_line") as caught:
        SettingsFile(path, "user", SETTINGS_MODEL).update(
            {"completion.mode": "automatic", "completion.multi_line": 3}
        )
    assert "Nothing was written" in str(caught.value)
    assert path.read_text(encoding="utf-8") == "[completion]\nmode = 'manual' # mine\n"
    assert not [p for p in tmp_path.iterdir() if p.name != "settings.toml"]  # no temp file left


def test_unset_of_a_missing_key_is_harmless(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    SettingsFile(path, "user", SETTINGS_MODEL).update({"completion.mode": None})
    assert path.read_text(encoding="utf-8") == ""


def test_the_project_scope_needs_a_project(tmp_path: Path) -> None:
    assert settings_path("user", tmp_path, None) == tmp_path / "settings.toml"
    assert settings_path("project", tmp_path, tmp_path / "p").parts[-2:] == (
        ".qodeassist",
        "settings.toml",
    )
    with pytest.raises(SettingsWriteError, match="no project"):
        settings_path("project", tmp_path, None)


TOOL_NAMES = [
    "read_file",
    "list_folder",
    "find_files",
    "search_text",
    "diagnostics",
    "git_status",
    "git_diff",
    "git_log",
    "todo",
    "terminal",
    "build",
    "create_file",
    "edit_file",
    "delete_file",
    "load_skill",
]


def _set_in_a_process(path: str, key: str, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    SettingsFile(Path(path), "user", SETTINGS_MODEL).update({key: False})


def test_concurrent_writers_in_separate_processes_lose_no_key(tmp_path: Path) -> None:
    """Each process sets a different key at the same moment: every key is in the file after."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    path = tmp_path / "settings.toml"
    path.write_text("# mine\n[completion]\nmode = 'manual'\n", encoding="utf-8")
    start = context.Barrier(len(TOOL_NAMES))
    keys = [f"tools.enabled.{name}" for name in TOOL_NAMES]
    workers = [
        context.Process(target=_set_in_a_process, args=(str(path), key, start)) for key in keys
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * len(workers)
    written = SettingsFile(path, "user", SETTINGS_MODEL).values()
    assert written["tools"]["enabled"] == dict.fromkeys(TOOL_NAMES, False)
    assert written["completion"] == {"mode": "manual"}
    # The lock leaves nothing behind in the user's folder: only the settings file itself.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]
