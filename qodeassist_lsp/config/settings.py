"""The user-facing settings of ``settings.toml``: one typed, documented model per section.

Each key has a type, a default, a range or choice where one exists and a description; the loader
(``settings_loader``) validates key by key against these models so one bad value never discards
the rest of a file, and ``settings_reference.describe_settings`` turns the same models into the
reference in ``docs/settings.md``. The shared field types live in ``settings_types``. A feature's
own section (``[completion]``, ``[chat]``…) is declared beside the feature as a `SettingsSection`;
the host passes the registered ones to `Settings.with_sections`, and the feature reads its section
with `Settings.section`. Models are frozen: a ``Settings`` value is an immutable snapshot that a
reload replaces as a whole.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Final, Literal

from pydantic import BeforeValidator, Field, create_model, field_validator

from qodeassist_lsp.config.settings_types import (
    USER_ONLY_EXTRA,
    LogLevel,
    MultiLinePolicy,
    OutputHandler,
    S,
    Section,
    SettingsSection,
    lower_choice,
)

__all__ = [
    "DEFAULT_TERMINAL_ALLOW_LIST_POSIX",
    "DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS",
    "GeneralSettings",
    "LogLevel",
    "LoggingSettings",
    "McpSettings",
    "MultiLinePolicy",
    "OutputHandler",
    "PermissionPolicy",
    "ResilienceSettings",
    "RulesSettings",
    "Settings",
    "SettingsSection",
    "SkillsSettings",
    "ToolPermissions",
    "ToolSwitches",
    "ToolsSettings",
]


# --------------------------------------------------------------------------------------------
class GeneralSettings(Section):
    """``[general]``: switches that apply to every feature."""

    enabled: bool = Field(
        default=True,
        description="Serve completion, refactor and chat at all. Set `false` in a project's "
        "`.qodeassist/settings.toml` to switch QodeAssist off for that project only.",
    )
    allowed_roots: list[str] = Field(
        default_factory=list,
        description="Extra folders, besides the workspace folders, whose files requests may "
        "read (chat attachments, linked files, @-mentions, `read_file` in system prompts). "
        "Absolute paths; `~` is expanded; symlinks are followed before the check.",
        json_schema_extra=USER_ONLY_EXTRA,
    )

    @field_validator("allowed_roots")
    @classmethod
    def _absolute_roots(cls, value: list[str]) -> list[str]:
        """Reject relative roots: relative to what would depend on where the server started."""
        for item in value:
            if not os.path.isabs(os.path.expanduser(item.strip())):
                raise ValueError(f"{item!r} is not an absolute path")
        return [item.strip() for item in value]


# --------------------------------------------------------------------------------------------
class ToolSwitches(Section):
    """``[tools.enabled]``: one switch per built-in tool (all on by default)."""

    read_file: bool = Field(default=True, description="Read a file, or a range of its lines.")
    list_folder: bool = Field(default=True, description="List the entries of a folder.")
    find_files: bool = Field(default=True, description="Find files by glob pattern.")
    search_text: bool = Field(
        default=True, description="Search the project's files with a regular expression."
    )
    diagnostics: bool = Field(
        default=True, description="Ask the editor for the current errors and warnings."
    )
    git_status: bool = Field(default=True, description="`git status` of the project (read-only).")
    git_diff: bool = Field(default=True, description="`git diff` of the project (read-only).")
    git_log: bool = Field(default=True, description="`git log` of the project (read-only).")
    todo: bool = Field(default=True, description="A todo list per chat.")
    terminal: bool = Field(
        default=True, description="Run a command from `terminal_allow_list` (no shell)."
    )
    build: bool = Field(
        default=True, description="Run `build_command` (only offered when it is set)."
    )
    create_file: bool = Field(default=True, description="Create a file.")
    edit_file: bool = Field(
        default=True, description="Propose an edit to a file (see `auto_apply_file_edits`)."
    )
    delete_file: bool = Field(default=True, description="Delete a file.")
    load_skill: bool = Field(default=True, description="Load a skill's instructions.")
    memory_read: bool = Field(default=True, description="Search the persistent memory.")
    memory_write: bool = Field(default=True, description="Add an entry to the persistent memory.")


PermissionPolicy = Annotated[Literal["allow", "ask", "deny"], BeforeValidator(lower_choice)]
"""What happens when the model calls a tool of a permission class."""


class ToolPermissions(Section):
    """``[tools.permissions]``: the policy per permission class (user-level only)."""

    read: PermissionPolicy = Field(
        default="allow",
        description="Tools that read files and state (read, list, find, search, diagnostics, "
        "git status/diff/log, todo, load_skill): `allow`, `ask` or `deny`.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    write: PermissionPolicy = Field(
        default="ask",
        description="Tools that change files (create, edit, delete): `allow`, `ask` or `deny`.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    execute: PermissionPolicy = Field(
        default="ask",
        description="Tools that run programs (terminal, build): `allow`, `ask` or `deny`.",
        json_schema_extra=USER_ONLY_EXTRA,
    )


DEFAULT_TERMINAL_ALLOW_LIST_POSIX: Final = (
    "git", "ls", "cat", "grep", "find", "pwd", "echo", "head", "tail", "wc", "which", "file",
    "stat", "tree", "uname", "date", "whoami", "hostname",
)  # fmt: skip
"""Commands the ``terminal`` tool may run on Linux and macOS by default."""

DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS: Final = (
    "git", "dir", "type", "findstr", "where", "echo", "whoami", "hostname", "ver", "tree", "fc",
)  # fmt: skip
"""Commands the ``terminal`` tool may run on Windows by default."""


def _default_allow_list() -> list[str]:
    if sys.platform == "win32":
        return list(DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS)
    return list(DEFAULT_TERMINAL_ALLOW_LIST_POSIX)


class ToolsSettings(Section):
    """``[tools]``: what the model's tools may do."""

    auto_apply_file_edits: bool = Field(
        default=False,
        description="Apply `edit_file` proposals at once instead of waiting for apply/reject.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    max_tool_continuations: int = Field(
        default=30,
        ge=1,
        le=100,
        description="Tool-call rounds allowed in one answer before the model must stop.",
    )
    terminal_command_timeout_s: int = Field(
        default=30,
        ge=5,
        le=3600,
        description="Seconds a `terminal` command may run before its process group is killed.",
    )
    terminal_allow_list: list[str] = Field(
        default_factory=_default_allow_list,
        description="Executables the `terminal` tool may run (case-insensitive; no shell), "
        "also through a listed program's options (docs/tools.md). The default depends on the "
        "OS; an empty list allows every executable and turns the checks off.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    build_command: str = Field(
        default="",
        description="The command line the `build` tool runs in the first workspace folder (split "
        "like a shell would, but run without one); empty = no `build` tool.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    build_timeout_s: int = Field(
        default=600,
        ge=5,
        le=7200,
        description="Seconds `build_command` may run before it is killed.",
    )
    enabled: ToolSwitches = Field(
        default=ToolSwitches(),
        description="Per-tool switches, a `[tools.enabled]` table of tool name = bool.",
    )
    permissions: ToolPermissions = Field(
        default=ToolPermissions(),
        description="The policy per permission class, a `[tools.permissions]` table.",
    )

    @field_validator("terminal_allow_list")
    @classmethod
    def _no_blank_commands(cls, value: list[str]) -> list[str]:
        """Reject empty entries, which could never match and usually mean a typo."""
        if any(not item.strip() for item in value):
            raise ValueError("entries must be non-empty command names")
        return [item.strip() for item in value]


# --------------------------------------------------------------------------------------------
class McpSettings(Section):
    """``[mcp]``: the MCP client hub and the ``mcp serve`` server."""

    enable_clients: bool = Field(
        default=True,
        description="Start the MCP servers listed in `<config>/mcp.json` and "
        "`<workspace>/.qodeassist/mcp.json` and offer their tools to the model (a project's "
        "servers only once the user approved them).",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    client_extra_paths: list[str] = Field(
        default_factory=list,
        description="Extra directories searched for the commands of stdio MCP servers.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    client_connect_timeout_s: float = Field(
        default=15.0,
        ge=1,
        le=300,
        description="Seconds an MCP server may take to connect, initialise and list its tools.",
    )
    client_call_timeout_s: float = Field(
        default=60.0,
        ge=1,
        le=3600,
        description="Seconds one MCP tool call may take; then the model gets a tool error and "
        "the server is reconnected.",
    )
    server_port: int = Field(
        default=3456,
        ge=1,
        le=65535,
        description="Port of `qodeassist-lsp mcp serve --port` when no port is given "
        "(127.0.0.1 only).",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    server_allow: list[Literal["read", "write", "execute"]] = Field(
        default_factory=list,
        description="Permission classes `mcp serve` runs when `[tools]` says `ask` for them "
        "(nobody can be asked there, so `ask` is a refusal unless the class is listed). "
        "`deny` stays deny.",
        json_schema_extra=USER_ONLY_EXTRA,
    )


# --------------------------------------------------------------------------------------------
class SkillsSettings(Section):
    """``[skills]``: Agent Skills discovery."""

    enabled: bool = Field(
        default=True,
        description="Discover skills and offer them to chat (catalog, always-on skills, "
        "`/name` in a message, the `load_skill` tool).",
    )
    project_dirs: list[str] = Field(
        default_factory=lambda: [".qodeassist/skills", ".claude/skills"],
        description="Skill directories relative to the project root (entries escaping the "
        "project are dropped); searched first.",
    )
    global_dirs: list[str] = Field(
        default_factory=lambda: ["~/.claude/skills"],
        description="Further skill directories, searched after `<config>/skills` (always "
        "searched); `~` is expanded.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    catalog_budget_tokens: int = Field(
        default=2000,
        ge=100,
        le=100_000,
        description="Most tokens (about four characters each) the chat's skill catalog, the "
        "list of skill names and descriptions in the system prompt, may take; skills that do "
        "not fit are left out with a note. Always-on skills are not counted.",
    )


# --------------------------------------------------------------------------------------------
class MemorySettings(Section):
    """``[memory]``: the persistent memory offered to chat."""

    enabled: bool = Field(
        default=True,
        description="Put the relevant memory entries into the chat's system prompt.",
    )
    budget_tokens: int = Field(
        default=1000,
        ge=50,
        le=100_000,
        description="Most tokens (about four characters each) the memory layer of the chat's "
        "system prompt may take; the entries most similar to the message, then the newest, "
        "come first.",
    )


# --------------------------------------------------------------------------------------------
class RulesSettings(Section):
    """``[rules]``: the project's rules files in the chat and refactor system prompts."""

    agents_md: bool = Field(
        default=True,
        description="Read `AGENTS.md` files (the file's folder up to the workspace root).",
    )
    claude_md: bool = Field(
        default=True,
        description="Read `CLAUDE.md` files (the file's folder up to the workspace root).",
    )
    copilot_instructions: bool = Field(
        default=True,
        description="Read `.github/copilot-instructions.md` at the workspace root.",
    )
    qodeassist_rules: bool = Field(
        default=True,
        description="Read `.qodeassist/rules/*.md` (the file's folder up to the workspace root).",
    )
    max_file_chars: int = Field(
        default=16_000,
        ge=100,
        le=1_000_000,
        description="Most characters one rules file may put into the system prompt; the rest "
        "is cut with a visible marker.",
    )
    max_chars: int = Field(
        default=32_000,
        ge=100,
        le=1_000_000,
        description="Most characters all rules files together may put into the system prompt "
        "(about four per token); the files nearest to the file come first, the ones that do "
        "not fit are cut or left out with a visible marker.",
    )


# --------------------------------------------------------------------------------------------
class ResilienceSettings(Section):
    """``[resilience]``: the circuit breaker every provider instance has."""

    failure_threshold: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Failures in a row that are the provider's fault (no connection, a timeout, "
        "HTTP 5xx) after which its circuit opens: requests skip it (to an agent's `fallback`, "
        "or an empty completion at once) until `open_seconds` have passed.",
    )
    open_seconds: float = Field(
        default=60.0,
        ge=1,
        le=3600,
        description="Seconds an open circuit stays open; then one request is let through as a "
        "probe: its success closes the circuit, its failure opens it again.",
    )


# --------------------------------------------------------------------------------------------
class LoggingSettings(Section):
    """``[logging]``: what the server logs and where."""

    level: LogLevel = Field(
        default="warning",
        description="Least severe level logged (to stderr — the editor's log — and `log_file`). "
        "`QODEASSIST_LOG_LEVEL`, when set, wins.",
    )
    log_file: str = Field(
        default="",
        description="Also append logs to this file (`~` is expanded; a relative path is relative "
        "to `<config>`); empty = no log file.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    log_requests: bool = Field(
        default=False,
        description="Log request and response bodies (secrets redacted). Only takes effect at "
        '`level = "debug"` (`QODEASSIST_LOG_LEVEL=DEBUG` implies it).',
    )


# --------------------------------------------------------------------------------------------
class Settings(Section):
    """Everything in ``settings.toml``: the core sections here, the features' added by the host."""

    general: GeneralSettings = GeneralSettings()
    tools: ToolsSettings = ToolsSettings()
    mcp: McpSettings = McpSettings()
    skills: SkillsSettings = SkillsSettings()
    memory: MemorySettings = MemorySettings()
    rules: RulesSettings = RulesSettings()
    resilience: ResilienceSettings = ResilienceSettings()
    logging: LoggingSettings = LoggingSettings()

    @classmethod
    def with_sections(cls, sections: Sequence[SettingsSection[Any]]) -> type[Settings]:
        """Return the model that also has the features' ``sections`` (same model per list)."""
        return _with_sections(tuple(sections))

    def section(self, spec: SettingsSection[S]) -> S:
        """Return a feature's section; its defaults when this model was built without it."""
        value = getattr(self, spec.name, None)
        return value if isinstance(value, spec.model) else spec.model()


@cache
def _with_sections(sections: tuple[SettingsSection[Any], ...]) -> type[Settings]:
    if not sections:
        return Settings
    fields: dict[str, Any] = {spec.name: (spec.model, spec.model()) for spec in sections}
    return create_model("Settings", __base__=Settings, __doc__=Settings.__doc__, **fields)
