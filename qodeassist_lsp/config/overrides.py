"""Per-agent overrides from ``<config>/agent_models.json``: model, provider instance, tools.

Accepted shapes: ``{"<agent>": {"model": …, "provider_instance": …, "enable_tools": …}}`` or the
flat ``{"<agent>": "<model>"}`` of the design notes. An empty value clears that override.
``effective_instance`` is the one place that says which provider instance an agent's requests
go to after the override: sending, scheduling (one next edit per instance, completion first),
warming and the pickers all ask it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from qodeassist_lsp.config.problems import ConfigProblem

if TYPE_CHECKING:
    from qodeassist_lsp.config.agent_profile import AgentProfile


@dataclass(frozen=True)
class AgentOverride:
    """What the user changed for one agent without editing its TOML."""

    model: str = ""
    provider_instance: str = ""
    enable_tools: bool | None = None


def load_overrides(path: Path, problems: list[ConfigProblem]) -> dict[str, AgentOverride]:
    """Read ``agent_models.json``; a missing file means no overrides."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        problems.append(
            ConfigProblem(
                "error",
                f"cannot read overrides: {exc}; fix the JSON or delete the file",
                file=str(path),
                line=line,
            )
        )
        return {}
    if not isinstance(data, dict):
        problems.append(
            ConfigProblem(
                "error", 'expected an object {"<agent>": {"model": "…"}}', file=str(path), line=1
            )
        )
        return {}
    overrides = {}
    for agent, value in data.items():
        if isinstance(value, str):
            overrides[agent] = AgentOverride(model=value.strip())
        elif isinstance(value, dict):
            tools = value.get("enable_tools")
            overrides[agent] = AgentOverride(
                model=str(value.get("model") or "").strip(),
                provider_instance=str(value.get("provider_instance") or "").strip(),
                enable_tools=tools if isinstance(tools, bool) else None,
            )
        else:
            problems.append(
                ConfigProblem(
                    "warning",
                    f"override for {agent!r} must be a string or an object; ignored",
                    file=str(path),
                    key=agent,
                )
            )
    return overrides


class LoadedOverrides(Protocol):
    """What ``effective_instance`` reads of a ``Configuration`` (which imports this module)."""

    @property
    def overrides(self) -> Mapping[str, AgentOverride]:
        """The overrides of ``agent_models.json``, by agent name."""
        ...

    @property
    def providers(self) -> Mapping[str, object]:
        """The loaded provider instances, by name."""
        ...


def effective_instance(configuration: LoadedOverrides, profile: AgentProfile) -> str:
    """Return the provider instance ``profile``'s requests go to, ``agent_models.json`` applied.

    The override's instance when it names a loaded one (an unknown one is a load warning and
    the agent keeps its own), else the instance of the agent's TOML.
    """
    override = configuration.overrides.get(profile.name)
    if override is not None and override.provider_instance in configuration.providers:
        return override.provider_instance
    return profile.provider_instance
