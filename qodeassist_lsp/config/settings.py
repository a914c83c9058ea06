"""The user-facing settings of ``settings.toml``: one typed, documented model per section.

Each key has a type, a default, a range or choice where one exists and a description; the loader
(``settings_loader``) validates key by key against these models so one bad value never discards
the rest of a file, and ``describe_settings`` turns the same models into the reference in
``docs/settings.md``. Models are frozen: a ``Settings`` value is an immutable snapshot that a
reload replaces as a whole.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import types
import typing
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

__all__ = [
    "DEFAULT_CUSTOM_LANGUAGES",
    "DEFAULT_TERMINAL_ALLOW_LIST_POSIX",
    "DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS",
    "USER_ONLY",
    "ChatSettings",
    "CompletionMode",
    "CompletionSettings",
    "ConnectTimeout",
    "CustomLanguage",
    "CustomLanguageEntry",
    "FirstByteTimeout",
    "GeneralSettings",
    "LogLevel",
    "LoggingSettings",
    "McpSettings",
    "MultiLinePolicy",
    "OutputHandler",
    "RefactorSettings",
    "RequestTimeout",
    "ResilienceSettings",
    "SettingInfo",
    "Settings",
    "SkillsSettings",
    "ToolSwitches",
    "ToolsSettings",
    "allowed_text",
    "default_text",
    "describe_settings",
    "is_user_only",
    "type_name",
]

USER_ONLY: Final = "user_only"
"""``json_schema_extra`` flag: the key widens what the server may touch, so a project's own
``.qodeassist/settings.toml`` (which arrives with a cloned repository) may not set it."""

_USER_ONLY_EXTRA: Final[dict[str, Any]] = {USER_ONLY: True}


def _lower(value: object) -> object:
    """Make enum-like strings case-insensitive (``"Manual"`` and ``"DEBUG"`` are accepted)."""
    return value.lower() if isinstance(value, str) else value


CompletionMode = Annotated[Literal["automatic", "manual"], BeforeValidator(_lower)]
"""When completions are requested: while typing, or only when explicitly invoked."""
MultiLinePolicy = Annotated[Literal["always", "never", "smart"], BeforeValidator(_lower)]
"""Whether a completion may span several lines."""
OutputHandler = Annotated[Literal["auto", "force", "raw"], BeforeValidator(_lower)]
"""How model output is post-processed before it becomes a suggestion."""
LogLevel = Annotated[Literal["error", "warning", "info", "debug"], BeforeValidator(_lower)]
"""The least severe log level that is written."""


class _Section(BaseModel):
    """Common configuration of every settings model."""

    # strict: TOML and JSON both carry real types, so "30" for a number is a mistake to report,
    # not to guess at.
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


ConnectTimeout = Annotated[
    float,
    Field(
        ge=0.1,
        le=300,
        description="Seconds to wait for the TCP/TLS connection to the provider.",
    ),
]
"""Connection timeout of a feature's provider requests."""
FirstByteTimeout = Annotated[
    float,
    Field(
        ge=0,
        le=3600,
        description="Seconds to wait for the first byte of the answer after sending the request "
        "(covers model loading on local servers). 0 = no limit.",
    ),
]
"""Time-to-first-byte timeout of a feature's provider requests."""
RequestTimeout = Annotated[
    float,
    Field(
        ge=0,
        le=3600,
        description="Inactivity timeout: abort when the provider sends nothing for this many "
        "seconds while streaming. 0 = no limit.",
    ),
]
"""Streaming inactivity timeout of a feature's provider requests."""


# --------------------------------------------------------------------------------------------
class GeneralSettings(_Section):
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
        json_schema_extra=_USER_ONLY_EXTRA,
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
class CustomLanguage(_Section):
    """One extra language for the completion output handler (fence tags and comment prefix)."""

    name: str = Field(min_length=1, description="Language name.")
    comment_prefix: str = Field(
        min_length=1, description="Line comment prefix used for prose outside code fences."
    )
    model_names: list[str] = Field(
        default_factory=list, description="Fence tags models use for the language."
    )
    extensions: list[str] = Field(
        default_factory=list,
        description="File extensions (without dot) or exact file names of the language.",
    )


def _parse_custom_language(value: object) -> object:
    """Accept the original plugin's ``"name,prefix,model names,extensions"`` strings as well."""
    if not isinstance(value, str):
        return value
    parts = [part.strip() for part in value.split(",")]
    if len(parts) != 4:
        raise ValueError(
            f"{value!r} is not 'name,comment_prefix,model names,extensions' "
            "(4 comma-separated fields; lists inside a field are space-separated)"
        )
    name, prefix, models, extensions = parts
    return {
        "name": name,
        "comment_prefix": prefix,
        "model_names": models.split(),
        "extensions": extensions.split(),
    }


CustomLanguageEntry = Annotated[CustomLanguage, BeforeValidator(_parse_custom_language)]
"""A ``custom_languages`` item: a table, or the original's one-line string form."""

DEFAULT_CUSTOM_LANGUAGES: Final = (
    CustomLanguage(
        name="cmake", comment_prefix="#", model_names=["cmake"], extensions=["CMakeLists.txt"]
    ),
    CustomLanguage(
        name="qmake", comment_prefix="#", model_names=["qmake"], extensions=["pro", "pri"]
    ),
)
"""Languages the original plugin adds on top of its built-in table."""


class CompletionSettings(_Section):
    """``[completion]``: when inline completions are requested and what context they carry."""

    auto_completion: bool = Field(
        default=True,
        description='Offer completions while typing. `false` behaves like `mode = "manual"`.',
    )
    mode: CompletionMode = Field(
        default="automatic",
        description="`automatic`: complete while typing; `manual`: only when the editor "
        "explicitly asks (invoked trigger, e.g. a hotkey) — avoids paid-API costs.",
    )
    debounce_ms: int = Field(
        default=350,
        ge=0,
        le=10000,
        description="Quiet time after the last keystroke before an automatic request is sent; "
        "the upper bound of the delay when `adaptive_debounce` is on.",
    )
    adaptive_debounce: bool = Field(
        default=True,
        description="Adapt the delay to your typing rhythm: about three times your average gap "
        "between keystrokes (so fast typists wait less), minus the time already passed, clamped "
        "between `debounce_min_ms` and `debounce_ms`.",
    )
    debounce_min_ms: int = Field(
        default=100,
        ge=0,
        le=10000,
        description="Lower bound of the adaptive delay (never above `debounce_ms`).",
    )
    char_threshold: int = Field(
        default=1,
        ge=0,
        le=10,
        description="Characters to type within `typing_interval_ms` before an automatic request "
        "(smart triggers may fire earlier).",
    )
    ignore_whitespace_in_char_count: bool = Field(
        default=True, description="Do not count whitespace towards `char_threshold`."
    )
    typing_interval_ms: int = Field(
        default=1200,
        ge=500,
        le=5000,
        description="Window in which typed characters are counted for `char_threshold`.",
    )
    smart_context_trigger: bool = Field(
        default=True,
        description="Skip requests inside an identifier or right after `.`/`->`/`::`, and "
        "request at once on a fresh indented line or after `{ ( , = [ ; : >`.",
    )
    multi_line: MultiLinePolicy = Field(
        default="smart",
        description="`always`: allow multi-line suggestions; `never`: stop at the first line "
        "break; `smart`: single line when the cursor is mid-line, multi-line otherwise.",
    )
    lines_before: int = Field(
        default=50, ge=0, le=100000, description="Lines before the cursor sent as prefix."
    )
    lines_after: int = Field(
        default=30, ge=0, le=100000, description="Lines after the cursor sent as suffix."
    )
    read_full_file: bool = Field(
        default=False,
        description="Send the whole file as prefix/suffix (ignores the line/token limits).",
    )
    max_context_tokens: int = Field(
        default=0,
        ge=0,
        le=2_000_000,
        description="Token budget alternative to `lines_before`/`lines_after`: when > 0, "
        "prefix and suffix lines are added around the cursor until this many estimated tokens.",
    )
    prefix_ratio: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="Share of `max_context_tokens` given to the prefix (the rest goes to the "
        "suffix).",
    )
    skip_license_header: bool = Field(
        default=True,
        description="Leave a leading copyright/licence comment block out of the prefix.",
    )
    use_recent_changes: bool = Field(
        default=True,
        description="Add recently changed lines of other open documents to the context.",
    )
    max_changes_cache_size: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="Distinct recently changed lines remembered per document.",
    )
    use_open_files_context: bool = Field(
        default=False,
        description="Add the content of every other open, non-ignored document to the context "
        "(large prompts; slower and costlier).",
    )
    output_handler: OutputHandler = Field(
        default="auto",
        description="Post-processing of model output: `auto` processes it only when a line "
        "starts with a code fence, `force` always processes it, `raw` uses the text as is. "
        "Processing keeps fenced code and turns prose into comments (see `drop_prose`).",
    )
    drop_prose: bool = Field(
        default=False,
        description="When processing, drop prose outside code fences instead of turning it "
        "into comments.",
    )
    connect_timeout_s: ConnectTimeout = 5.0
    first_byte_timeout_s: FirstByteTimeout = 10.0
    request_timeout_s: RequestTimeout = 30.0
    time_budget_ms: int = Field(
        default=5000,
        ge=0,
        le=600000,
        description="Hard wall-clock budget for an automatic completion request; on expiry the "
        "complete lines streamed so far are returned. Invoked (manual) requests are bounded by "
        "the timeouts only. 0 = no budget.",
    )
    max_items_invoked: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Suggestions to offer when completion is explicitly invoked (automatic "
        "triggers always get one).",
    )
    typed_ahead_cache: bool = Field(
        default=True,
        description="Reuse a suggestion while you type its first characters instead of "
        "sending a new request.",
    )
    custom_languages: list[CustomLanguageEntry] = Field(
        default_factory=lambda: list(DEFAULT_CUSTOM_LANGUAGES),
        description="Extra languages for the output handler: tables with `name`, "
        "`comment_prefix`, `model_names`, `extensions`, or the original's "
        '`"name,prefix,models,extensions"` strings. Replaces the default list.',
    )


# --------------------------------------------------------------------------------------------
class ChatSettings(_Section):
    """``[chat]``: chat sessions, history and compression."""

    link_open_files: bool = Field(
        default=False,
        description="Link every open (non-ignored) document to the chat; its current content is "
        "re-sent with every message.",
    )
    autosave: bool = Field(default=True, description="Save the chat history after every answer.")
    history_dir: str = Field(
        default="",
        description="Where chat histories are stored; empty = `<data dir>/chat_history`.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    auto_compress: bool = Field(
        default=False,
        description="Summarise the chat into a new one before sending once it reaches "
        "`auto_compress_threshold` tokens (needs a `chat_compression` agent).",
    )
    auto_compress_threshold: int = Field(
        default=40000,
        ge=1000,
        le=10_000_000,
        description="Estimated tokens at which `auto_compress` kicks in.",
    )
    connect_timeout_s: ConnectTimeout = 10.0
    first_byte_timeout_s: FirstByteTimeout = 300.0
    request_timeout_s: RequestTimeout = 120.0


# --------------------------------------------------------------------------------------------
class RefactorSettings(_Section):
    """``[refactor]``: quick refactor requests."""

    lines_before: int = Field(
        default=50, ge=0, le=100000, description="Lines of context before the selection."
    )
    lines_after: int = Field(
        default=30, ge=0, le=100000, description="Lines of context after the selection."
    )
    read_full_file: bool = Field(
        default=False, description="Send the whole file as context (ignores the line limits)."
    )
    use_open_files: bool = Field(
        default=False, description="Add the content of the other open documents to the context."
    )
    default_instruction: str = Field(
        default="Refactor the code to improve its quality and maintainability.",
        min_length=1,
        description="Instruction used when a refactor is requested without one.",
    )
    connect_timeout_s: ConnectTimeout = 10.0
    first_byte_timeout_s: FirstByteTimeout = 120.0
    request_timeout_s: RequestTimeout = 120.0


# --------------------------------------------------------------------------------------------
class ToolSwitches(_Section):
    """``[tools.enabled]``: one switch per built-in tool (all on by default)."""

    list_project_files: bool = Field(default=True, description="List the project's files.")
    find_file: bool = Field(default=True, description="Find a file by name or path fragment.")
    read_file: bool = Field(default=True, description="Read a file.")
    search_project: bool = Field(default=True, description="Search the project's text.")
    create_new_file: bool = Field(default=True, description="Create an empty file.")
    edit_file: bool = Field(
        default=True, description="Propose an edit to a file (see `auto_apply_file_edits`)."
    )
    get_issues_list: bool = Field(default=True, description="List current diagnostics.")
    execute_terminal_command: bool = Field(
        default=True, description="Run a command from `terminal_allow_list`."
    )
    todo_tool: bool = Field(default=True, description="Per-chat todo list.")
    read_original_history: bool = Field(
        default=True, description="Read the chat a compressed chat was made from."
    )
    load_skill: bool = Field(default=True, description="Load a skill's instructions.")


DEFAULT_TERMINAL_ALLOW_LIST_POSIX: Final = (
    "git", "ls", "cat", "grep", "find", "pwd", "echo", "head", "tail", "wc", "which", "file",
    "stat", "tree", "uname", "date", "whoami", "hostname",
)  # fmt: skip
"""Commands ``execute_terminal_command`` may run on Linux and macOS by default."""

DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS: Final = (
    "git", "dir", "type", "findstr", "where", "echo", "whoami", "hostname", "ver", "tree", "fc",
)  # fmt: skip
"""Commands ``execute_terminal_command`` may run on Windows by default."""


def _default_allow_list() -> list[str]:
    if sys.platform == "win32":
        return list(DEFAULT_TERMINAL_ALLOW_LIST_WINDOWS)
    return list(DEFAULT_TERMINAL_ALLOW_LIST_POSIX)


class ToolsSettings(_Section):
    """``[tools]``: what the model's tools may do."""

    allow_access_outside_project: bool = Field(
        default=False,
        description="Let file tools read and write outside the project directory.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    auto_apply_file_edits: bool = Field(
        default=False,
        description="Apply `edit_file` proposals at once instead of waiting for apply/reject.",
        json_schema_extra=_USER_ONLY_EXTRA,
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
        description="Seconds a terminal command may run before it is killed.",
    )
    terminal_allow_list: list[str] = Field(
        default_factory=_default_allow_list,
        description="Executables `execute_terminal_command` may run (case-insensitive; no "
        "shell). The default depends on the OS.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    enabled: ToolSwitches = Field(
        default=ToolSwitches(),
        description="Per-tool switches, a `[tools.enabled]` table of tool name = bool.",
    )

    @field_validator("terminal_allow_list")
    @classmethod
    def _no_blank_commands(cls, value: list[str]) -> list[str]:
        """Reject empty entries, which could never match and usually mean a typo."""
        if any(not item.strip() for item in value):
            raise ValueError("entries must be non-empty command names")
        return [item.strip() for item in value]


# --------------------------------------------------------------------------------------------
class McpSettings(_Section):
    """``[mcp]``: the built-in MCP server and the MCP client hub."""

    enable_server: bool = Field(
        default=False,
        description="Expose the tool kit as an MCP server (Streamable HTTP on 127.0.0.1).",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    server_port: int = Field(
        default=3456,
        ge=1,
        le=65535,
        description="Port of the MCP server.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    enable_clients: bool = Field(
        default=False,
        description="Connect to the MCP servers listed in `<config>/mcp.json` and offer their "
        "tools to the model.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    client_extra_paths: list[str] = Field(
        default_factory=list,
        description="Extra directories searched for the commands of stdio MCP servers.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    client_connect_timeout_s: float = Field(
        default=15.0,
        ge=1,
        le=300,
        description="Seconds an MCP server may take to connect, initialise and list its tools.",
    )


# --------------------------------------------------------------------------------------------
class SkillsSettings(_Section):
    """``[skills]``: Agent Skills discovery."""

    enabled: bool = Field(default=True, description="Discover skills and offer them to chat.")
    project_dirs: list[str] = Field(
        default_factory=lambda: [".qodeassist/skills", ".claude/skills"],
        description="Skill directories relative to the project root (entries escaping the "
        "project are dropped); searched first.",
    )
    global_dirs: list[str] = Field(
        default_factory=lambda: ["~/.claude/skills"],
        description="Further skill directories, searched after `<config>/skills` (always "
        "searched); `~` is expanded.",
        json_schema_extra=_USER_ONLY_EXTRA,
    )


# --------------------------------------------------------------------------------------------
class ResilienceSettings(_Section):
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
class LoggingSettings(_Section):
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
        json_schema_extra=_USER_ONLY_EXTRA,
    )
    log_requests: bool = Field(
        default=False,
        description="Log request and response bodies (secrets redacted). Only takes effect at "
        '`level = "debug"` (`QODEASSIST_LOG_LEVEL=DEBUG` implies it).',
    )


# --------------------------------------------------------------------------------------------
class Settings(_Section):
    """Everything in ``settings.toml``, one attribute per section."""

    general: GeneralSettings = GeneralSettings()
    completion: CompletionSettings = CompletionSettings()
    chat: ChatSettings = ChatSettings()
    refactor: RefactorSettings = RefactorSettings()
    tools: ToolsSettings = ToolsSettings()
    mcp: McpSettings = McpSettings()
    skills: SkillsSettings = SkillsSettings()
    resilience: ResilienceSettings = ResilienceSettings()
    logging: LoggingSettings = LoggingSettings()


# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class SettingInfo:
    """Reference data of one settings key, for documentation and editor schemas."""

    section: str
    key: str
    type: str
    default: str
    allowed: str
    description: str
    user_only: bool


def is_user_only(field: FieldInfo) -> bool:
    """Whether a field may only be set by the user, not by a project's settings file."""
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get(USER_ONLY) is True


def describe_settings() -> list[SettingInfo]:
    """List every settings key (nested tables as ``section.table``) in declaration order."""
    infos: list[SettingInfo] = []
    for section, section_field in Settings.model_fields.items():
        model = section_field.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            _describe_model(model, section, infos)
    return infos


def _describe_model(model: type[BaseModel], section: str, out: list[SettingInfo]) -> None:
    nested: list[tuple[str, type[BaseModel]]] = []
    for key, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested.append((f"{section}.{key}", annotation))
            continue
        out.append(
            SettingInfo(
                section=section,
                key=key,
                type=type_name(annotation),
                default=default_text(field),
                allowed=allowed_text(field),
                description=field.description or "",
                user_only=is_user_only(field),
            )
        )
    for name, sub in nested:
        _describe_model(sub, name, out)


def type_name(annotation: Any) -> str:
    """Name a field type the way a TOML author thinks of it (``integer``, ``list of strings``)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin is Literal:
        return "string"
    if origin is list:
        (item,) = typing.get_args(annotation)
        return f"list of {type_name(item)}s"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(arg) for arg in typing.get_args(annotation))
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if annotation in names:
        return names[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    return str(annotation)


def default_text(field: FieldInfo) -> str:
    """Render the field's default as TOML."""
    value = field.get_default(call_default_factory=True)
    return _toml_value(value)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, BaseModel):
        pairs = (f"{k} = {_toml_value(v)}" for k, v in value.model_dump().items())
        return "{ " + ", ".join(pairs) + " }"
    return str(value)


def allowed_text(field: FieldInfo) -> str:
    """Describe the values a field accepts: a range, a choice, or "" for any value of its type."""
    choices = _literal_choices(field.annotation)
    if choices:
        return " | ".join(choices)
    low: object = None
    high: object = None
    min_length: int | None = None
    # pydantic stores Field(ge=…, le=…, min_length=…) as annotated-types markers.
    for item in field.metadata:
        low = getattr(item, "ge", low)
        high = getattr(item, "le", high)
        min_length = getattr(item, "min_length", min_length)
    if low is not None and high is not None:
        return f"{low}–{high}"
    if low is not None:
        return f"≥ {low}"
    if high is not None:
        return f"≤ {high}"
    if min_length:
        return "non-empty"
    return ""


def _literal_choices(annotation: Any) -> list[str]:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _literal_choices(typing.get_args(annotation)[0])
    if origin is Literal:
        return [str(arg) for arg in typing.get_args(annotation)]
    return []
