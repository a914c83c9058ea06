"""What the agent pickers show: each loaded agent, its effective provider and model, pipelines.

Shared by ``agents list --json`` and ``qodeassist/agents/list``. A pipeline may be named by its
slot (``chat_assistant``), its short CLI alias (``chat``) or its camelCase LSP form
(``chatAssistant``), all from its row in ``config.pipelines``; filtered lists keep the
roster's order, so a picker shows the user's preferred agent first. The list of a pipeline whose
row is ``picked_by`` another (``chat_assistant`` by ``chat_router``) ends with a pseudo-agent
``auto`` (flagged ``"auto": true``) when that pipeline has an agent. ``contextTokens`` and
``maxConcurrent`` are what the agent pool reads: the profile's context window (0: not declared)
and the provider instance's effective limit (None: no limit).
"""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.config.pipelines import AUTO, PipelineSpec, find_pipeline
from qodeassist_lsp.core.agent import AgentFactory


def agent_summaries(config: Configuration, pipeline: str | None = None) -> list[dict[str, Any]]:
    """Describe each agent (optionally only those of ``pipeline``) as a JSON-ready dict."""
    factory = AgentFactory(config)
    spec = find_pipeline(pipeline) if pipeline else None
    pipelines = config.pipelines.loaded(config.agents)
    out = []
    for name in pipelines.roster(spec) if spec is not None else config.agents:
        profile = config.agents[name]
        instance = effective_instance(config, profile)
        provider = config.providers.get(instance)
        out.append(
            {
                "name": name,
                "description": profile.description,
                "provider": instance,
                "model": factory.effective_model(name),
                "pipelines": config.pipelines.pipelines_of(name),
                "tags": profile.tags,
                "tools": profile.enable_tools,
                "thinking": profile.enable_thinking,
                "hidden": profile.hidden,
                "demo": provider is not None and provider.demo,
                "contextTokens": profile.context_tokens,
                "maxConcurrent": provider.concurrency_limit if provider is not None else None,
                "source": str(profile.source) if profile.source else None,
            }
        )
    if spec is not None and AUTO in pipelines.choices(spec):
        out.append(_auto_entry(pipelines.picker(spec), spec))
    return out


def _auto_entry(router: str, spec: PipelineSpec) -> dict[str, Any]:
    """Return the picker entry of ``auto``: ``router`` picks ``spec``'s agent per request."""
    return {
        "name": AUTO,
        "description": f"{router} picks the chat agent for each message",
        "provider": "",
        "model": "",
        "pipelines": [spec.slot],
        "tags": [],
        "tools": False,
        "thinking": False,
        "hidden": False,
        "source": None,
        "auto": True,
        "demo": False,
        "contextTokens": 0,
        "maxConcurrent": None,
    }
