"""``ChatService``: persistent chats over sessions — send, cancel, list, get, delete, compress.

Each chat owns a ``ConversationHistory`` (the single source of truth) and is saved as a history
file after the user's message is added and after every answer. A send binds a fresh session of
the chat's agent to that history, so switching agents or reloading the configuration keeps the
conversation; the session streams events to the sink the service was given (the LSP layer turns
them into ``qodeassist/chat/event`` notifications). Nothing here knows about LSP. ``Chat``,
``SendInput`` and the other types of ``chat_state`` are re-exported (``as``) for other layers.

A chat answers one message at a time: a message sent while its previous one is still being
answered (or while its plan runs) is refused at once with `ChatBusy`, on every door, and the
running answer goes on; only an explicit `cancel` (or `delete`) stops it. A new chat's id is
reserved on disk when it is handed out (`ChatStore.new_id`), so no two chats, in this process or
another one sharing the history folder, ever get the same id.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.config.pipelines import AUTO, CHAT_ASSISTANT, CHAT_COMPRESSION
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.context import rules_files
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.core.agent import AgentNotAvailable
from qodeassist_lsp.core.agent_pool import AgentPool
from qodeassist_lsp.core.content import (
    Block,
    Message,
    TextBlock,
)
from qodeassist_lsp.core.events import AgentChosenEvent, SessionEvent, UsageEvent, camel_json
from qodeassist_lsp.core.history import ConversationHistory
from qodeassist_lsp.core.memory import Memory
from qodeassist_lsp.core.request import Request
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.chat import memory_use, mentions, pool_use, router, skill_use
from qodeassist_lsp.features.chat.chat_state import Chat as Chat
from qodeassist_lsp.features.chat.chat_state import EventSink as EventSink
from qodeassist_lsp.features.chat.chat_state import SendInput as SendInput
from qodeassist_lsp.features.chat.compressor import CompressionFailed, summarise, summary_message
from qodeassist_lsp.features.chat.demo_notice import DemoNotices
from qodeassist_lsp.features.chat.estimate import estimate_input
from qodeassist_lsp.features.chat.files import (
    ChatBusy,
    ChatInputError,
    FileAccess,
    StoredContentLoader,
    store_attachments,
    store_images,
)
from qodeassist_lsp.features.chat.history_check import check_history
from qodeassist_lsp.features.chat.history_format import ChatFile, encode_message
from qodeassist_lsp.features.chat.plan import PlanRunner
from qodeassist_lsp.features.chat.plan_host import ChatHost
from qodeassist_lsp.features.chat.saver import ChatSaver
from qodeassist_lsp.features.chat.settings import CHAT_SETTINGS
from qodeassist_lsp.features.chat.store import ChatNotFound, ChatStore, title_of, utc_now
from qodeassist_lsp.skills.library import SkillLibrary
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

log = logging.getLogger("qodeassist.chat")

CONTEXT_LAYER = "chat.context"
CLIENT_LAYER = "chat.client"
FILES_PIN = "chat.files"
CANCEL_GRACE_S = 2.0


class ChatService:
    """Persistent chats and their requests."""

    def __init__(
        self,
        runtime: RuntimeView,
        documents: DocumentStore,
        sink: EventSink,
        *,
        workspace: Path | None,
        ignore: Callable[[], IgnoreFilter | None],
        folders: Callable[[], Sequence[Path]],
        skills: Callable[[], Awaitable[SkillLibrary | None]],
        pool: AgentPool,
        codebase: Callable[[], mentions.CodebaseSearch | None],
        plans: Callable[[ChatHost], PlanRunner],
    ) -> None:
        self._runtime = runtime
        self._codebase = codebase
        """The ``@codebase`` port: the index's snippets for a message; None while it is off."""
        self._documents = documents
        self._sink = sink
        self._workspace = workspace
        self._folders = folders
        self._ignore = ignore
        self._skills = skills
        self._chats: dict[str, Chat] = {}
        self._reserved: set[tuple[ChatStore, str]] = set()
        """The ids this service reserved (released at `aclose`; a save releases them sooner)."""
        self._saver = ChatSaver(self.store, lambda: self.settings.section(CHAT_SETTINGS).autosave)
        self._tidied: set[Path] = set()
        self._demo = DemoNotices()
        self._pool = pool  # shared: one count per process
        self.rules = rules_files.RulesFinder(
            lambda: self.settings.rules, self._folders, rules_files.ignore_rule(lambda _: ignore())
        )
        """The project's rules files of the workspace (every chat's system prompt has them)."""
        self.plans = plans(self)
        """The plan runner of these chats (built by the workbench)."""

    # -- helpers ---------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The current settings."""
        return self._runtime.configuration.settings

    def store(self) -> ChatStore:
        """Return the store of the configured history directory."""
        configured = self.settings.section(CHAT_SETTINGS).history_dir
        config = self._runtime.configuration
        root = Path(configured).expanduser() if configured else None
        store = ChatStore(root or config.paths.data_root / "chat_history")
        if store.root not in self._tidied:  # once per folder: saves killed mid-way left these
            self._tidied.add(store.root)
            store.remove_stale_temp_files()
        return store

    def files(self) -> FileAccess:
        """Return the file access of the workspace, with the current ignore rules and roots."""
        roots = Confinement.of(self._folders(), self.settings.general.allowed_roots)
        return FileAccess(self._documents, self._ignore(), self._workspace, roots)

    def publish(self, chat: Chat, event: SessionEvent) -> None:
        """Save ``chat`` in the background and send ``event`` (plan updates) to the sink."""
        self._saver.schedule(chat)
        self._sink(chat.chat_id, event)

    def open_chat(self, chat_id: str) -> Chat:
        """Return the open chat ``chat_id``, reading its history file on first use."""
        chat = self._chats.get(chat_id)
        if chat is not None:
            return chat
        store = self.store()
        try:
            data = store.load(chat_id)
        except ChatNotFound:
            raise ChatNotFound(
                f"no chat {chat_id!r}; list the chats with qodeassist/chat/list"
            ) from None
        return self._keep(store, chat_id, data, data.messages)

    def _new(self, title: str, agent: str, history: Sequence[Message] = ()) -> Chat:
        store = self.store()
        chat_id = store.new_id(title)
        self._reserved.add((store, chat_id))
        data = ChatFile(title=title.strip().splitlines()[0][:80] if title.strip() else "")
        data.agent = agent
        return self._keep(store, chat_id, data, history)

    def _drop_new(self, chat: Chat) -> None:
        """Forget a chat whose id the client never learned (its first send was refused)."""
        self._chats.pop(chat.chat_id, None)
        self.store().release(chat.chat_id)

    def _keep(
        self, store: ChatStore, chat_id: str, data: ChatFile, history: Sequence[Message]
    ) -> Chat:
        """Open ``chat_id`` with ``history``, as its file ``data`` holds it now."""
        if chat_id in self._chats:  # ids are reserved: a live chat is never replaced
            raise RuntimeError(f"chat {chat_id!r} is already open")
        chat = Chat(
            chat_id, data, ConversationHistory(history), StoredContentLoader(store, chat_id)
        )
        chat.seen = tuple(data.messages)
        self._chats[chat_id] = chat
        return chat

    def ensure_idle(self, chat: Chat, *, by_plan: bool = False) -> None:
        """Raise `ChatBusy` when ``chat`` is answering a message or running its plan.

        ``by_plan``: the plan's own next step is asking, so its running plan does not count.
        """
        request = chat.request
        answering = request is not None and not request.done
        if chat.starting or answering or (not by_plan and self.plans.running(chat.chat_id)):
            raise ChatBusy(chat.chat_id, request.id if request is not None and answering else "")

    def _agent(self, requested: str | None, current: str) -> str:
        """Return the chat's agent: requested, else the chat's, else the roster's first."""
        config = self._runtime.configuration
        pipelines = config.pipelines.loaded(config.agents)
        name = requested or current or pipelines.agent(CHAT_ASSISTANT)
        if not name:
            raise ChatInputError(
                "no chat agent is configured: list one in pipelines.chat_assistant (pipelines.toml)"
            )
        if name not in (roster := pipelines.roster(CHAT_ASSISTANT)):
            listed = ", ".join(roster) or "none"
            raise ChatInputError(
                f"agent {name!r} is not a chat agent; pick one of: {listed} "
                "(pipelines.chat_assistant lists the agents chat may use)"
            )
        return name

    def _context_layer(self) -> str:
        root = self._workspace
        if root is None:
            return "# No workspace folder is open in the editor"
        return (
            f"# Active project: {root.name}\n# Project source root: {root}\n"
            "Create and edit source files only under the project source root."
        )

    # -- send ------------------------------------------------------------------------------
    async def send(self, params: SendInput, *, by_plan: bool = False) -> tuple[str, Request]:
        """Start a request in a chat (new or existing); return the chat id and the request.

        A chat still answering (or running its plan, unless ``by_plan``: the plan's own step)
        refuses the message with `ChatBusy`; the running answer is not touched.
        """
        if params.chat_id and params.chat_id in self._chats:  # before any wait for the pool
            self.ensure_idle(self._chats[params.chat_id], by_plan=by_plan)
        if params.requires is not None:  # the pool lends the agent until the request ends
            return await pool_use.send(
                self._pool, params, lambda p, c: self._claimed(p, c, by_plan)
            )
        return await self._claimed(params, None, by_plan)

    async def _claimed(
        self, params: SendInput, choice: router.Choice | None, by_plan: bool
    ) -> tuple[str, Request]:
        """`_send` with the chat claimed: a second message meanwhile is refused, not started."""
        chat = self.open_chat(params.chat_id) if params.chat_id else None
        if chat is None:
            return await self._send(params, choice, None)
        self.ensure_idle(chat, by_plan=by_plan)
        chat.starting = True
        try:
            return await self._send(params, choice, chat)
        finally:
            chat.starting = False

    async def _send(
        self, params: SendInput, choice: router.Choice | None, chat: Chat | None
    ) -> tuple[str, Request]:
        message = params.message.strip()
        if not message and not params.attachments and not params.images:
            raise ChatInputError("nothing to send: the message is empty")
        choice = choice or await self._route(params.agent, message)
        requested = choice.agent if choice is not None else params.agent
        if requested == AUTO:  # a /remember message needs no choice
            requested = None
        agent = self._agent(requested, chat.file.agent if chat is not None else "")
        access = self.files()
        linked = None
        if params.linked_files is not None:
            linked = [str(access.resolve(uri)) for uri in params.linked_files]
            for path in linked:
                access.check(Path(path))
        if chat is not None:
            check_history(chat, self.store(), access, keep_linked=linked is None)
        if memory_use.remembered(message) is not None:
            return await self._remember(chat, agent, params)
        library = await self._skills()
        invoked = skill_use.invoked(library, message)
        typed = skill_use.message_text(library, params.message)
        text = await mentions.expand_all(access, typed, self._codebase()) if message else ""
        created = chat is None
        if chat is None:
            chat = self._new(params.message or "attachment", agent, params.history)
        elif self._should_compress(chat, text):
            chat = await self.compress_chat(chat)
        blocks: list[Block] = [TextBlock(text)] if text else []
        blocks += invoked
        try:
            blocks += store_attachments(access, self.store(), chat.chat_id, params.attachments)
            blocks += store_images(self.store(), chat.chat_id, params.images)
        except ChatInputError:
            if created:  # the client never learns this chat's id
                self._drop_new(chat)
            raise
        if linked is not None:
            chat.file.linked_files = linked
        try:
            session = self._runtime.sessions.create(agent, CHAT_ASSISTANT, history=chat.history)
        except AgentNotAvailable as exc:
            if created:
                self._drop_new(chat)
            raise ChatInputError(str(exc)) from None
        session.scope = chat.chat_id
        session.content_loader = chat.loader
        session.workspace = access.roots
        session.pinned[FILES_PIN] = lambda: access.linked_blocks(self._linked(chat, access))
        session.system_prompt.set_layer(CONTEXT_LAYER, self._context_layer(), priority=50)
        rules_files.set_layer(session.system_prompt, self.rules.find())
        session.system_prompt.set_layer(CLIENT_LAYER, params.system, priority=60)
        skill_use.add_layer(session, library, self.settings.skills.catalog_budget_tokens)
        if self.settings.memory.enabled:
            budget = self.settings.memory.budget_tokens
            memory_use.add_layer(session, self.memory(), text, budget)
        session.listeners.append(lambda event: self._on_event(chat, event))
        chat.file.agent = agent
        start = len(chat.history)
        request = session.send(blocks)
        if choice is not None:
            self._sink(chat.chat_id, AgentChosenEvent(request.id, *dataclasses.astuple(choice)))
        self._demo.arm(chat.chat_id, request.id, session.agent)
        chat.request = request
        chat.request_start = start
        self._saver.schedule(chat)
        return chat.chat_id, request

    async def _route(self, requested: str | None, message: str) -> router.Choice | None:
        """Let the ``chat_router`` agent pick the agent when ``requested`` is ``auto``."""
        if requested != AUTO or memory_use.remembered(message) is not None:
            return None
        config = self._runtime.configuration
        pipelines = config.pipelines.loaded(config.agents)
        if not (roster := pipelines.roster(CHAT_ASSISTANT)):
            return None  # _agent says what to configure
        if AUTO not in pipelines.choices(CHAT_ASSISTANT):
            raise ChatInputError(
                'agent "auto" needs a chat_router agent: set pipelines.chat_router in '
                "pipelines.toml to a loaded agent, or pick a chat agent"
            )
        return await router.choose(self._runtime.sessions, config, roster, message)

    async def _remember(
        self, chat: Chat | None, agent: str, params: SendInput
    ) -> tuple[str, Request]:
        """Store what a ``/remember`` message says and confirm it without a model call."""
        created = chat is None
        target = chat or self._new(params.message, agent, params.history)
        start = len(target.history)
        try:
            request = await memory_use.remember(
                self.memory(), params.message, target.history, lambda e: self._on_event(target, e)
            )
        except ChatInputError:
            if created:  # the client never learns this chat's id
                self._drop_new(target)
            raise
        target.request, target.request_start = request, start
        return target.chat_id, request

    def memory(self) -> Memory:
        """Return the persistent memory (global, and the workspace's)."""
        return Memory.of(self._runtime.configuration.paths)

    def _linked(self, chat: Chat, access: FileAccess) -> list[str]:
        """Return the chat's linked files, plus every open document with ``link_open_files``."""
        linked, with_open = chat.file.linked_files, self.settings.section(CHAT_SETTINGS)
        return access.with_open(linked) if with_open.link_open_files else list(linked)

    async def _stop(self, chat: Chat) -> None:
        """Cancel the chat's request in flight and wait (briefly) until it has ended (delete)."""
        request = chat.request
        if request is None or request.done:
            return
        request.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(request.wait(), CANCEL_GRACE_S)

    def _on_event(self, chat: Chat, event: SessionEvent) -> None:
        notice = self._demo.before(chat.chat_id, event)
        if notice is not None:
            self._sink(chat.chat_id, notice)
        if isinstance(event, UsageEvent):
            chat.file.usage[event.request_id] = {
                "prompt": event.input_tokens,
                "completion": event.output_tokens,
                "cached": event.cached_tokens,
                "reasoning": event.reasoning_tokens,
            }
            covered = chat.request_start + 1
            chat.calibration = (event.input_tokens + event.cached_tokens, covered)
        if event.kind in ("finished", "failed", "cancelled"):
            # The terminal event goes out once the chat is on disk: a client that lists or
            # reopens chats right after it sees the answer.
            self._saver.schedule(chat, then=lambda: self._sink(chat.chat_id, event))
        else:
            self._sink(chat.chat_id, event)

    # -- persistence -----------------------------------------------------------------------
    async def flush(self) -> None:
        """Wait until every scheduled save is written."""
        await self._saver.flush()

    # -- other methods ---------------------------------------------------------------------
    def open_new(self, agent: str | None = None) -> str:
        """Start an empty chat, its id reserved (saved with its first message); return the id."""
        return self._new("", self._agent(agent, "")).chat_id

    def agent_of(self, chat_id: str) -> str:
        """Return the agent ``chat_id`` is bound to (``""`` for an unknown chat)."""
        chat = self._chats.get(chat_id)
        return chat.file.agent if chat is not None else ""

    def cancel(self, chat_id: str) -> None:
        """Cancel the request in flight of ``chat_id`` (nothing when idle or unknown)."""
        chat = self._chats.get(chat_id)
        if chat is not None and chat.request is not None:
            chat.request.cancel()

    def list(self) -> list[dict[str, Any]]:
        """Return every saved chat, most recently updated first."""
        return [camel_json(summary) for summary in self.store().list()]

    def get(self, chat_id: str) -> dict[str, Any]:
        """Return a chat with its messages in the history file's block format."""
        chat = self.open_chat(chat_id)
        return {
            "chatId": chat.chat_id,
            "title": chat.file.title or title_of(chat.file),
            "agent": chat.file.agent,
            "busy": chat.busy,
            "requestId": chat.request.id if chat.request is not None else None,
            "compressedFrom": chat.file.compressed_from,
            "linkedFiles": list(chat.file.linked_files),
            "plan": chat.file.plan,
            "messages": [encode_message(m) for m in chat.history.messages],
        }

    async def delete(self, chat_id: str) -> None:
        """Cancel and remove a chat with its attachments."""
        chat = self._chats.pop(chat_id, None)
        if chat is not None:
            await self._stop(chat)
            async with chat.saving:
                pass  # let a save in progress finish before the file goes
        try:
            self.store().delete(chat_id)
        except ChatNotFound:
            if chat is None:
                raise ChatNotFound(f"no chat {chat_id!r}") from None

    async def compress(self, chat_id: str) -> str:
        """Summarise ``chat_id`` into a new chat; return the new chat's id."""
        chat = self.open_chat(chat_id)
        return (await self.compress_chat(chat)).chat_id

    async def compress_chat(self, chat: Chat) -> Chat:
        """Summarise ``chat`` into a new, saved chat that records where it came from."""
        config = self._runtime.configuration
        agent = config.pipelines.agent(CHAT_COMPRESSION)
        if not agent or agent not in config.agents:
            raise CompressionFailed(
                ErrorInfo(
                    ErrorCategory.CONFIG,
                    "no chat_compression agent is configured; set it in pipelines.toml",
                )
            )
        summary = await summarise(self._runtime.sessions, agent, chat.history.messages)
        store = self.store()
        new_id = store.derived_id(chat.chat_id)
        data = ChatFile(
            messages=[summary_message(summary)],
            title=f"Summary: {chat.file.title or title_of(chat.file)}"[:80],
            agent=chat.file.agent,
            linked_files=list(chat.file.linked_files),
            compressed_from=chat.chat_id,
            compressed_at=utc_now(),
        )
        await asyncio.to_thread(store.save, new_id, data)
        log.info("compressed chat %s into %s", chat.chat_id, new_id)
        return self._keep(store, new_id, data, data.messages)

    def _should_compress(self, chat: Chat, draft: str) -> bool:
        settings = self.settings.section(CHAT_SETTINGS)
        config = self._runtime.configuration
        if not settings.auto_compress or not config.pipelines.agent(CHAT_COMPRESSION):
            return False
        return self._estimate(chat, draft, ())[0] >= settings.auto_compress_threshold

    def tokens(
        self, chat_id: str | None, draft: str = "", attachments: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Return the estimated input tokens of the next request of ``chat_id``."""
        chat = self.open_chat(chat_id) if chat_id else None
        estimate, from_usage = self._estimate(chat, draft, attachments)
        return {"estimate": estimate, "fromUsage": from_usage}

    def _estimate(
        self, chat: Chat | None, draft: str, attachments: Sequence[str]
    ) -> tuple[int, bool]:
        access = self.files()
        linked = self._linked(chat, access) if chat is not None else []
        return estimate_input(access, chat, draft, attachments, linked)

    async def aclose(self) -> None:
        """Cancel every request and write pending saves."""
        await self.plans.aclose()
        for chat in list(self._chats.values()):
            await self._stop(chat)
        await self.flush()
        for store, chat_id in self._reserved:  # chats that never got a message stay unlisted
            store.release(chat_id)
        self._reserved.clear()
