"""Plan mode over LSP: ``qodeassist/chat/plan/update``, ``approve``, ``resume`` and ``cancel``.

The plan itself arrives as ``planUpdated`` chat events (``qodeassist/chat/event``) and in
``chat/get``; the logic is the workbench's ``features.chat.plan.PlanRunner`` of the chat service.
Each request answers the plan as it is after the change (``{state, steps}``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.chat_handlers import chats
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.lsp.params import ChatIdParams, PlanUpdateParams


async def plan_update(ls: QodeAssistServer, args: PlanUpdateParams) -> dict[str, Any]:
    """Replace the steps of a chat's plan (or write one); answer the plan."""
    steps = [step.model_dump(exclude_none=True) for step in args.steps]
    return (await chats(ls)).plans.update(args.chat_id, steps)


async def plan_approve(ls: QodeAssistServer, args: ChatIdParams) -> dict[str, Any]:
    """Run the plan's pending steps one by one, each as a chat turn with tools."""
    return (await chats(ls)).plans.approve(args.chat_id)


async def plan_cancel(ls: QodeAssistServer, args: ChatIdParams) -> dict[str, Any]:
    """Stop a running plan (the running step is cancelled); it can be resumed."""
    return await (await chats(ls)).plans.cancel(args.chat_id)


def setup(server: QodeAssistServer) -> None:
    """Register the plan-mode requests (the chat feature is added by ``chat_handlers``)."""
    server.feature(methods.CHAT_PLAN_UPDATE)(plan_update)
    server.feature(methods.CHAT_PLAN_APPROVE)(plan_approve)
    server.feature(methods.CHAT_PLAN_RESUME)(plan_approve)
    server.feature(methods.CHAT_PLAN_CANCEL)(plan_cancel)
