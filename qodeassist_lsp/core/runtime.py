"""``Runtime``: the core built from one configuration snapshot, ready to send requests.

It owns one ``GenericProvider`` (and so one ``httpx.AsyncClient``) per provider instance, created
on first use, the agent factory and the session manager. ``reload`` swaps in a new snapshot:
pooled sessions are flushed and providers whose instance changed are closed.
"""

from __future__ import annotations

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.secrets import SecretsPort, SecretStore
from qodeassist_lsp.core.agent import AgentFactory, AgentNotAvailable
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.core.tools import ToolContributorRegistry


class Runtime:
    """Providers, agents and sessions for one configuration."""

    def __init__(self, configuration: Configuration, secrets: SecretsPort | None = None) -> None:
        self._secrets = secrets or SecretStore(configuration.paths.config_root)
        self._providers: dict[str, GenericProvider] = {}
        self.contributors = ToolContributorRegistry()
        self.configuration = configuration
        self.factory = AgentFactory(configuration)
        self.sessions = self._new_manager()

    def _new_manager(self) -> SessionManager:
        return SessionManager(
            self.factory,
            self.provider,
            self.configuration.settings,
            self.configuration.prompt_roots(),
            self.contributors,
        )

    def provider(self, name: str) -> GenericProvider:
        """Return the provider of instance ``name``, creating it on first use."""
        provider = self._providers.get(name)
        if provider is None:
            instance = self.configuration.providers.get(name)
            if instance is None:
                raise AgentNotAvailable(f"provider instance {name!r} is not loaded")
            provider = GenericProvider(instance, self._secrets)
            self._providers[name] = provider
        return provider

    async def reload(self, configuration: Configuration) -> None:
        """Switch to ``configuration``: flush pools, close providers that changed."""
        self.sessions.flush()
        self._secrets.invalidate()
        for name, provider in list(self._providers.items()):
            if configuration.providers.get(name) != provider.instance:
                await provider.aclose()
                del self._providers[name]
        self.configuration = configuration
        self.factory = AgentFactory(configuration)
        self.sessions = self._new_manager()

    async def aclose(self) -> None:
        """Cancel pooled work and close every provider's HTTP client."""
        self.sessions.flush()
        for provider in self._providers.values():
            await provider.aclose()
        self._providers.clear()
