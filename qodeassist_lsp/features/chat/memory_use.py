"""What chat does with the persistent memory: ``/remember …`` and a system layer per send.

A message ``/remember TEXT`` (``/remember --project TEXT`` for the workspace's memory) stores
``TEXT`` and is answered at once with a confirmation, with no model call: the request emits the
confirmation as ``text`` and then ``finished``, and both turns stay in the chat's history. Every
other send gets the ``chat.memory`` layer: the entries most relevant to the message within
``[memory] budget_tokens`` (see ``core.memory``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from qodeassist_lsp.core.content import Message, TextBlock
from qodeassist_lsp.core.events import FinishedEvent, TextEvent
from qodeassist_lsp.core.memory import Memory, MemoryRefused, Scope, layer_text
from qodeassist_lsp.core.request import Request, new_request_id
from qodeassist_lsp.features.chat.files import ChatInputError

if TYPE_CHECKING:
    from qodeassist_lsp.core.history import ConversationHistory
    from qodeassist_lsp.core.request import EventListener
    from qodeassist_lsp.core.session import Session

log = logging.getLogger("qodeassist.chat")

MEMORY_LAYER = "chat.memory"
MEMORY_PRIORITY = 52
"""After the project context layer (50), before skills (55) and the client's layer (60)."""
COMMAND = "/remember"
PROJECT_FLAG = "--project"


def remembered(message: str) -> tuple[str, Scope] | None:
    """Return the text and scope ``message`` asks to remember (None: not ``/remember``)."""
    head, _, rest = message.strip().partition(" ")
    if head != COMMAND:
        return None
    rest = rest.strip()
    if rest == PROJECT_FLAG or rest.startswith(PROJECT_FLAG + " "):
        return rest[len(PROJECT_FLAG) :].strip(), "project"
    return rest, "global"


async def remember(
    memory: Memory, message: str, history: ConversationHistory, listener: EventListener
) -> Request:
    """Store what a ``/remember`` message says; return the request that confirms it.

    A refused text (empty, a secret) is a ``ChatInputError``: nothing is stored and the
    history is left as it was.
    """
    text, scope = remembered(message) or ("", "global")
    try:
        entry = await asyncio.to_thread(memory.add, text, "chat", scope)
    except MemoryRefused as exc:
        raise ChatInputError(str(exc)) from None
    request = Request(new_request_id(), listeners=[listener])
    reply = f"Remembered ({entry.scope} memory, id {entry.id}): {entry.text}"
    history.append(Message("user", (TextBlock(message.strip()),)))
    history.append(Message("assistant", (TextBlock(reply),), id=request.id))

    async def confirm() -> None:
        await asyncio.sleep(0)  # the events follow the chat/send answer
        request.emit(TextEvent(request.id, reply))
        request.emit(FinishedEvent(request.id, "end_turn"))

    request.run(confirm())
    return request


def add_layer(session: Session, memory: Memory, message: str, budget_tokens: int) -> None:
    """Set the ``chat.memory`` layer of ``session`` for ``message``."""
    try:
        entries = memory.relevant(message, budget_tokens)
    except OSError as exc:  # an unreadable memory must not stop the chat
        log.warning("memory could not be read: %s", exc)
        entries = []
    session.system_prompt.set_layer(MEMORY_LAYER, layer_text(entries), priority=MEMORY_PRIORITY)
