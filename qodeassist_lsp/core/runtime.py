"""``Runtime``: the core built from one configuration snapshot, ready to send requests.

It owns one ``GenericProvider`` (and so one ``httpx.AsyncClient``) per provider instance, created
on first use, the agent factory and the session manager. ``reload`` swaps in a new snapshot:
pooled sessions are flushed and providers whose instance changed are closed. Instances with a
``[launch]`` table get a ``ProviderLauncher`` that outlives such reloads while its ``[launch]``
stays the same; ``aclose`` stops the servers it started attached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretsPort, SecretStore
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.core.agent import AgentFactory, AgentNotAvailable
from qodeassist_lsp.core.agent_process.factory import make_provider
from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.core.tools import ToolContributorRegistry

LaunchProgress = Callable[[str, int | None, str], None]
"""Hears ``(instance, percent, message)`` while a ``[launch]`` server starts (a model download);
``percent`` None once the start is over."""


class Runtime:
    """Providers, agents and sessions for one configuration."""

    def __init__(
        self,
        configuration: Configuration,
        secrets: SecretsPort | None = None,
        on_launch_progress: LaunchProgress | None = None,
    ) -> None:
        """Serve ``configuration``; ``on_launch_progress`` hears starting servers' progress."""
        self._secrets = secrets or SecretStore(configuration.paths.config_root)
        self._on_launch_progress = on_launch_progress
        self._providers: dict[str, GenericProvider] = {}
        self._launchers: dict[str, ProviderLauncher] = {}
        self.contributors = ToolContributorRegistry()
        self.configuration = configuration
        self.factory = AgentFactory(configuration)
        self.sessions = self._new_manager()

    @property
    def loaded(self) -> bool:
        """Always: a ``Runtime`` is built from a loaded configuration."""
        return True

    @property
    def settings(self) -> Settings:
        """The settings of the current configuration."""
        return self.configuration.settings

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
            provider = make_provider(
                instance,
                self._secrets,
                launcher=self._launcher_for(instance),
                resilience=self.configuration.settings.resilience,
            )
            self._providers[name] = provider
        return provider

    def _progress_of(self, name: str) -> Callable[[int | None, str], None] | None:
        report = self._on_launch_progress
        if report is None:
            return None
        return lambda percent, message: report(name, percent, message)

    def launcher(self, name: str) -> ProviderLauncher | None:
        """Return the launcher of instance ``name`` if it has a ``[launch]`` table."""
        instance = self.configuration.providers.get(name)
        return self._launcher_for(instance) if instance is not None else None

    def _launcher_for(self, instance: ProviderInstance) -> ProviderLauncher | None:
        if instance.launch is None:
            return None
        launcher = self._launchers.get(instance.name)
        if launcher is None:
            launcher = ProviderLauncher(
                instance.name,
                instance.launch,
                run_dir=self.configuration.paths.data_root / "run",
                source=instance.source,
                on_progress=self._progress_of(instance.name),
            )
            self._launchers[instance.name] = launcher
        return launcher

    def provider_health(self) -> list[dict[str, Any]]:
        """Return the health snapshot of every provider used so far, with its circuit."""
        return [
            {
                **provider.health.snapshot(),
                "circuit": provider.breaker.snapshot().as_json(),
                "keys": provider.keys.snapshot(),
            }
            for provider in self._providers.values()
        ]

    async def reload(self, configuration: Configuration) -> None:
        """Switch to ``configuration``: flush pools, close providers that changed."""
        self.sessions.flush()
        self._secrets.invalidate()
        for name, provider in list(self._providers.items()):
            if configuration.providers.get(name) != provider.instance:
                await provider.aclose()
                del self._providers[name]
            else:
                provider.reconfigure(configuration.settings.resilience)
        for name, launcher in list(self._launchers.items()):
            instance = configuration.providers.get(name)
            if instance is None or instance.launch != launcher.config:
                await launcher.aclose()
                del self._launchers[name]
        self.configuration = configuration
        self.factory = AgentFactory(configuration)
        self.sessions = self._new_manager()

    async def aclose(self) -> None:
        """Cancel pooled work, close every provider's HTTP client, stop attached servers."""
        self.sessions.flush()
        for provider in self._providers.values():
            await provider.aclose()
        self._providers.clear()
        for launcher in self._launchers.values():
            await launcher.aclose()
        self._launchers.clear()
