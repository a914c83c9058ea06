"""`make_provider`: the provider class of an instance, by its ``client_api``.

The runtime, sessions and features handle every provider alike. The ACP provider is imported
only when an instance needs it: the ACP SDK (and the telemetry it loads) cost the language
server about 10 MB of memory for nobody who does not use an ACP agent.
"""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.config.client_apis import ACP, CLAUDE_STREAM_JSON, GEMINI_STREAM_JSON
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretsPort
from qodeassist_lsp.core.agent_process.claude_code import ClaudeCodeProvider
from qodeassist_lsp.core.agent_process.gemini_cli import GeminiCliProvider
from qodeassist_lsp.core.provider import GenericProvider


def make_provider(
    instance: ProviderInstance, secrets: SecretsPort, **kwargs: Any
) -> GenericProvider:
    """Return the provider of ``instance``: HTTP, or the process kind its ``client_api`` names."""
    if instance.api.process == ACP:
        from qodeassist_lsp.core.agent_process.acp_provider import AcpProvider

        return AcpProvider(instance, secrets, **kwargs)
    if instance.api.process == CLAUDE_STREAM_JSON:
        return ClaudeCodeProvider(instance, secrets, **kwargs)
    if instance.api.process == GEMINI_STREAM_JSON:
        return GeminiCliProvider(instance, secrets, **kwargs)
    return GenericProvider(instance, secrets, **kwargs)
