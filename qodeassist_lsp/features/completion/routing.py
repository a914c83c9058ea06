"""Which agent completes a file, and whether its model runs on this machine.

The completion pipeline's match rules pick the agent per file and project; a provider instance
at a loopback URL (the embedded model, a local llama.cpp or Ollama) makes requests free, which
the debounce takes into account.
"""

from __future__ import annotations

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.core.router import AgentRouter, NoAgentMatches
from qodeassist_lsp.features.completion.requests import CompletionRequest


def pick_agent(configuration: Configuration, request: CompletionRequest) -> AgentProfile:
    """Return the completion agent for the request's file (raises ``NoAgentMatches``)."""
    document = request.document
    project = request.project_name
    if project is None:
        folder = configuration.paths.project
        project = folder.name if folder is not None else ""
    return AgentRouter(configuration.agents).pick(
        configuration.pipelines.code_completion, document.path or document.uri, project
    )


def serves_locally(configuration: Configuration, request: CompletionRequest) -> bool:
    """Whether the request's agent runs on a model server on this machine (loopback URL)."""
    try:
        profile = pick_agent(configuration, request)
    except NoAgentMatches:
        return False
    instance = configuration.providers.get(profile.provider_instance)
    return instance is not None and instance.is_loopback
