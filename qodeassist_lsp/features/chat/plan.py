"""``PlanRunner``: plan mode — a plan of steps, edited or approved, then run turn by turn.

The model writes a plan of steps, the user edits or approves it, then each step runs as a chat
turn with tools.

``start`` sends the user's task as a chat turn with the bundled plan instructions as a system
layer; when the turn finishes, its answer is read as a list of steps (``plan_parse``) and the
plan is proposed (a ``planUpdated`` event; an answer with no list is a ``planUpdated`` of state
``invalid`` with the error, the answer staying in the chat). ``update`` replaces the steps,
``approve`` (or ``resume``) runs the pending ones in order, each as its own chat turn, so each
turn that writes gets the checkpoint every chat turn gets before its first change of a file
(``checkpointId`` on the step). The plan lives in the chat's history file and is saved whenever
a step starts or ends: after a restart a step left ``running`` runs again on ``resume``.

While a plan runs, its chat is busy: a message sent into it (a planning one too) is refused with
``ChatBusy``, as one sent while a turn streams is; ``cancel`` stops the plan.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from qodeassist_lsp.core.events import (
    FailedEvent,
    FileEditEvent,
    FinishedEvent,
    PlanUpdatedEvent,
    SessionEvent,
    TerminalEvent,
)
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.features.chat.chat_state import Chat, SendInput
from qodeassist_lsp.features.chat.plan_host import ChatHost
from qodeassist_lsp.features.chat.plan_parse import PlanInvalid, parse_steps, prompt
from qodeassist_lsp.features.chat.plan_state import Plan, PlanStep, StepStatus, new_step_id
from qodeassist_lsp.tools.edits.checkpoints import checkpoint_id
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo, QodeAssistError

log = logging.getLogger("qodeassist.chat")

EDITABLE = ("pending", "done", "skipped")
"""The statuses a user may give a step with ``plan/update``."""


class PlanError(QodeAssistError, ValueError):
    """A plan request that cannot be done now (the message says what to do instead)."""


class PlanRunner:
    """The plans of the chats of one chat service, and the tasks running them."""

    def __init__(self, service: ChatHost, personas: Callable[[], Path]) -> None:
        """Run plans through ``service``'s chats; the plan prompt is in ``personas``."""
        self._service = service
        self._personas = personas
        self._tasks: dict[str, asyncio.Task[TerminalEvent]] = {}

    # -- planning ----------------------------------------------------------------------------
    async def start(self, params: SendInput) -> tuple[str, Request]:
        """Send ``params`` as a planning turn; its answer becomes the chat's proposed plan."""
        layer = prompt(self._personas())
        system = f"{params.system}\n\n{layer}" if params.system else layer
        chat_id, request = await self._service.send(dataclasses.replace(params, system=system))
        chat = self._service.open_chat(chat_id)
        request.add_listener(lambda event: self._planned(chat, request, event))
        return chat_id, request

    def _planned(self, chat: Chat, request: Request, event: SessionEvent) -> None:
        """Read the finished planning turn's answer as the plan (or say why it is none)."""
        if event.kind != "finished":
            return
        try:
            plan = Plan.titled(parse_steps(chat.history.last_assistant_text()))
        except PlanInvalid as exc:
            log.info("chat %s: no plan in the answer: %s", chat.chat_id, exc)
            error = ErrorInfo(ErrorCategory.VALIDATION, str(exc))
            self._service.publish(chat, PlanUpdatedEvent(request.id, "invalid", (), error))
            return
        self._publish(chat, plan, request.id)

    # -- the user's answer -------------------------------------------------------------------
    def get(self, chat_id: str) -> Plan | None:
        """Return the plan of ``chat_id`` (None when it has none)."""
        return Plan.of(self._service.open_chat(chat_id).file.plan)

    def update(self, chat_id: str, steps: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Replace the steps of the chat's plan (or give it one); return the plan."""
        chat = self._service.open_chat(chat_id)
        self._check_idle(chat_id)
        old = Plan.of(chat.file.plan)
        known = {step.id: step for step in old.steps} if old is not None else {}
        new: list[PlanStep] = []
        for n, raw in enumerate(steps, 1):
            title = " ".join(str(raw.get("title") or "").split())
            if not title:
                raise PlanError(f"step {n} has no title; every step needs one")
            status = str(raw.get("status") or "pending")
            if status not in EDITABLE:
                raise PlanError(f"step {n}: status {status!r} cannot be set; use one of {EDITABLE}")
            kept = known.get(str(raw.get("id") or ""))
            step = kept if kept is not None else PlanStep(new_step_id(), title)
            step.title, step.status = title, cast(StepStatus, status)
            new.append(step)
        if not new:
            raise PlanError("a plan needs at least one step")
        state = old.state if old is not None and old.state != "done" else "proposed"
        plan = Plan(new, "proposed" if state == "running" else state)
        self._publish(chat, plan, "")
        return plan.to_json()

    def approve(self, chat_id: str) -> dict[str, Any]:
        """Run the plan's pending steps (a step left running or failed runs again)."""
        chat = self._service.open_chat(chat_id)
        self._check_idle(chat_id)
        self._service.ensure_idle(chat)  # the planning turn (or another message) still answers
        plan = Plan.of(chat.file.plan)
        if plan is None or not plan.steps:
            raise PlanError(
                f'chat {chat_id!r} has no plan; send a message with mode "plan" first, or '
                "write the steps with qodeassist/chat/plan/update"
            )
        for step in plan.steps:
            if step.status in ("running", "failed"):
                step.status, step.error = "pending", ""
        plan.state = "running"
        self._publish(chat, plan, "")
        task = asyncio.create_task(self._run(chat, plan), name=f"qa-plan-{chat_id}")
        self._tasks[chat_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(chat_id, None))
        return plan.to_json()

    async def run(self, chat_id: str) -> TerminalEvent:
        """Approve the plan and wait until it ends; return how its last step ended."""
        self.approve(chat_id)
        return await self._tasks[chat_id]

    async def cancel(self, chat_id: str) -> dict[str, Any]:
        """Stop the plan after cancelling the running step; it can be resumed later."""
        chat = self._service.open_chat(chat_id)
        task = self._tasks.get(chat_id)
        if task is not None:
            self._service.cancel(chat_id)  # the step ends cancelled; the run marks the plan
            await asyncio.wait({task}, timeout=5)
        plan = Plan.of(chat.file.plan)
        if plan is None:
            raise PlanError(f"chat {chat_id!r} has no plan")
        if plan.state in ("proposed", "running"):
            plan.state = "cancelled"
            self._publish(chat, plan, "")
        return plan.to_json()

    def running(self, chat_id: str) -> bool:
        """Whether the plan of ``chat_id`` is running its steps."""
        return chat_id in self._tasks

    def _check_idle(self, chat_id: str) -> None:
        if chat_id in self._tasks:
            raise PlanError(
                f"the plan of chat {chat_id!r} is running; cancel it first "
                "(qodeassist/chat/plan/cancel)"
            )

    # -- running -----------------------------------------------------------------------------
    async def _run(self, chat: Chat, plan: Plan) -> TerminalEvent:
        """Run the pending steps in order, as chat turns; stop at a failure or cancellation."""
        total = len(plan.steps)
        for n, step in enumerate(plan.steps, 1):
            if step.status != "pending":
                continue
            step.status = "running"
            message = (
                f"Carry out step {n} of {total} of the plan: {step.title}\n\nThe plan:\n"
                f"{plan.numbered(step)}\n\nDo only this step, with the tools you need, and "
                "say briefly what you did."
            )
            try:
                _, request = await self._service.send(
                    SendInput(message, chat_id=chat.chat_id), by_plan=True
                )
            except QodeAssistError as exc:
                step.status, step.error, plan.state = "failed", str(exc), "failed"
                error = ErrorInfo(ErrorCategory.VALIDATION, str(exc))
                self._publish(chat, plan, "", error)
                return FailedEvent("", error)
            step.request_id = request.id
            request.add_listener(functools.partial(_checkpointed, step, request.id))
            self._publish(chat, plan, request.id)
            terminal = await request.wait()
            if terminal.kind == "finished":
                step.status = "done"
            elif terminal.kind == "cancelled":
                step.status, plan.state = "pending", "cancelled"
                self._publish(chat, plan, request.id)
                return terminal
            else:
                error = terminal.error
                step.status, step.error, plan.state = "failed", error.message, "failed"
                self._publish(chat, plan, request.id, error)
                return terminal
            self._publish(chat, plan, request.id)
        plan.state = "done"
        self._publish(chat, plan, "")
        return FinishedEvent("", "end_turn")

    def _publish(
        self, chat: Chat, plan: Plan, request_id: str, error: ErrorInfo | None = None
    ) -> None:
        """Store the plan with the chat (saved) and tell the client."""
        chat.file.plan = plan.to_json()
        self._service.publish(chat, plan.event(request_id, error))

    async def aclose(self) -> None:
        """Stop the running plans; their steps stay ``running`` on disk, to resume later."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _checkpointed(step: PlanStep, request_id: str, event: SessionEvent) -> None:
    """Name the step's checkpoint once its turn proposes a file edit."""
    if isinstance(event, FileEditEvent):
        step.checkpoint_id = checkpoint_id(request_id)
