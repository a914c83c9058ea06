"""``AcpSession``: one ACP session — its chat, workspace, the client and its ordered updates.

The session id is the chat id (``session/load`` takes the ids ``session/list`` gives, which are
the LSP chat's ids too). Events of the chat arrive synchronously from the `ChatService` sink;
they are queued and sent in order by one pump task, so a ``tool_call`` always reaches the
client before the permission question about it. `CURRENT` names the session a turn serves:
it is set before the turn's task is created, so the tool gate and the file ports, which run
inside that task, reach the right client and workspace without lower layers knowing of ACP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import Client
from acp.schema import PermissionOption, ToolCallUpdate

from qodeassist_lsp.acp_agent.updates import Update, event_updates, tool_kind, tool_title
from qodeassist_lsp.core.events import TERMINAL_KINDS, SessionEvent, TerminalEvent

if TYPE_CHECKING:
    from acp.helpers import ToolCallContentVariant

    from qodeassist_lsp.features.chat.service import ChatService

log = logging.getLogger("qodeassist.acp")

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
]


@dataclass(frozen=True)
class ClientAbilities:
    """What the client declared at ``initialize``: file system and terminal methods."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False


@dataclass
class _Flush:
    done: asyncio.Event


@dataclass
class _Terminal:
    event: TerminalEvent


class AcpSession:
    """One session: the chat it is, where it works and the client it streams to."""

    def __init__(
        self,
        session_id: str,
        cwd: Path,
        chats: ChatService,
        client: Client,
        abilities: ClientAbilities,
        diff_of: Any,
    ) -> None:
        """Serve chat ``session_id`` of ``chats`` in ``cwd`` to ``client``."""
        self.session_id = session_id
        self.cwd = cwd
        self.chats = chats
        self.client = client
        self.abilities = abilities
        self.agent = chats.agent_of(session_id)
        self.plan_mode = False
        """The ``plan`` mode: a prompt is planned first, then run step by step."""
        self.running_plan = False
        """A prompt's plan is running its steps (the turn goes on after its first terminal)."""
        self._diff_of = diff_of
        self._diffed: set[str] = set()
        self._queue: asyncio.Queue[Update | _Flush | _Terminal] = asyncio.Queue()
        self._turn: asyncio.Future[TerminalEvent] | None = None
        self._pump = asyncio.create_task(self._send_all(), name=f"qa-acp-{session_id}")

    @property
    def busy(self) -> bool:
        """Whether a prompt turn is running (its plan's steps included)."""
        return self.running_plan or (self._turn is not None and not self._turn.done())

    def begin_turn(self) -> asyncio.Future[TerminalEvent]:
        """Return the future the turn's terminal event resolves (after its updates are sent)."""
        self._turn = asyncio.get_running_loop().create_future()
        return self._turn

    def end_turn(self) -> None:
        """Forget the turn (it failed before it started)."""
        self._turn = None

    def emit(self, event: SessionEvent) -> None:
        """Queue the updates of one chat event (the `ChatService` sink for this chat)."""
        if event.kind in TERMINAL_KINDS:
            self._queue.put_nowait(_Terminal(event))  # type: ignore[arg-type]
            return
        for update in event_updates(event, self.cwd, self._diff_of, self._diffed):
            self._queue.put_nowait(update)

    def send(self, update: Update) -> None:
        """Queue one update (replays, command lists)."""
        self._queue.put_nowait(update)

    async def flush(self) -> None:
        """Wait until every queued update has been sent."""
        marker = _Flush(asyncio.Event())
        self._queue.put_nowait(marker)
        await marker.done.wait()

    async def _send_all(self) -> None:
        while True:
            item = await self._queue.get()
            if isinstance(item, _Flush):
                item.done.set()
            elif isinstance(item, _Terminal):
                if self._turn is not None and not self._turn.done():
                    self._turn.set_result(item.event)
            else:
                try:
                    await self.client.session_update(session_id=self.session_id, update=item)
                except Exception as exc:  # a client gone or failing must not stop the pump
                    log.warning("session/update to the client failed: %s", exc)

    async def ask(
        self,
        call_id: str,
        name: str,
        permission: str,
        arguments: dict[str, Any],
        content: list[ToolCallContentVariant] | None,
    ) -> str | None:
        """Ask ``session/request_permission`` about a call; return the option id, None: none."""
        await self.flush()
        call = ToolCallUpdate(
            tool_call_id=call_id,
            title=tool_title(name, arguments),
            kind=tool_kind(name, permission),
            status="pending",
            content=content,
            raw_input=arguments,
        )
        try:
            answer = await self.client.request_permission(
                session_id=self.session_id, tool_call=call, options=OPTIONS
            )
        except Exception as exc:
            log.info("permission request for %s failed (%s): rejected", name, exc)
            return None
        outcome = answer.outcome
        return getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None

    async def aclose(self) -> None:
        """Stop the pump (after the chat's request was cancelled)."""
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._pump


CURRENT: ContextVar[AcpSession | None] = ContextVar("qodeassist_acp_session", default=None)
"""The session the running turn serves (set before the turn's task is created)."""
