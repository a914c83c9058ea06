"""Pipeline slots in a setup plan: what the user's ``pipelines.toml`` holds, and what changes.

The chat picker list gets the new chat agents first (nothing is removed); the completion agent
goes before the first catch-all agent (one without ``[match]``); single slots are replaced. A
slot the user set in ``pipelines.toml`` to an agent setup did not make (other than the offline
Embedded ones) is kept, with a note saying how to switch.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.pipelines import find_pipeline
from qodeassist_lsp.core.setup.proposals import (
    LIST_SLOTS,
    SETUP_TAG,
    SLOT_ROLES,
    SetupPlan,
    SlotChange,
)


def current_slots(config: Configuration) -> dict[str, list[str] | str]:
    """Return the user-level slots: the user's ``pipelines.toml`` over the bundled one."""
    values: dict[str, list[str] | str] = {}
    paths = config.paths
    for path in (paths.bundled / "pipelines.toml", paths.config_root / "pipelines.toml"):
        values.update(_read_slots(path))
    return values


def user_slots(config_root: Path) -> set[str]:
    """Return the slots the user's own ``pipelines.toml`` sets."""
    return set(_read_slots(config_root / "pipelines.toml"))


def _read_slots(path: Path) -> dict[str, list[str] | str]:
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("pipelines")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    if not isinstance(table, dict):
        return {}
    slots: dict[str, list[str] | str] = {}
    for slot in SLOT_ROLES:
        value = table.get(slot)
        items = value if isinstance(value, list) else [value]
        names = [v.strip() for v in items if isinstance(v, str) and v.strip()]
        if value is not None:
            slots[slot] = names if slot in LIST_SLOTS else (names[0] if names else "")
    return slots


class SlotPlanner:
    """Adds the slot changes (or notes) for the agents a plan proposes."""

    def __init__(self, config: Configuration, plan: SetupPlan) -> None:
        self.config = config
        self.plan = plan
        self.user_set = user_slots(config.paths.config_root)

    def slot(self, slot: str, before: list[str] | str, names: list[str]) -> None:
        """Propose ``names`` for ``slot``, whose user-level value is ``before``."""
        user_set = slot in self.user_set
        after: list[str] | str
        if isinstance(before, list):
            after = self._list_slot(slot, before, names, user_set)
        elif user_set and before and not self._replaceable(before):
            self._kept(slot, before, names[0])
            return
        else:
            after = names[0]
        if after != before:
            self.plan.slots.append(SlotChange(slot, before, after))
            project = self.config.paths.project_config
            if project is not None and slot in _read_slots(project / "pipelines.toml"):
                self.plan.notes.append(
                    f"{project / 'pipelines.toml'} sets {slot} too, and wins in that project"
                )

    def _list_slot(
        self, slot: str, before: list[str], names: list[str], user_set: bool
    ) -> list[str]:
        if not find_pipeline(slot).routed:
            return names + [n for n in before if n not in names]
        rest = [n for n in before if n not in names and not self._ours(n)]
        catch_all = next(
            (
                i
                for i, n in enumerate(rest)
                if n not in self.config.agents or self.config.agents[n].match.is_catch_all
            ),
            len(rest),
        )
        if user_set and catch_all < len(rest) and not self._replaceable(rest[catch_all]):
            self._kept(slot, rest[catch_all], names[0])
            return before
        return rest[:catch_all] + names + rest[catch_all:]

    def _kept(self, slot: str, current: str, proposed: str) -> None:
        self.plan.notes.append(
            f"{slot} keeps {current!r}, which you chose in pipelines.toml; to use "
            f"{proposed!r} instead, put it there yourself"
        )

    def _ours(self, name: str) -> bool:
        profile = self.config.agents.get(name)
        return profile is not None and profile.layer is Layer.USER and SETUP_TAG in profile.tags

    def _replaceable(self, name: str) -> bool:
        profile = self.config.agents.get(name)
        return profile is None or self._ours(name) or "embedded" in profile.tags
