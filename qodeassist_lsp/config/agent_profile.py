"""Agent profiles: the resolved, validated shape of one ``agents/*.toml`` after ``extends``."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import pydantic

from qodeassist_lsp.config.definitions import DefinitionSchema, Layer

_STRICT = pydantic.ConfigDict(extra="ignore", frozen=True, strict=True)

CACHE_BREAKPOINTS = frozenset({"system", "tools", "history"})

AGENT_SCHEMA = DefinitionSchema(
    kind="agent",
    keys=frozenset(
        {
            "schema_version",
            "name",
            "description",
            "provider_instance",
            "model",
            "endpoint",
            "system_prompt",
            "tags",
            "enable_tools",
            "enable_thinking",
            "context_tokens",
            "cache_prompt",
            "cache_ttl",
            "cache_breakpoints",
            "extends",
            "abstract",
            "hidden",
            "fallback",
        }
    ),
    tables={"match": frozenset({"file_patterns", "path_patterns", "project_names"})},
    free_tables=frozenset({"body"}),
    max_depth=32,
)


class MatchRules(pydantic.BaseModel):
    """``[match]``: when a completion agent applies. Empty dimensions match everything."""

    model_config = _STRICT

    file_patterns: list[str] = []
    """Case-insensitive globs against the file name or the full path (``*`` crosses ``/``)."""
    path_patterns: list[str] = []
    """Case-insensitive globs against the full path only."""
    project_names: list[str] = []
    """Exact, case-sensitive project names."""

    @property
    def is_catch_all(self) -> bool:
        """Whether no dimension restricts anything."""
        return not (self.file_patterns or self.path_patterns or self.project_names)

    def accepts(self, file_path: str, project_name: str = "") -> bool:
        """Return whether every non-empty dimension matches ``file_path`` and ``project_name``."""
        path = file_path.replace("\\", "/")
        if self.file_patterns:
            name = path.rstrip("/").rpartition("/")[2]
            if not any(_glob(name, p) or _glob(path, p) for p in self.file_patterns):
                return False
        if self.path_patterns and not any(_glob(path, p) for p in self.path_patterns):
            return False
        return not self.project_names or project_name in self.project_names


def _glob(text: str, pattern: str) -> bool:
    # fnmatch's `*` already crosses `/`, which is the original's semantics.
    return fnmatch.fnmatchcase(text.casefold(), pattern.replace("\\", "/").casefold())


class AgentProfile(pydantic.BaseModel):
    """A concrete agent: what to call (provider, model, endpoint) and what to send (body)."""

    model_config = _STRICT

    schema_version: int = 1
    name: str
    description: str = ""
    provider_instance: str = pydantic.Field(min_length=1)
    model: str = pydantic.Field(min_length=1)
    endpoint: str = ""
    """Path joined to the instance URL; may contain ``${MODEL}``. Empty: the API's default."""
    system_prompt: str = ""
    tags: list[str] = []
    enable_tools: bool = False
    enable_thinking: bool = False
    context_tokens: int = pydantic.Field(default=0, ge=0)
    """The model's context window in tokens as served (0: unknown); the pool's ``minContext``."""
    cache_prompt: bool = False
    cache_ttl: str = ""
    cache_breakpoints: list[str] = []
    hidden: bool = False
    fallback: list[str] = []
    """Agents tried in order when this one's provider fails before the first byte."""
    match: MatchRules = MatchRules()
    body: dict[str, Any] = pydantic.Field(min_length=1)
    source: Path | None = None
    layer: Layer = Layer.BUNDLED
    extends_chain: tuple[str, ...] = ()
