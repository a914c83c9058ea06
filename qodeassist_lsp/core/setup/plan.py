"""What ``setup`` proposes for the servers it found: provider instances, agents, pipeline slots.

The smallest configuration that works: a server on its kind's usual port is reached through the
bundled provider instance (or any loaded instance already pointing at it); another port gets one
user instance that ``extends`` the bundled one and only changes ``url``. Every agent extends a
bundled concrete agent of that server kind and sets the found model (and ``provider_instance``
when the server needs another instance). Completion gets a FIM-capable base model (the server
builds the FIM prompt when it says it can — Ollama ``insert``, llama.cpp ``/infill`` — else
``fim_prompt(ctx)`` builds it from the model family); chat, quick refactor and compression get
instruction-tuned models (what the server says decides, see ``probe``). A model qodeassist-lsp
ships (the embedded Gemma 3 270M and SmolLM2-135M-Instruct, ``embedded serve`` on any port) is
configured like its bundled Embedded agents, which it extends, on an instance that keeps
``demo = true``; on the bundled Embedded instance's own port nothing is proposed (its agents are
bundled). Agents made by setup carry the ``setup`` tag; re-running setup finds
them by name and proposes nothing new for them, so it is idempotent.

Pipeline slots are ``slots``'s business; the plan's parts are in ``proposals``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.fim_templates import detect_family, instruct_model_problem
from qodeassist_lsp.core.setup.probe import (
    MODEL_SERVERS,
    FoundModel,
    FoundServer,
    ServerKind,
    Target,
)
from qodeassist_lsp.core.setup.proposals import (
    LIST_SLOTS,
    SETUP_TAG,
    SLOT_ROLES,
    AgentProposal,
    ProviderProposal,
    Role,
    SetupPlan,
)
from qodeassist_lsp.core.setup.slots import SlotPlanner, current_slots
from qodeassist_lsp.wire.urls import is_loopback_host

MAX_CHAT_AGENTS = 3
_ROLE_WORDS: dict[Role, str] = {
    "completion": "Completion",
    "chat": "Chat",
    "refactor": "Quick Refactor",
    "compression": "Compression",
}
# A base model by its name: "-base", or "-code" (codellama:7b-code, codegemma:7b-code).
_BASE = re.compile(r"(?:^|[-_:./ ])(base|code)(?=$|[-_:./ ])")


@dataclass(frozen=True)
class KnownModel:
    """A model qodeassist-lsp ships: the bundled instance and agents that serve it."""

    instance: str
    agents: dict[Role, str]


KNOWN_MODELS: dict[str, KnownModel] = {
    "gemma3-270m": KnownModel("Embedded", {"completion": "Embedded Completion"}),
    "smollm2-135m-instruct": KnownModel(
        "Embedded Instruct",
        {
            "chat": "Embedded Chat",
            "refactor": "Embedded Quick Refactor",
            "compression": "Embedded Compression",
        },
    ),
}
"""The embedded models (``embedded serve``), by the name their server reports."""


@dataclass(frozen=True)
class Recipe:
    """How one server kind is configured: its bundled instance and the agents to extend."""

    short: str
    instance: str
    fim: str
    """Parent when the server builds FIM prompts itself ("" when it cannot)."""
    fim_template: str
    chat: str
    refactor: str
    compression: str
    default_port: int = 0
    completion_instance: str = ""
    """The instance completion goes through, when it is not ``instance``."""


RECIPES: dict[ServerKind, Recipe] = {
    "ollama": Recipe(
        "Ollama",
        "Ollama (Native)",
        "Ollama Completion — FIM",
        "Ollama Completion — FIM Template",
        "Ollama Chat — Simple",
        "Ollama Quick Refactor — Simple",
        "Ollama Compression — 8 GB",
        11434,
    ),
    "llama.cpp": Recipe(
        "llama.cpp",
        "llama.cpp",
        "llama.cpp Completion — FIM",
        "llama.cpp Completion — FIM Template",
        "llama.cpp Chat",
        "llama.cpp Quick Refactor",
        "llama.cpp Compression",
        8080,
    ),
    "lmstudio": Recipe(
        "LM Studio",
        "LM Studio (Responses API)",
        "",
        "llama.cpp Completion — FIM Template",
        "LM Studio Chat",
        "LM Studio Quick Refactor",
        "LM Studio Compression",
        1234,
        completion_instance="LM Studio (Chat Completions)",
    ),
    "openai": Recipe(
        "",
        "OpenAI Compatible",
        "",
        "llama.cpp Completion — FIM Template",
        "llama.cpp Chat",
        "llama.cpp Quick Refactor",
        "llama.cpp Compression",
    ),
}


def slug(text: str) -> str:
    """Return a file-name-safe form of ``text``: lower case, other runs as ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", text.casefold()).strip("_") or "agent"


def is_base_model(name: str) -> bool:
    """Tell whether the name marks a pre-trained model (``-base``, ``-code``, StarCoder …).

    A Hugging Face id of a FIM family (``Qwen/Qwen2.5-Coder-1.5B``) names the base model unless
    it says ``Instruct``, as vLLM and LM Studio list them.
    """
    if instruct_model_problem(name):
        return False
    family = detect_family(name)
    if family is not None and (family.key == "starcoder" or "/" in name):
        return True
    return bool(_BASE.search(name.casefold()))


def chat_capable(model: FoundModel) -> bool:
    """Whether ``model`` can serve chat, refactor and compression."""
    if model.embedding or "embed" in model.name.casefold() or model.chat is False:
        return False
    return not is_base_model(model.name)


def completion_parent(model: FoundModel, recipe: Recipe) -> str:
    """Return the agent to extend for FIM with ``model``, or ``""`` when it cannot do FIM."""
    if model.embedding or instruct_model_problem(model.name):
        return ""  # the loader refuses instruct models on FIM agents
    if model.fim and recipe.fim:
        return recipe.fim
    return recipe.fim_template if detect_family(model.name) else ""


def known_model(server: FoundServer, model: FoundModel) -> KnownModel | None:
    """Return the embedded model ``model`` is, when ``server`` is llama.cpp serving it."""
    return KNOWN_MODELS.get(model.name) if server.kind == "llama.cpp" else None


def build_plan(servers: Sequence[FoundServer], config: Configuration) -> SetupPlan:
    """Propose instances, agents and pipeline slots for ``servers`` (in probe order)."""
    plan = SetupPlan(config.paths.config_root)
    planner = _Planner(config, plan)
    slots = SlotPlanner(config, plan)
    completion: list[str] = []
    chats: list[str] = []
    singles: dict[Role, str] = {}
    for server in servers:
        found = planner.server(server)
        completion += found.get("completion", [])[:1]
        chats += found.get("chat", [])
        for role in ("refactor", "compression"):
            if found.get(role):
                singles.setdefault(role, found[role][0])
    if not plan.agents:
        return plan
    proposed: dict[Role, list[str]] = {"completion": completion[:1], "chat": chats}
    proposed.update({role: [name] for role, name in singles.items()})
    current = current_slots(config)
    for slot, role in SLOT_ROLES.items():
        if proposed.get(role):
            empty: list[str] | str = [] if slot in LIST_SLOTS else ""
            slots.slot(slot, current.get(slot, empty), proposed[role])
    return plan


class _Planner:
    """Fills one plan; remembers the instances already proposed."""

    def __init__(self, config: Configuration, plan: SetupPlan) -> None:
        self.config = config
        self.plan = plan
        self.files: set[Path] = set()

    def server(self, server: FoundServer) -> dict[Role, list[str]]:
        recipe = RECIPES[server.kind]
        names: dict[Role, list[str]] = {}
        if not server.models:
            self.plan.notes.append(
                f"{server.label} on {server.target} offers no models: pull or load one, then "
                "run setup again"
            )
            return names
        known = [(m, known_model(server, m)) for m in server.models]
        if all(k is not None for _, k in known):
            for model, k in known:
                assert k is not None
                self._known(server, model, k, names)
            return names
        fim = [(m, completion_parent(m, recipe)) for m in server.models]
        fim = [(m, parent) for m, parent in fim if parent]
        fim.sort(key=lambda item: (item[1] != recipe.fim, item[0].size or math.inf, item[0].name))
        chats = sorted(
            (m for m in server.models if chat_capable(m)),
            key=lambda m: (-(m.size or 0), m.name),
        )[:MAX_CHAT_AGENTS]
        if fim:
            model, parent = fim[0]
            family = detect_family(model.name)
            named = f"a {family.label} base model by its name" if family else ""
            why = f"FIM: {model.evidence if model.fim else named}"
            self._agent(server, recipe, "completion", parent, model, why, names)
        else:
            self.plan.notes.append(
                f"{server.label} on {server.target}: no FIM-capable base model "
                "(e.g. qwen2.5-coder:1.5b-base); code completion is left as it is"
            )
        for model in chats:
            self._agent(server, recipe, "chat", recipe.chat, model, model.evidence, names)
        if chats:
            coder = next((m for m in chats if "cod" in m.name.casefold()), chats[0])
            self._agent(server, recipe, "refactor", recipe.refactor, coder, coder.evidence, names)
            self._agent(server, recipe, "compression", recipe.compression, chats[0], "", names)
        elif server.models:
            self.plan.notes.append(
                f"{server.label} on {server.target}: no instruction-tuned model for chat, "
                "refactor and compression"
            )
        return names

    def _known(
        self,
        server: FoundServer,
        model: FoundModel,
        known: KnownModel,
        names: dict[Role, list[str]],
    ) -> None:
        """Configure an embedded model like its bundled agents, on a ``demo`` instance."""
        recipe = RECIPES["llama.cpp"]
        if recipe.instance not in self.config.providers:
            self.plan.notes.append(f"provider instance {recipe.instance!r} is not loaded")
            return
        instance = self._instance(server, recipe.instance, demo=True, label=known.instance)
        if instance == known.instance:
            self.plan.notes.append(
                f"{server.label} on {server.target} is the bundled {known.instance!r} server "
                f"({model.name}, an offline demo model): its Embedded agents already use it"
            )
            return
        why = f"{model.name} is the embedded demo model of the bundled {known.instance!r}"
        for role, parent in known.agents.items():
            self._agent(server, recipe, role, parent, model, why, names, instance, known.instance)

    def _agent(
        self,
        server: FoundServer,
        recipe: Recipe,
        role: Role,
        parent_name: str,
        model: FoundModel,
        why: str,
        names: dict[Role, list[str]],
        instance: str = "",
        short: str = "",
    ) -> None:
        parent = self.config.agents.get(parent_name)
        if parent is None:
            self.plan.notes.append(f"bundled agent {parent_name!r} is not loaded; no {role} agent")
            return
        base = (recipe.completion_instance if role == "completion" else "") or recipe.instance
        if base not in self.config.providers:
            self.plan.notes.append(f"provider instance {base!r} is not loaded; no {role} agent")
            return
        instance = instance or self._instance(server, base)
        default = server.target.port == recipe.default_port and not short
        port = "" if default else f" :{server.target.port}"
        prefix = short or recipe.short or server.label
        name = f"{prefix}{port} {_ROLE_WORDS[role]} — {model.name}"
        existing = self.config.agents.get(name)
        if existing is not None and existing.layer is Layer.BUNDLED:
            name += " (setup)"
            existing = self.config.agents.get(name)
        tools = None
        if role == "chat" and server.kind == "ollama" and model.tools:
            tools = True
        elif role == "chat" and server.kind == "openai":
            tools = False  # vLLM and friends need server flags for tool calls
        proposal = AgentProposal(
            name=name,
            role=role,
            extends=parent_name,
            model=model.name,
            provider_instance="" if instance == parent.provider_instance else instance,
            file=self._file(existing, "agents", name),
            server=f"{server.label} on {server.target}",
            tags=(*[t for t in parent.tags if t != SETUP_TAG], SETUP_TAG),
            enable_tools=tools,
            state=_state(existing, parent_name, model.name, instance),
            why=why,
        )
        self.plan.agents.append(proposal)
        names.setdefault(role, []).append(name)

    def _file(self, existing: AgentProfile | None, folder: str, name: str) -> Path:
        """Return the agent's own user file, else a new ``setup_*.toml`` no one else uses."""
        if existing is not None and existing.layer is Layer.USER and existing.source:
            return existing.source
        stem = self.config.paths.config_root / folder / f"setup_{slug(name)}"
        path, number = stem.with_suffix(".toml"), 1
        # Two names may share a slug (qwen2.5 / qwen2-5): never edit another definition's file.
        while path.exists() or path in self.files:
            number += 1
            path = stem.with_name(f"{stem.name}_{number}.toml")
        self.files.add(path)
        return path

    def _instance(
        self, server: FoundServer, base_name: str, demo: bool = False, label: str = ""
    ) -> str:
        """Return the instance reaching ``server`` like ``base_name`` (proposed if missing).

        ``demo``: it serves an embedded demo model, and the instance must say so (a real model
        never goes through a demo instance, nor a demo model through a plain one).
        """
        base = self.config.providers[base_name]
        path = urlsplit(base.url).path.rstrip("/")
        others = (p for n, p in sorted(self.config.providers.items()) if n != base_name)
        candidates = [base, *others]
        for provider in candidates:
            if (
                provider.client_api == base.client_api
                and provider.demo == demo
                and _reaches(provider.url, server.target, path)
            ):
                return provider.name
        for proposal in self.plan.providers:
            if (
                proposal.extends == base_name
                and proposal.demo == demo
                and proposal.url == server.target.base_url + path
            ):
                return proposal.name
        label = label or (base_name if server.kind != "openai" else server.label)
        name = f"{label} :{server.target.port}"
        if name in self.config.providers:
            name += " (setup)"
        self.plan.providers.append(
            ProviderProposal(
                name,
                base_name,
                server.target.base_url + path,
                self._file(None, "providers", name),
                f"{server.label} on {server.target}",
                demo,
                local=server.kind == "openai" and server.label in MODEL_SERVERS,
            )
        )
        return name


def _reaches(url: str, target: Target, path: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None:
        return False
    return (
        is_loopback_host(parts.hostname)
        and (parts.port or 80) == target.port
        and parts.path.rstrip("/") == path
    )


def _state(
    existing: AgentProfile | None, parent: str, model: str, instance: str
) -> Literal["new", "update", "same"]:
    if existing is None:
        return "new"
    chain = existing.extends_chain
    same = (
        len(chain) >= 2
        and chain[-2] == parent
        and existing.model == model
        and existing.provider_instance == instance
    )
    return "same" if same else "update"
