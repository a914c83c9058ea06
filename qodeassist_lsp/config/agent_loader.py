"""Loading agent profiles: layers, ``extends``, and validation that fails at load time.

Order: bundled agents, then the user's ``<config>/agents``, then the project's
``.qodeassist/agents``. Bundled names cannot be reused (extend them instead); a project agent
may replace a user agent of the same name. Every concrete agent is then checked: its provider
instance exists, its ``system_prompt`` compiles and renders, and its ``[body]`` renders to valid
JSON against the hostile synthetic context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pydantic

from qodeassist_lsp.config.agent_profile import AGENT_SCHEMA, CACHE_BREAKPOINTS, AgentProfile
from qodeassist_lsp.config.code_cache import CodeTable
from qodeassist_lsp.config.definitions import (
    Definition,
    Layer,
    Resolved,
    read_definition,
    resolve_all,
    toml_files,
    validation_problems,
)
from qodeassist_lsp.config.fim_templates import instruct_model_problem, is_fim_agent
from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.system_prompt import (
    PromptPathRefused,
    PromptRoots,
    SystemPromptError,
    SystemPromptRenderer,
)
from qodeassist_lsp.config.template_context import synthetic_context
from qodeassist_lsp.config.templating import BodyCompiler, BodyTemplate, TemplateError


@dataclass
class BodyEnvironments:
    """One body-template compiler per agent directory (includes resolve next to the agent).

    ``code`` is the persistent table of compiled template code the compilers share.
    """

    bundled_root: Path
    code: CodeTable = field(default_factory=lambda: CodeTable(None))
    _cache: dict[Path, BodyCompiler] = field(default_factory=dict)

    def for_file(self, source: Path | None) -> BodyCompiler:
        """Return the compiler for templates defined in ``source``."""
        directory = source.parent if source is not None else self.bundled_root
        compiler = self._cache.get(directory)
        if compiler is None:
            compiler = BodyCompiler([self.bundled_root, directory], self.code)
            self._cache[directory] = compiler
        return compiler


def collect_definitions(
    layers: Sequence[tuple[Sequence[Path] | Path | None, Layer]], problems: list[ConfigProblem]
) -> dict[str, Definition]:
    """Read agent files layer by layer, applying the naming rules between layers."""
    definitions: dict[str, Definition] = {}
    for location, layer in layers:
        if location is None or isinstance(location, Path):
            paths = toml_files(location)
        else:
            paths = list(location)
        for path in paths:
            definition = read_definition(path, layer, AGENT_SCHEMA, problems)
            if definition is None:
                continue
            existing = definitions.get(definition.name)
            if existing is not None and not _may_replace(existing, definition, problems):
                continue
            definitions[definition.name] = definition
    return definitions


def _may_replace(old: Definition, new: Definition, problems: list[ConfigProblem]) -> bool:
    name = new.name
    if new.layer is Layer.BUNDLED:
        problems.append(
            new.source.problem("error", f"duplicate bundled agent name {name!r}", "name")
        )
        return False
    if old.layer is Layer.BUNDLED:
        problems.append(
            new.source.problem(
                "error",
                f"{name!r} is a bundled agent and cannot be replaced; give this agent another "
                f'name and add extends = "{name}" to build on it',
                "name",
            )
        )
        return False
    if old.layer is new.layer:
        problems.append(
            new.source.problem(
                "warning",
                f"agent {name!r} is also defined in {old.source.path}; this later file wins",
                "name",
            )
        )
    return True


def build_agents(
    definitions: Mapping[str, Definition],
    providers: Mapping[str, ProviderInstance],
    prompt_roots: PromptRoots,
    environments: BodyEnvironments,
    problems: list[ConfigProblem],
) -> dict[str, AgentProfile]:
    """Resolve, validate and dry-render every concrete agent."""
    renderer = SystemPromptRenderer(prompt_roots)
    agents = {}
    resolved_sources: dict[str, Resolved] = {}
    for name, resolved in resolve_all(definitions, AGENT_SCHEMA, problems).items():
        if resolved.data.get("abstract") is True:
            continue
        agent = _validate(resolved, problems)
        if agent is None:
            continue
        resolved_sources[name] = resolved
        found = _check(agent, resolved, providers, renderer, environments)
        problems.extend(found)
        if not any(p.severity == "error" for p in found):
            agents[name] = agent
    for name, agent in agents.items():
        problems.extend(_check_fallback(agent, resolved_sources[name], agents))
    return agents


def _check_fallback(
    agent: AgentProfile, resolved: Resolved, agents: Mapping[str, AgentProfile]
) -> list[ConfigProblem]:
    """Warn about ``fallback`` entries that cannot serve (they are skipped at request time)."""
    found = []
    for entry in agent.fallback:
        if entry == agent.name:
            reason = "is the agent itself"
        elif entry not in agents:
            reason = f"is not a usable agent{did_you_mean(entry, list(agents))}"
        else:
            continue
        message = f"fallback {entry!r} {reason}; skipped"
        found.append(resolved.problem("warning", message, "fallback"))
    return found


def _validate(resolved: Resolved, problems: list[ConfigProblem]) -> AgentProfile | None:
    data = {k: v for k, v in resolved.data.items() if k not in ("abstract", "extends")}
    data.update(source=resolved.source.path, layer=resolved.layer, extends_chain=resolved.chain)
    try:
        return AgentProfile.model_validate(data)
    except pydantic.ValidationError as exc:
        problems.extend(validation_problems(resolved, exc))
        return None


def _check(
    agent: AgentProfile,
    resolved: Resolved,
    providers: Mapping[str, ProviderInstance],
    renderer: SystemPromptRenderer,
    environments: BodyEnvironments,
) -> list[ConfigProblem]:
    found = []
    for value in agent.cache_breakpoints:
        if value not in CACHE_BREAKPOINTS:
            found.append(
                resolved.problem(
                    "warning",
                    f"cache_breakpoints value {value!r} is ignored; use "
                    + ", ".join(sorted(CACHE_BREAKPOINTS)),
                    "cache_breakpoints",
                )
            )
    if agent.provider_instance not in providers:
        hint = did_you_mean(agent.provider_instance, list(providers))
        found.append(
            resolved.problem(
                "error",
                f"agent {agent.name!r} uses provider instance {agent.provider_instance!r}, "
                f"which does not exist{hint}",
                "provider_instance",
            )
        )
    refused = renderer.check_paths(agent.system_prompt)
    for message in refused:
        found.append(resolved.problem("error", f"system_prompt: {message}", "system_prompt"))
    try:
        renderer.render(agent.system_prompt, language="python")
    except PromptPathRefused as exc:
        if str(exc) not in refused:
            found.append(resolved.problem("error", f"system_prompt: {exc}", "system_prompt"))
    except SystemPromptError as exc:
        # A variable unknown here (${PROJECT_DIR} without a project) is checked at send.
        if "${" not in agent.system_prompt:
            found.append(resolved.problem("error", str(exc), "system_prompt"))
    if is_fim_agent(agent.endpoint, agent.body, agent.tags):
        problem = instruct_model_problem(agent.model)
        if problem:
            found.append(resolved.problem("error", problem, "model"))
            return found  # the body would fail on the same model; one message is enough
    try:
        template = BodyTemplate(agent.body, environments.for_file(agent.source))
        template.render(synthetic_context(agent.model))
    except TemplateError as exc:
        key_path = ("body", *exc.key.replace("[", ".").replace("]", "").split("."))
        message = f"[body] failed to render to valid JSON: {exc}"
        if exc.snippet:
            message += f" — near: {exc.snippet[:160]!r}"
        found.append(resolved.problem("error", message, *key_path))
    return found
