"""The doctor's one-line fixes: what to run, or which of the user's own files to edit.

Fixes never point at the bundled definitions: those live inside the installed package and are
read-only. A provider instance's url is changed by ``qodeassist-lsp providers override NAME
url=…`` (a same-name file in ``<config>/providers/`` that extends the bundled instance by its own
name), a model by ``<config>/agent_models.json``. Every fix printed here is one that works when
followed as written (tests/e2e/test_cli_doctor.py follows them).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.provider_override import override_path
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.core.agent import Agent
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.wire.protocols import WireProtocol


def auth_fix(provider: GenericProvider) -> str:
    """Return the fix of a missing or rejected key: store one, or export its variable."""
    context = provider.error_context
    env = context.api_key_env
    return f"run `{context.secrets_command}`" + (f" or export {env}=…" if env else "")


def instance_file(instance: ProviderInstance, config_root: Path) -> str:
    """Return the file a user edits to change ``instance``: their own, never a bundled one.

    A bundled instance is changed by a file of the same name in ``<config>/providers/`` that
    ``extends`` it by its own name and sets only the keys it changes; bundled files live inside
    the installed package and are read-only.
    """
    source = instance.source
    if source is not None and instance.layer is not Layer.BUNDLED:
        return str(source)
    path = override_path(instance, config_root)
    name = json.dumps(instance.name, ensure_ascii=False)
    return f"{path} (with name = {name} and extends = {name}, then the keys to change)"


def reach_fix(agent: Agent, config_root: Path) -> str:
    """Return the fix of an unreachable provider: start it, or correct its url in a user file."""
    if agent.provider.launch is not None:
        return (
            f"qodeassist-lsp starts {agent.provider.name!r} itself ([launch]): give it time "
            "(`qodeassist-lsp doctor --timeout 120`) and check the server's log"
        )
    del config_root  # the command finds (or writes) the user's file itself
    name = shlex.quote(agent.provider.name)
    return (
        f"start the server at {agent.provider.url}, or point {agent.provider.name!r} at the "
        f"right url: `qodeassist-lsp providers override {name} url=URL`"
    )


def model_fix(agent: Agent, config_root: Path) -> str:
    """Return the fix of a missing model: pull it, or pick another in the user's overrides."""
    overrides = config_root / "agent_models.json"
    if agent.api.protocol == WireProtocol.OLLAMA or "ollama" in agent.api.name.lower():
        return f"run `ollama pull {agent.model}`, or pick another model in {overrides}"
    name = shlex.quote(agent.provider.name)
    return (
        f"pick a model from `qodeassist-lsp models {name}` and set it for "
        f"{agent.name!r} in {overrides}"
    )


def render_fix(agent: Agent) -> str:
    """Return the fix of a request the provider refused: look at what is sent."""
    return f"inspect the request with `qodeassist-lsp agents render {shlex.quote(agent.name)}`"
