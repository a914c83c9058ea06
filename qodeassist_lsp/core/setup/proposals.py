"""The parts of a setup plan: instances, agents and pipeline slots to write, and the plan itself."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from qodeassist_lsp.config.pipelines import (
    CHAT_ASSISTANT,
    CHAT_COMPRESSION,
    CODE_COMPLETION,
    QUICK_REFACTOR,
    pipeline_specs,
)

Role = Literal["completion", "chat", "refactor", "compression"]
SETUP_TAG = "setup"
"""The tag of every agent setup writes: how a re-run recognises its own agents."""
LIST_SLOTS = tuple(spec.slot for spec in pipeline_specs() if spec.ordered)
SLOT_ROLES: dict[str, Role] = {
    CODE_COMPLETION.slot: "completion",
    CHAT_ASSISTANT.slot: "chat",
    QUICK_REFACTOR.slot: "refactor",
    CHAT_COMPRESSION.slot: "compression",
}
"""The slots setup fills, and which kind of model each wants."""


@dataclass(frozen=True)
class ProviderProposal:
    """A user provider instance to write: a bundled one with another ``url``."""

    name: str
    extends: str
    url: str
    file: Path
    server: str
    demo: bool = False
    """It serves an embedded demo model: the instance says ``demo = true``."""
    local: bool = False
    """A model server (vLLM, SGLang, KoboldCpp) behind ``OpenAI Compatible``, which alone counts
    as remote on a loopback URL (it could be a proxy): the instance says ``local = true``."""

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {**asdict(self), "file": str(self.file)}


@dataclass(frozen=True)
class AgentProposal:
    """A user agent to write: a bundled agent with the found model (and instance)."""

    name: str
    role: Role
    extends: str
    model: str
    provider_instance: str
    """Set only when it differs from the parent's."""
    file: Path
    server: str
    tags: tuple[str, ...] = ()
    enable_tools: bool | None = None
    state: Literal["new", "update", "same"] = "new"
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        shown = {**asdict(self), "file": str(self.file)}
        del shown["tags"], shown["enable_tools"]
        return shown


@dataclass(frozen=True)
class SlotChange:
    """One pipeline slot before and after (``list`` slots as lists, single ones as strings)."""

    slot: str
    before: list[str] | str
    after: list[str] | str

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {"slot": self.slot, "before": self.before, "after": self.after}


@dataclass
class SetupPlan:
    """Everything setup would write, and why."""

    config_root: Path
    providers: list[ProviderProposal] = field(default_factory=list)
    agents: list[AgentProposal] = field(default_factory=list)
    slots: list[SlotChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def pipelines_file(self) -> Path:
        """The user's ``pipelines.toml``."""
        return self.config_root / "pipelines.toml"

    @property
    def writes(self) -> bool:
        """Whether applying the plan changes any file."""
        return bool(self.providers or self.slots or any(a.state != "same" for a in self.agents))

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {
            "providers": [p.to_json() for p in self.providers],
            "agents": [a.to_json() for a in self.agents],
            "pipelines": {
                "file": str(self.pipelines_file),
                "changes": [s.to_json() for s in self.slots],
            },
            "notes": list(self.notes),
            "writes": self.writes,
        }
