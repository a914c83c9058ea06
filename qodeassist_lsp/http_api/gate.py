"""`ChatAsker`: how an HTTP chat answers the shared permission gate's questions.

The workbench's one `tools.permissions.PermissionGate` decides every call by the
``[tools.permissions]`` policy and remembers "Allow for this chat" per chat. For a chat an HTTP
request serves, the route hands the gate a `ChatAsker` (`PermissionGate.serve`) answering the
way the request said — ``deny`` (the default: nobody at an HTTP client can be asked), ``allow``,
or ``ask``: the question is shown in the chat's stream (the web page) and waits for an answer.
Every other chat is asked by the gate's own asker (beside an editor, the editor).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from qodeassist_lsp.http_api.events import Questions
from qodeassist_lsp.tools.permissions import ALLOW_ONCE, NotAsked, PermissionCall

AskMode = Literal["deny", "allow", "ask"]
ASK_MODES: Final = ("deny", "allow", "ask")


class ChatAsker:
    """The `tools.permissions.CallAsker` of one HTTP chat: answers from the request's mode."""

    def __init__(self, questions: Questions, chat_id: str, mode: AskMode) -> None:
        """Answer ``chat_id``'s questions by ``mode`` (``ask``: through ``questions``)."""
        self._questions = questions
        self._chat_id = chat_id
        self._mode = mode

    async def ask_call(self, call: PermissionCall, actions: Sequence[str]) -> str | None:
        """Allow, refuse, or show the question in the chat's stream and wait for the answer."""
        if self._mode == "allow":
            return ALLOW_ONCE
        if self._mode == "ask":
            return await self._questions.ask(self._chat_id, call.question, actions)
        raise NotAsked(
            f"{call.tool.permission} tools need the user's approval ({call.setting}) and this "
            'HTTP request did not allow them (it may send "qodeassist": {"permissions": '
            '"allow"}), so it was denied. Tell the user what you wanted to do.'
        )
