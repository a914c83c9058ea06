"""``PlanRunner`` over a stand-in chat service: plan, edit, approve, run, fail, cancel, resume."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.core.content import Message, TextBlock
from qodeassist_lsp.core.events import (
    CancelledEvent,
    FailedEvent,
    FileEditEvent,
    FinishedEvent,
    PlanUpdatedEvent,
    SessionEvent,
)
from qodeassist_lsp.core.history import ConversationHistory
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.features.chat.chat_state import Chat, SendInput
from qodeassist_lsp.features.chat.files import ChatBusy
from qodeassist_lsp.features.chat.history_format import ChatFile
from qodeassist_lsp.features.chat.plan import PlanError, PlanRunner
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

PLAN = "Sure.\n1. Read the code\n2. Change it\n3. Test it"


class FakeChats:
    """The part of ``ChatService`` the runner uses; each send answers as ``script`` says."""

    def __init__(self) -> None:
        self.chat = Chat("c1", ChatFile(), ConversationHistory(), loader=None)  # type: ignore[arg-type]
        self.sent: list[SendInput] = []
        self.events: list[SessionEvent] = []
        self.script: list[str] = []
        """Per send: an answer text, ``fail``, ``hang`` or ``edit`` (an edit, then an answer)."""
        self.saves = 0
        self.pending: Request | None = None
        self.runner: PlanRunner | None = None

    async def send(self, params: SendInput, *, by_plan: bool = False) -> tuple[str, Request]:
        if params.chat_id:
            self.ensure_idle(self.chat, by_plan=by_plan)
        self.sent.append(params)
        request = Request(f"r{len(self.sent)}")
        self.pending = request
        what = self.script.pop(0) if self.script else "ok"
        self.chat.history.append(Message("user", (TextBlock(params.message),)))
        asyncio.get_running_loop().call_soon(self._answer, request, what)
        return "c1", request

    def _answer(self, request: Request, what: str) -> None:
        if what == "hang":
            return
        if what == "fail":
            request.emit(FailedEvent(request.id, ErrorInfo(ErrorCategory.NETWORK, "down")))
            return
        if what == "edit":
            request.emit(FileEditEvent(request.id, "e1", "file:///x", "diff", "pending"))
            what = "edited"
        self.chat.history.append(Message("assistant", (TextBlock(what),)))
        request.emit(FinishedEvent(request.id, "end_turn"))

    def ensure_idle(self, chat: Chat, *, by_plan: bool = False) -> None:
        """As ``ChatService.ensure_idle``: a request in flight or a running plan refuses."""
        if self.pending is not None and not self.pending.done:
            raise ChatBusy(chat.chat_id, self.pending.id)
        if not by_plan and self.runner is not None and self.runner.running(chat.chat_id):
            raise ChatBusy(chat.chat_id, "")

    def open_chat(self, chat_id: str) -> Chat:
        assert chat_id == "c1"
        return self.chat

    def publish(self, chat: Chat, event: SessionEvent) -> None:
        self.saves += 1
        self.events.append(event)

    def cancel(self, chat_id: str) -> None:
        if self.pending is not None and not self.pending.done:
            self.pending.emit(CancelledEvent(self.pending.id))


@pytest.fixture
def chats() -> FakeChats:
    return FakeChats()


@pytest.fixture
def runner(chats: FakeChats, tmp_path: Path) -> PlanRunner:
    (tmp_path / "chat-plan.md").write_text("Write a plan of at most {max_steps} steps.")
    chats.runner = PlanRunner(chats, lambda: tmp_path)  # type: ignore[arg-type]
    return chats.runner


def plans(chats: FakeChats) -> list[PlanUpdatedEvent]:
    return [e for e in chats.events if isinstance(e, PlanUpdatedEvent)]


async def settle(runner: PlanRunner) -> None:
    for _ in range(50):
        await asyncio.sleep(0)
    while runner._tasks:
        await asyncio.gather(*runner._tasks.values(), return_exceptions=True)


async def propose(runner: PlanRunner, chats: FakeChats, answer: str = PLAN) -> Any:
    chats.script.append(answer)
    _, request = await runner.start(SendInput("Add an option", system="client rules"))
    await request.wait()
    return plans(chats)[-1]


async def test_the_planning_turn_proposes_the_steps(runner: PlanRunner, chats: FakeChats) -> None:
    event = await propose(runner, chats)
    assert chats.sent[0].system.startswith("client rules\n\nWrite a plan of at most 20 steps")
    assert event.state == "proposed" and event.request_id == "r1"
    assert [(s.title, s.status) for s in event.steps] == [
        ("Read the code", "pending"),
        ("Change it", "pending"),
        ("Test it", "pending"),
    ]
    assert chats.chat.file.plan == runner.get("c1").to_json()  # type: ignore[union-attr]


async def test_an_answer_without_steps_is_an_invalid_plan_and_the_answer_stays(
    runner: PlanRunner, chats: FakeChats
) -> None:
    event = await propose(runner, chats, "I would just do it.")
    assert event.state == "invalid" and event.steps == ()
    assert event.error is not None and "not a plan" in event.error.message
    assert chats.chat.history.last_assistant_text() == "I would just do it."
    with pytest.raises(PlanError, match="has no plan"):
        runner.approve("c1")


async def test_approved_steps_run_in_order_as_chat_turns(
    runner: PlanRunner, chats: FakeChats
) -> None:
    await propose(runner, chats)
    chats.script += ["read", "edit", "tested"]
    answer = runner.approve("c1")
    assert answer["state"] == "running"
    await settle(runner)
    steps = [m.message for m in chats.sent[1:]]
    assert len(steps) == 3
    assert steps[1].startswith("Carry out step 2 of 3 of the plan: Change it")
    assert "1. [x] Read the code\n2. [now] Change it\n3. [ ] Test it" in steps[1]
    final = plans(chats)[-1]
    assert final.state == "done"
    assert [s.status for s in final.steps] == ["done", "done", "done"]
    assert [s.request_id for s in final.steps] == ["r2", "r3", "r4"]
    assert [s.checkpoint_id for s in final.steps] == ["", "cp-r3", ""]
    running = next(e for e in plans(chats) if e.request_id == "r3")
    assert [s.status for s in running.steps] == ["done", "running", "pending"]


async def test_a_failed_step_fails_the_plan_and_approve_retries_it(
    runner: PlanRunner, chats: FakeChats
) -> None:
    await propose(runner, chats)
    chats.script += ["read", "fail"]
    runner.approve("c1")
    await settle(runner)
    failed = plans(chats)[-1]
    assert failed.state == "failed" and failed.error is not None
    assert [s.status for s in failed.steps] == ["done", "failed", "pending"]
    assert failed.steps[1].error == "down"
    runner.approve("c1")
    await settle(runner)
    assert plans(chats)[-1].state == "done"
    assert len(chats.sent) == 1 + 2 + 2  # the done step is not run again


async def test_cancel_stops_the_running_step_and_resume_runs_it_again(
    runner: PlanRunner, chats: FakeChats
) -> None:
    await propose(runner, chats)
    chats.script += ["hang"]
    runner.approve("c1")
    await asyncio.sleep(0.01)
    with pytest.raises(PlanError, match="is running"):
        runner.update("c1", [{"title": "x"}])
    answer = await runner.cancel("c1")
    assert answer["state"] == "cancelled"
    assert [s["status"] for s in answer["steps"]] == ["pending"] * 3
    runner.approve("c1")
    await settle(runner)
    assert plans(chats)[-1].state == "done"


async def test_a_message_into_a_running_plan_is_refused_and_the_plan_goes_on(
    runner: PlanRunner, chats: FakeChats
) -> None:
    await propose(runner, chats)
    chats.script += ["hang"]
    runner.approve("c1")
    await asyncio.sleep(0.01)
    step = chats.pending
    assert step is not None and not step.done
    with pytest.raises(ChatBusy, match="still answering"):
        await runner.start(SendInput("plan something else", chat_id="c1"))
    with pytest.raises(ChatBusy):
        await chats.send(SendInput("and a question", chat_id="c1"))
    assert not step.done and runner.running("c1")  # nothing was cancelled
    assert plans(chats)[-1].state == "running"
    await runner.cancel("c1")  # an explicit cancel still stops it


async def test_approve_while_the_planning_turn_answers_is_refused(
    runner: PlanRunner, chats: FakeChats
) -> None:
    chats.script.append("hang")
    await runner.start(SendInput("Add an option", chat_id="c1"))
    runner.update("c1", [{"title": "written by hand"}])
    with pytest.raises(ChatBusy):
        runner.approve("c1")
    assert not runner.running("c1") and chats.pending is not None and not chats.pending.done


async def test_a_step_left_running_by_a_crash_runs_again(
    runner: PlanRunner, chats: FakeChats
) -> None:
    chats.chat.file.plan = {
        "state": "running",
        "steps": [
            {"id": "a", "title": "Done before", "status": "done"},
            {"id": "b", "title": "Cut short", "status": "running", "requestId": "old"},
        ],
    }
    runner.approve("c1")
    await settle(runner)
    assert [m.message.split("\n")[0] for m in chats.sent] == [
        "Carry out step 2 of 2 of the plan: Cut short"
    ]
    assert plans(chats)[-1].state == "done"


async def test_shutdown_leaves_the_running_step_running_on_disk(
    runner: PlanRunner, chats: FakeChats
) -> None:
    await propose(runner, chats)
    chats.script += ["hang"]
    runner.approve("c1")
    await asyncio.sleep(0.01)
    await runner.aclose()
    assert [s["status"] for s in chats.chat.file.plan["steps"]] == ["running", "pending", "pending"]  # type: ignore[index]


async def test_update_edits_the_steps_and_checks_them(runner: PlanRunner, chats: FakeChats) -> None:
    event = await propose(runner, chats)
    first = event.steps[0]
    plan = runner.update(
        "c1", [{"id": first.id, "title": "Read  it"}, {"title": "Skip me", "status": "skipped"}]
    )
    assert plan["state"] == "proposed"
    assert [(s["id"] == first.id, s["title"], s["status"]) for s in plan["steps"]] == [
        (True, "Read it", "pending"),
        (False, "Skip me", "skipped"),
    ]
    with pytest.raises(PlanError, match="no title"):
        runner.update("c1", [{"title": " "}])
    with pytest.raises(PlanError, match="cannot be set"):
        runner.update("c1", [{"title": "x", "status": "running"}])
    with pytest.raises(PlanError, match="at least one step"):
        runner.update("c1", [])
