"""What the agent pickers show: every loaded agent with provider, effective model and pipelines.

Shared by ``agents list --json`` and ``qodeassist/agents/list``. A pipeline may be named by its
slot (``chat_assistant``), its short CLI alias (``chat``) or its camelCase LSP form
(``chatAssistant``); filtered lists keep the roster's order, so a picker shows the user's
preferred agent first. The ``chat_assistant`` list ends with a pseudo-agent ``auto`` (flagged
``"auto": true``) when a ``chat_router`` agent is configured.
"""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.wire.errors import QodeAssistError

PIPELINE_ALIASES = {
    "completion": "code_completion",
    "chat": "chat_assistant",
    "compression": "chat_compression",
    "refactor": "quick_refactor",
    "codeCompletion": "code_completion",
    "chatAssistant": "chat_assistant",
    "chatCompression": "chat_compression",
    "quickRefactor": "quick_refactor",
}
PIPELINE_SLOTS = ("code_completion", "chat_assistant", "chat_compression", "quick_refactor")


class UnknownPipeline(QodeAssistError, ValueError):
    """A pipeline name that is none of the four slots or their aliases."""


def pipeline_slot(name: str) -> str:
    """Return the slot ``name`` stands for (raises ``UnknownPipeline``)."""
    slot = PIPELINE_ALIASES.get(name, name)
    if slot not in PIPELINE_SLOTS:
        choices = ", ".join(PIPELINE_SLOTS)
        raise UnknownPipeline(f"unknown pipeline {name!r}; use one of {choices}")
    return slot


def agent_summaries(config: Configuration, pipeline: str | None = None) -> list[dict[str, Any]]:
    """Describe each agent (optionally only those of ``pipeline``) as a JSON-ready dict."""
    factory = AgentFactory(config)
    slot = pipeline_slot(pipeline) if pipeline else None
    names = list(config.agents)
    if slot is not None:
        roster = getattr(config.pipelines, slot)
        order = list(roster) if isinstance(roster, tuple) else [roster]
        names = [n for n in order if n in config.agents]
    out = []
    for name in names:
        profile = config.agents[name]
        out.append(
            {
                "name": name,
                "description": profile.description,
                "provider": profile.provider_instance,
                "model": factory.effective_model(name),
                "pipelines": config.pipelines.pipelines_of(name),
                "tags": profile.tags,
                "tools": profile.enable_tools,
                "thinking": profile.enable_thinking,
                "hidden": profile.hidden,
                "demo": _serves_demo(config, name),
                "source": str(profile.source) if profile.source else None,
            }
        )
    if slot == "chat_assistant" and config.pipelines.chat_router in config.agents and out:
        out.append(_auto_entry(config.pipelines.chat_router))
    return out


def _serves_demo(config: Configuration, name: str) -> bool:
    """Whether ``name``'s provider instance (after overrides) serves a demo model."""
    override = config.overrides.get(name)
    instance = override.provider_instance if override else ""
    if instance not in config.providers:
        instance = config.agents[name].provider_instance
    provider = config.providers.get(instance)
    return provider is not None and provider.demo


def _auto_entry(router: str) -> dict[str, Any]:
    """Return the picker entry of ``auto``: the ``chat_router`` agent picks per message."""
    return {
        "name": "auto",
        "description": f"{router} picks the chat agent for each message",
        "provider": "",
        "model": "",
        "pipelines": ["chat_assistant"],
        "tags": [],
        "tools": False,
        "thinking": False,
        "hidden": False,
        "source": None,
        "auto": True,
        "demo": False,
    }
