"""The doctor's pointer to ``setup``: a local model server runs, but no pipeline uses it."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.core.setup.probe import (
    FoundServer,
    ProbeOutcome,
    Target,
    default_targets,
    discover,
)
from qodeassist_lsp.wire.urls import is_loopback_host

HINT_TIMEOUT_S = 1.0


def used_models(config: Configuration) -> dict[int, set[str]]:
    """Return, per loopback port, the models pipeline agents ask it for (overrides applied)."""
    used: dict[int, set[str]] = {}
    for name in config.pipelines.agent_names():
        profile = config.agents.get(name)
        if profile is None:
            continue
        override = config.overrides.get(name)
        provider = config.providers.get(effective_instance(config, profile))
        if provider is None:
            continue
        parts = urlsplit(provider.url)
        if parts.hostname and is_loopback_host(parts.hostname):
            port = parts.port or (443 if parts.scheme == "https" else 80)
            used.setdefault(port, set()).add((override.model if override else "") or profile.model)
    return used


def _uses(server: FoundServer, models: set[str] | None) -> bool:
    if models is None:
        return False
    # llama-server answers with the one model it has loaded, whatever name the agent sends.
    return server.kind == "llama.cpp" or bool(models & {m.name for m in server.models})


def setup_hint(config: Configuration, outcomes: Sequence[ProbeOutcome]) -> str | None:
    """Return a line pointing to ``setup`` when a found server is unused, else None.

    A server is used when a pipeline agent talks to its port with a model it has (the bundled
    chat list names Ollama agents whose models may not be pulled: they do not count).
    """
    used = used_models(config)
    unused = [
        o.server
        for o in outcomes
        if o.server is not None and o.server.models and not _uses(o.server, used.get(o.target.port))
    ]
    if not unused:
        return None
    names = ", ".join(f"{s.label} on {s.target} ({len(s.models)} model(s))" for s in unused)
    return (
        f"hint: a model server runs on this machine that no pipeline uses: {names}. "
        "Run `qodeassist-lsp setup` to configure agents and pipelines for it."
    )


async def find_setup_hint(
    config: Configuration, targets: Sequence[Target] | None = None
) -> str | None:
    """Probe this machine's usual ports (quickly) and return ``setup_hint`` for what answers."""
    outcomes = await discover(default_targets() if targets is None else targets, HINT_TIMEOUT_S)
    return setup_hint(config, outcomes)
