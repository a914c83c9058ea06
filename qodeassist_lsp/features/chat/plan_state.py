"""A plan-mode chat's plan: its steps and their states, as stored in the chat's history file.

The plan is kept in the history file's ``plan`` object (``{state, steps: [{id, title, status,
requestId?, checkpointId?, error?}]}``), so it survives a restart with the chat; `Plan.of` reads
it back leniently (a hand-edited or damaged entry is dropped, not fatal).
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from qodeassist_lsp.core.events import PlanStepInfo, PlanUpdatedEvent
from qodeassist_lsp.wire.errors import ErrorInfo

StepStatus = Literal["pending", "running", "done", "failed", "skipped"]
PlanState = Literal["proposed", "running", "cancelled", "failed", "done"]
STEP_STATUSES: tuple[str, ...] = get_args(StepStatus)
PLAN_STATES: tuple[str, ...] = get_args(PlanState)


def new_step_id() -> str:
    """Return a fresh, short step id."""
    return "s-" + secrets.token_hex(4)


@dataclass
class PlanStep:
    """One step: what to do and how far it got."""

    id: str
    title: str
    status: StepStatus = "pending"
    request_id: str = ""
    checkpoint_id: str = ""
    error: str = ""

    def info(self) -> PlanStepInfo:
        """Return the step as the ``planUpdated`` event shows it."""
        return PlanStepInfo(**asdict(self))


@dataclass
class Plan:
    """The steps of one chat's plan and where the plan stands."""

    steps: list[PlanStep] = field(default_factory=list)
    state: PlanState = "proposed"

    @classmethod
    def titled(cls, titles: list[str]) -> Plan:
        """Return a proposed plan of pending steps with ``titles``."""
        return cls([PlanStep(new_step_id(), title) for title in titles])

    @classmethod
    def of(cls, data: Any) -> Plan | None:
        """Return the plan stored as ``data`` (None when there is none)."""
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            return None
        steps = []
        for raw in data["steps"]:
            if not isinstance(raw, dict) or not isinstance(raw.get("title"), str):
                continue
            status = raw.get("status")
            steps.append(
                PlanStep(
                    str(raw.get("id") or new_step_id()),
                    raw["title"],
                    status if status in STEP_STATUSES else "pending",
                    str(raw.get("requestId") or ""),
                    str(raw.get("checkpointId") or ""),
                    str(raw.get("error") or ""),
                )
            )
        state = data.get("state")
        return cls(steps, state if state in PLAN_STATES else "proposed")

    def to_json(self) -> dict[str, Any]:
        """Return the stored (and ``chat/get``) form."""
        return {"state": self.state, "steps": [step.info().to_json() for step in self.steps]}

    def event(self, request_id: str = "", error: ErrorInfo | None = None) -> PlanUpdatedEvent:
        """Return the ``planUpdated`` event of the plan as it is now."""
        steps = tuple(step.info() for step in self.steps)
        return PlanUpdatedEvent(request_id, self.state, steps, error)

    def numbered(self, current: PlanStep) -> str:
        """Return the plan as a checklist, marking ``current``."""
        marks = {"done": "[x]", "skipped": "[skipped]", "failed": "[failed]"}
        lines = []
        for n, step in enumerate(self.steps, 1):
            mark = "[now]" if step is current else marks.get(step.status, "[ ]")
            lines.append(f"{n}. {mark} {step.title}")
        return "\n".join(lines)
