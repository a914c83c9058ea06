"""Agents: a resolved profile bound to its provider instance, with its body compiled once.

``AgentFactory`` applies the user's overrides (model, provider instance, tools) and builds
``Agent`` objects; ``Agent.build_request`` turns a template context into the exact HTTP request
(URL, headers, JSON body) the provider's API expects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.client_apis import ClientApi
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.config.problems import did_you_mean
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.templating import BodyTemplate
from qodeassist_lsp.core.cache_control import apply_cache_control
from qodeassist_lsp.wire.errors import QodeAssistError
from qodeassist_lsp.wire.protocols import KEYS_IN_URL, PROMPT_CACHING, auth_headers, keyed_url
from qodeassist_lsp.wire.registry import protocol_api
from qodeassist_lsp.wire.tools import ToolSpec
from qodeassist_lsp.wire.urls import join_url

MODEL_PLACEHOLDER = "${MODEL}"
REDACTED = "***"


class AgentNotAvailable(QodeAssistError, LookupError):
    """The agent does not exist, is abstract or broken, or its provider instance is missing."""


@dataclass(frozen=True)
class PreparedRequest:
    """One HTTP request ready to send: POST ``url`` with ``headers`` and JSON ``body``."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        """Return the ``{"url", "headers", "body"}`` object ``agents render`` prints."""
        return {"url": self.url, "headers": self.headers, "body": self.body}


@dataclass(frozen=True)
class Agent:
    """What to call and what to send; holds no request state."""

    profile: AgentProfile
    provider: ProviderInstance
    model: str
    """The effective model: the override when set, else the profile's."""
    template: BodyTemplate
    enable_tools: bool

    @property
    def name(self) -> str:
        """The agent's unique name."""
        return self.profile.name

    @property
    def demo(self) -> bool:
        """Whether a tiny offline demo model answers (its provider instance says ``demo``)."""
        return self.provider.demo

    @property
    def api(self) -> ClientApi:
        """The ``client_api`` of the provider instance."""
        return self.provider.api

    @property
    def endpoint(self) -> str:
        """The endpoint with ``${MODEL}`` substituted (the API default when the agent has none)."""
        endpoint = self.profile.endpoint or self.api.default_endpoint
        return endpoint.replace(MODEL_PLACEHOLDER, self.model)

    def build_request(
        self,
        ctx: Mapping[str, Any],
        api_key: str | None,
        tools: Sequence[ToolSpec] = (),
    ) -> PreparedRequest:
        """Render the body for ``ctx`` and assemble URL, headers and payload.

        ``ctx`` is complete, as ``assemble_context`` or ``complete_context`` return it.

        ``tools`` are injected in the API's shape when the agent enables tools; Claude agents
        with ``cache_prompt`` get their cache breakpoints.
        """
        body: dict[str, Any] = {"model": self.model}
        body.update(self.template.render(ctx))
        protocol = self.api.protocol
        if self.enable_tools and tools:
            body["tools"] = protocol_api(protocol).tool_definitions(list(tools))
        caching = self.profile.cache_prompt and protocol in PROMPT_CACHING
        if caching:
            body = apply_cache_control(body, self.profile.cache_breakpoints, self.profile.cache_ttl)
        for key in KEYS_IN_URL.get(protocol, ()):
            body.pop(key, None)
        url = keyed_url(protocol, join_url(self.provider.url, self.endpoint), api_key)
        long_ttl = caching and self.profile.cache_ttl == "1h"
        headers = auth_headers(protocol, api_key, long_cache_ttl=long_ttl)
        return PreparedRequest(url, headers, body)


def demo_notice(agent: Agent) -> str:
    """Return the sentence that says ``agent`` is a demo model and how to get a real one."""
    return (
        f"{agent.name} runs an offline demo model ({agent.model}): tiny, fine for trying things "
        "out and often wrong. For a real assistant run `qodeassist-lsp setup`, or see "
        "docs/configuration.md."
    )


class AgentFactory:
    """Builds ``Agent`` objects from one configuration snapshot, applying overrides."""

    def __init__(self, configuration: Configuration) -> None:
        self._config = configuration
        self._templates: dict[str, BodyTemplate] = {}
        self._agents: dict[str, Agent] = {}  # agents are immutable; the snapshot is too

    def profile(self, name: str) -> AgentProfile:
        """Return the loaded profile called ``name`` or raise ``AgentNotAvailable``."""
        profile = self._config.agents.get(name)
        if profile is None:
            hint = did_you_mean(name, list(self._config.agents))
            raise AgentNotAvailable(
                f"no usable agent named {name!r}{hint} "
                "(run `qodeassist-lsp agents validate` to see load errors)"
            )
        return profile

    def effective_model(self, name: str) -> str:
        """Return the effective model of ``name``: the override, else the TOML value."""
        override = self._config.overrides.get(name)
        return (override.model if override else "") or self.profile(name).model

    def create(self, name: str) -> Agent:
        """Return the agent ``name`` with overrides applied (built once per snapshot)."""
        agent = self._agents.get(name)
        if agent is None:
            agent = self._agents[name] = self._build(name)
        return agent

    def _build(self, name: str) -> Agent:
        profile = self.profile(name)
        override = self._config.overrides.get(name)
        provider_name = effective_instance(self._config, profile)
        provider = self._config.providers.get(provider_name)
        if provider is None:
            raise AgentNotAvailable(
                f"agent {name!r} needs provider instance {provider_name!r}, which is not loaded"
            )
        template = self._templates.get(name)
        if template is None:
            template = BodyTemplate(
                profile.body, self._config.body_environments.for_file(profile.source)
            )
            self._templates[name] = template
        tools = profile.enable_tools
        if override and override.enable_tools is not None:
            tools = override.enable_tools
        return Agent(profile, provider, self.effective_model(name), template, tools)
