"""Pipelines: which agents serve each feature, and the one table that says what a pipeline is.

``PIPELINE_TABLE`` has one `PipelineSpec` row per pipeline: its slot in ``pipelines.toml``, its
short alias, whether it takes one agent or an ordered list, the settings section its timeouts
come from, whether it retries, which tools its sessions get and how ``qodeassist/status`` shows
it. Everything else derives from the rows: the aliases and CLI choices, the validation of
``pipelines.toml``, the status payload, request policy and tool contribution. Lower layers ask a
row (``spec.tool_access``, ``spec.retries``), never which pipeline it is; adding a pipeline is
adding a row.

The defaults are the bundled ``agents/pipelines.toml``; the user's ``pipelines.toml`` and then the
project's ``.qodeassist/pipelines.toml`` replace them key by key. Parsing follows the original:
names are trimmed and capped at 256 characters, duplicates and non-strings are dropped with a
warning, a single slot given as an array takes its first non-empty string, and a file that is
missing or broken leaves the defaults in place. An empty slot switches the feature off.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.config.toml_source import TomlFile, read_toml
from qodeassist_lsp.wire.errors import QodeAssistError

MAX_NAME_LENGTH = 256


class ToolAccess(enum.StrEnum):
    """Which tools a pipeline's sessions are offered (when the agent enables tools)."""

    NONE = "none"
    READ = "read"
    """The read-class tools of the kit and of MCP servers."""
    ALL = "all"
    """Every tool: the kit, file edits, skills and MCP servers."""


@dataclass(frozen=True, kw_only=True)
class PipelineSpec:
    """One pipeline: everything the code knows about it, as data (fields by keyword only)."""

    slot: str
    """The key in ``pipelines.toml`` (``code_completion``)."""
    alias: str
    """The short name of the command line and the LSP methods (``completion``)."""
    ordered: bool
    """True: an ordered list of agents; False: one agent."""
    settings: str
    """The settings section (``settings.toml``) its timeouts come from."""
    retries: bool
    """Whether a request retries before its first byte (chat-like work does)."""
    tool_access: ToolAccess
    status_key: str
    """Its key in the ``pipelines`` part of ``qodeassist/status`` (camelCase)."""
    routed: bool = False
    """True: the first agent whose ``[match]`` accepts the file serves it (catch-alls last)."""
    picked_by: str = ""
    """The slot of a pipeline whose agent may pick this one's agent per request (pickers then
    offer ``auto``); empty: the user always picks."""

    @property
    def aliases(self) -> tuple[str, str]:
        """The other names accepted for the slot: the short alias and the status key."""
        return (self.alias, self.status_key)


CODE_COMPLETION = PipelineSpec(
    slot="code_completion",
    alias="completion",
    ordered=True,
    settings="completion",
    retries=False,
    tool_access=ToolAccess.NONE,
    status_key="codeCompletion",
    routed=True,
)
CHAT_ASSISTANT = PipelineSpec(
    slot="chat_assistant",
    alias="chat",
    ordered=True,
    settings="chat",
    retries=True,
    tool_access=ToolAccess.ALL,
    status_key="chatAssistant",
    picked_by="chat_router",
)
CHAT_COMPRESSION = PipelineSpec(
    slot="chat_compression",
    alias="compression",
    ordered=False,
    settings="chat",
    retries=True,
    tool_access=ToolAccess.NONE,
    status_key="chatCompression",
)
QUICK_REFACTOR = PipelineSpec(
    slot="quick_refactor",
    alias="refactor",
    ordered=False,
    settings="refactor",
    retries=True,
    tool_access=ToolAccess.READ,
    status_key="quickRefactor",
)
NEXT_EDIT = PipelineSpec(
    slot="next_edit",
    alias="next-edit",
    ordered=True,
    settings="next_edit",
    retries=False,
    tool_access=ToolAccess.NONE,
    status_key="nextEdit",
    routed=True,
)
CHAT_ROUTER = PipelineSpec(
    slot="chat_router",
    alias="router",
    ordered=False,
    settings="chat",
    retries=False,
    tool_access=ToolAccess.NONE,
    status_key="chatRouter",
)

PIPELINE_TABLE: tuple[PipelineSpec, ...] = (
    CODE_COMPLETION,
    CHAT_ASSISTANT,
    CHAT_COMPRESSION,
    QUICK_REFACTOR,
    NEXT_EDIT,
    CHAT_ROUTER,
)
"""Every pipeline, in the order listings show them."""


def pipeline_specs() -> tuple[PipelineSpec, ...]:
    """Return the rows of the pipeline table (read at call time, so a test may add one)."""
    return PIPELINE_TABLE


def pipeline_slots() -> list[str]:
    """Return every pipeline's slot name, in table order."""
    return [spec.slot for spec in pipeline_specs()]


class UnknownPipeline(QodeAssistError, ValueError):
    """A pipeline name that is no row's slot or alias."""


def find_pipeline(name: str) -> PipelineSpec:
    """Return the row ``name`` (a slot or one of its aliases) names (raises ``UnknownPipeline``)."""
    for spec in pipeline_specs():
        if name == spec.slot or name in spec.aliases:
            return spec
    raise UnknownPipeline(f"unknown pipeline {name!r}; use one of {', '.join(pipeline_slots())}")


AUTO = "auto"
"""The name a request gives to let the picker (the row's ``picked_by``) choose the agent."""


class PipelinesStatus(enum.StrEnum):
    """How the last pipelines file read went."""

    OK = "ok"
    FILE_MISSING = "file_missing"
    PARSE_ERROR = "parse_error"
    SCHEMA_ERROR = "schema_error"


@dataclass(frozen=True)
class Pipelines:
    """The agent names configured for each pipeline."""

    rosters: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Slot → agents, in order (a one-agent slot holds at most one)."""
    status: PipelinesStatus = PipelinesStatus.FILE_MISSING
    origins: dict[str, tuple[str, int | None]] = field(default_factory=dict, compare=False)
    """Slot → (file, line) of the ``pipelines.toml`` entry that set it: where problems point."""

    def roster(self, spec: PipelineSpec) -> tuple[str, ...]:
        """Return the agents of ``spec``, in order (empty: the feature is off)."""
        return self.rosters.get(spec.slot, ())

    def agent(self, spec: PipelineSpec) -> str:
        """Return the one agent of ``spec`` (``""``: the feature is off)."""
        roster = self.roster(spec)
        return roster[0] if roster else ""

    def loaded(self, agents: Collection[str]) -> Pipelines:
        """Return a copy naming only the ``agents`` that loaded: what requests may use."""
        kept = {slot: tuple(a for a in v if a in agents) for slot, v in self.rosters.items()}
        return replace(self, rosters=kept)

    def picker(self, spec: PipelineSpec) -> str:
        """Return the agent that picks ``spec``'s agent per request (`AUTO`; "": none)."""
        return self.agent(find_pipeline(spec.picked_by)) if spec.picked_by else ""

    def choices(self, spec: PipelineSpec) -> tuple[str, ...]:
        """Return the names ``spec``'s requests may give (of a `loaded` copy); `AUTO` if picked."""
        names = self.roster(spec)
        return (*names, AUTO) if names and self.picker(spec) else names

    def with_roster(self, spec: PipelineSpec, agents: tuple[str, ...]) -> Pipelines:
        """Return a copy in which ``spec`` names ``agents``."""
        return replace(self, rosters={**self.rosters, spec.slot: agents})

    def shown(self, spec: PipelineSpec) -> list[str] | str:
        """Return ``spec``'s agents as status shows them: a list, or one name."""
        return list(self.roster(spec)) if spec.ordered else self.agent(spec)

    def agent_names(self) -> set[str]:
        """Every agent name any pipeline mentions."""
        return {name for spec in pipeline_specs() for name in self.roster(spec)}

    def unknown_agents(self, agents: Collection[str]) -> list[ConfigProblem]:
        """Warn, at the entry that names it, about each agent a pipeline names but none loaded."""
        found = []
        for name in sorted(self.agent_names() - set(agents)):
            slot = next(spec.slot for spec in pipeline_specs() if name in self.roster(spec))
            file, line = self.origins.get(slot, (None, None))
            hint = did_you_mean(name, agents)
            message = f"pipelines name agent {name!r}, which is not loaded{hint}"
            found.append(ConfigProblem("warning", message, file, line, f"pipelines.{slot}"))
        return found

    def pipelines_of(self, agent: str) -> list[str]:
        """Return the pipeline slots that name ``agent`` (ordered lists first, as listed)."""
        specs = sorted(pipeline_specs(), key=lambda spec: not spec.ordered)
        return [spec.slot for spec in specs if agent in self.roster(spec)]


def _clean_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    name = value.strip()[:MAX_NAME_LENGTH]
    return name or None


def parse_pipelines(source: TomlFile, base: Pipelines, problems: list[ConfigProblem]) -> Pipelines:
    """Overlay the ``[pipelines]`` table of ``source`` on ``base``."""
    table = source.data.get("pipelines")
    if not isinstance(table, dict):
        problems.append(
            source.problem("error", "no [pipelines] table; the defaults are used", "pipelines")
        )
        return replace(base, status=PipelinesStatus.SCHEMA_ERROR)
    rosters = dict(base.rosters)
    origins = dict(base.origins)
    specs = {spec.slot: spec for spec in pipeline_specs()}
    for key, value in table.items():
        spec = specs.get(key)
        if spec is not None:
            origins[key] = (str(source.path), source.line_of("pipelines", key))
        if spec is None:
            hint = did_you_mean(key, list(specs))
            problems.append(
                source.problem(
                    "warning", f"unknown pipeline {key!r} is ignored{hint}", "pipelines", key
                )
            )
        elif spec.ordered:
            rosters[key] = _list_slot(source, key, value, problems)
        else:
            rosters[key] = tuple(filter(None, [_single_slot(source, key, value, problems)]))
    return Pipelines(rosters, PipelinesStatus.OK, origins)


def _list_slot(
    source: TomlFile, key: str, value: Any, problems: list[ConfigProblem]
) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        name = _clean_name(item)
        if name is None:
            if not (isinstance(item, str) and not item.strip()):
                problems.append(
                    source.problem(
                        "warning",
                        f"{key}: {item!r} is not an agent name; dropped",
                        "pipelines",
                        key,
                    )
                )
        elif name in names:
            problems.append(
                source.problem(
                    "warning", f"{key}: {name!r} is listed twice; dropped", "pipelines", key
                )
            )
        else:
            names.append(name)
    return tuple(names)


def _single_slot(source: TomlFile, key: str, value: Any, problems: list[ConfigProblem]) -> str:
    if isinstance(value, list):
        names = [n for n in (_clean_name(v) for v in value) if n]
        return names[0] if names else ""
    name = _clean_name(value)
    if name is None and not (isinstance(value, str) and not value.strip()):
        problems.append(
            source.problem(
                "warning", f"{key} must be one agent name; the default is kept", "pipelines", key
            )
        )
        return ""
    return name or ""


def load_pipelines(files: list[Path | None], problems: list[ConfigProblem]) -> Pipelines:
    """Read the pipelines files in order (bundled defaults first), each overlaying the last."""
    pipelines = Pipelines()
    for path in files:
        if path is None or not path.is_file():
            continue
        parsed = read_toml(path)
        if isinstance(parsed, ConfigProblem):
            problems.append(parsed)
            pipelines = replace(pipelines, status=PipelinesStatus.PARSE_ERROR)
            continue
        pipelines = parse_pipelines(parsed, pipelines, problems)
    return pipelines
