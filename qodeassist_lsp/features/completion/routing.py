"""Which agent completes a file, and whether its model runs on this machine.

The completion pipeline's match rules pick the agent per file and project; a model on this
machine (`ProviderInstance.is_local`: the embedded model, a local llama.cpp or Ollama, not a
loopback proxy in front of a billed API) makes requests free, which the debounce takes into
account.
"""

from __future__ import annotations

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.config.pipelines import CODE_COMPLETION
from qodeassist_lsp.core.router import AgentRouter, NoAgentMatches
from qodeassist_lsp.features.completion.requests import CompletionRequest, CompletionResult
from qodeassist_lsp.features.completion.stats import Outcome
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo


def pick_agent(configuration: Configuration, request: CompletionRequest) -> AgentProfile:
    """Return the completion agent for the request's file (raises ``NoAgentMatches``)."""
    document = request.document
    project = request.project_name
    if project is None:
        folder = configuration.paths.project
        project = folder.name if folder is not None else ""
    return AgentRouter(configuration.agents).pick(
        configuration.pipelines.roster(CODE_COMPLETION), document.path or document.uri, project
    )


def route(
    configuration: Configuration, request: CompletionRequest
) -> AgentProfile | CompletionResult:
    """Return the request's agent, or the error result when none matches."""
    try:
        return pick_agent(configuration, request)
    except NoAgentMatches as exc:
        error = ErrorInfo(ErrorCategory.CONFIG, str(exc))
        return CompletionResult(outcome=Outcome.ERROR, reason="no agent", error=error)


def serves_locally(configuration: Configuration, profile: AgentProfile) -> bool:
    """Whether ``profile``'s model runs on this machine (`ProviderInstance.is_local`)."""
    instance = configuration.providers.get(effective_instance(configuration, profile))
    return instance is not None and instance.is_local
