"""One immutable snapshot of everything configurable, loaded in one call.

``load_configuration`` reads providers, agents, pipelines and overrides from the bundled tree,
the user's config root and the project's ``.qodeassist/``, and returns them together with every
problem found. Nothing raises for bad files: problems are data, shown by ``agents validate``,
logged by the server and published as diagnostics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.agent_loader import BodyEnvironments, build_agents, collect_definitions
from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.code_cache import CodeTable
from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.fim_templates import instruct_model_problem, is_fim_agent
from qodeassist_lsp.config.overrides import AgentOverride, load_overrides
from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.config.pipelines import Pipelines, load_pipelines
from qodeassist_lsp.config.problems import ConfigProblem
from qodeassist_lsp.config.providers import ProviderInstance, load_providers
from qodeassist_lsp.config.settings import Settings, SettingsSection
from qodeassist_lsp.config.settings_loader import load_settings
from qodeassist_lsp.config.system_prompt import PromptRoots

CODE_CACHE_SPARE = 256
"""Entries of other loads (projects, user agents) the code cache keeps beside this load's."""


@dataclass(frozen=True)
class Configuration:
    """Providers, agents, pipelines, overrides and settings as loaded, plus every problem."""

    paths: ConfigPaths
    providers: dict[str, ProviderInstance]
    agents: dict[str, AgentProfile]
    pipelines: Pipelines
    overrides: dict[str, AgentOverride]
    body_environments: BodyEnvironments
    """The compiled-template caches the agents of this snapshot share."""
    settings: Settings = field(default_factory=Settings)
    """Defaults, then the user and project settings.toml (editor settings apply later)."""
    problems: list[ConfigProblem] = field(default_factory=list)

    @property
    def errors(self) -> list[ConfigProblem]:
        """Only the problems of severity ``error``."""
        return [p for p in self.problems if p.severity == "error"]

    def prompt_roots(self) -> PromptRoots:
        """Return the sandbox roots for rendering system prompts with this configuration."""
        return prompt_roots(self.paths, self.settings)


def load_configuration(
    paths: ConfigPaths,
    extra_agent_files: Sequence[Path] = (),
    editor_settings: Mapping[str, Any] | None = None,
    sections: Sequence[SettingsSection[Any]] = (),
    code_cache: Path | None = None,
) -> Configuration:
    """Load everything under ``paths``.

    ``extra_agent_files`` load as user agents on top; ``editor_settings`` (the editor's
    ``qodeassist`` section) is the last settings layer; ``sections`` are the features' own
    settings sections, validated like the core ones. ``code_cache`` is the file of compiled
    body-template code (``default_code_cache_path()``; none: compile every template).
    """
    problems: list[ConfigProblem] = []
    project = paths.project_config
    # Settings first: the agents' prompt paths are checked against the user's allowed_roots.
    settings, settings_problems = load_settings(
        paths.config_root, paths.project, editor_settings, Settings.with_sections(sections)
    )
    providers = load_providers(
        [
            (paths.bundled / "providers", Layer.BUNDLED),
            (paths.config_root / "providers", Layer.USER),
            (project / "providers" if project else None, Layer.PROJECT),
        ],
        problems,
    )
    definitions = collect_definitions(
        [
            (paths.bundled / "agents", Layer.BUNDLED),
            (paths.config_root / "agents", Layer.USER),
            (project / "agents" if project else None, Layer.PROJECT),
            (list(extra_agent_files), Layer.USER),
        ],
        problems,
    )
    environments = BodyEnvironments(paths.bundled, CodeTable(code_cache, CODE_CACHE_SPARE))
    agents = build_agents(
        definitions,
        providers,
        prompt_roots(paths, settings),
        environments,
        problems,
    )
    pipelines = load_pipelines(
        [
            paths.bundled / "pipelines.toml",
            paths.config_root / "pipelines.toml",
            project / "pipelines.toml" if project else None,
        ],
        problems,
    )
    overrides = load_overrides(paths.config_root / "agent_models.json", problems)
    problems.extend(settings_problems)
    problems.extend(_cross_checks(paths, agents, providers, pipelines, overrides))
    environments.code.save()
    return Configuration(
        paths, providers, agents, pipelines, overrides, environments, settings, problems
    )


def prompt_roots(paths: ConfigPaths, settings: Settings) -> PromptRoots:
    """Return the folders system prompts may read: bundled, config, project, allowed roots."""
    extra = tuple(Path(root).expanduser() for root in settings.general.allowed_roots)
    return PromptRoots(paths.bundled, paths.config_root, paths.project, extra)


def _cross_checks(
    paths: ConfigPaths,
    agents: dict[str, AgentProfile],
    providers: dict[str, ProviderInstance],
    pipelines: Pipelines,
    overrides: dict[str, AgentOverride],
) -> list[ConfigProblem]:
    found = pipelines.unknown_agents(agents)
    overrides_file = str(paths.config_root / "agent_models.json")
    for agent, override in overrides.items():
        if agent not in agents:
            found.append(
                ConfigProblem(
                    "warning",
                    f"override for unknown agent {agent!r} is ignored",
                    file=overrides_file,
                    key=agent,
                )
            )
        profile = agents.get(agent)
        if (
            profile is not None
            and override.model
            and is_fim_agent(profile.endpoint, profile.body, profile.tags)
            and instruct_model_problem(override.model)
        ):
            found.append(
                ConfigProblem(
                    "warning",
                    f"override for {agent!r}: {instruct_model_problem(override.model)}",
                    file=overrides_file,
                    key=agent,
                )
            )
        if override.provider_instance and override.provider_instance not in providers:
            found.append(
                ConfigProblem(
                    "warning",
                    f"override for {agent!r} names unknown provider instance "
                    f"{override.provider_instance!r}; the agent's own provider is used",
                    file=overrides_file,
                    key=agent,
                )
            )
    return found
