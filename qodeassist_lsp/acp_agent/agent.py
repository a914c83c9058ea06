"""``QodeAssistAgent``: the ``acp.Agent`` of ``qodeassist-lsp acp``, on the shared chat engine.

``initialize`` records what the client can do (``fs``, ``terminal``); ``session/new`` opens an
empty chat whose id is the session id, ``session/load`` replays a stored one; the chat agents
of ``pipelines.chat_assistant`` are the session's modes, with ``auto`` (the default when a
``chat_router`` agent is configured: it picks the agent for each prompt) and ``plan`` (plan mode
with the last chosen agent); skills are announced as slash commands. ``session/prompt`` sends
one chat message (text, resource links as attachments, embedded resources as quoted files,
images stored beside the chat as attached ones are) and
answers with the stop reason once every update is sent; in plan mode the plan arrives as ``plan``
updates and its steps run at once, in the same turn (ACP has no approve step; writes still ask
permission).
Next-edit suggestions (``nes/*``, ``document/*``) are `nes.NesServer`'s. Methods this agent does
not implement (fork, resume, config options) are answered "method not found" by the SDK.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import logging
from pathlib import Path, PurePosixPath
from typing import Any

from acp import PROTOCOL_VERSION, Client
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AvailableCommand,
    AvailableCommandInput,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    TextResourceContents,
    UnstructuredCommandInput,
)

from qodeassist_lsp import __version__
from qodeassist_lsp.acp_agent.errors import answering
from qodeassist_lsp.acp_agent.host import AcpHost, client_servers
from qodeassist_lsp.acp_agent.nes import NesServer, pick_encoding
from qodeassist_lsp.acp_agent.operations import Extensions
from qodeassist_lsp.acp_agent.session import CURRENT, AcpSession, ClientAbilities
from qodeassist_lsp.acp_agent.updates import plan_updates, replay_updates, stop_reason
from qodeassist_lsp.config.pipelines import AUTO, CHAT_ASSISTANT, Pipelines
from qodeassist_lsp.core.content import Message
from qodeassist_lsp.core.events import FailedEvent, FinishedEvent, TerminalEvent
from qodeassist_lsp.features.chat.files import InlineImage
from qodeassist_lsp.features.chat.history_format import decode_block
from qodeassist_lsp.features.chat.service import SendInput
from qodeassist_lsp.wire.errors import CategorizedError, ErrorKind, InvalidParams, QodeAssistError

log = logging.getLogger("qodeassist.acp")

PLAN_MODE = "plan"
PLAN_ABOUT = "write a plan of steps first, then carry them out one by one"
"""What the ``plan`` mode does, as its description says."""


class SessionBusy(QodeAssistError):
    """A request into a session whose prompt is still being answered."""

    error_kind = ErrorKind.BUSY
    error_code = "session_busy"

    def __init__(self, session_id: str, advice: str) -> None:
        """Refuse a request into ``session_id``; ``advice`` says what to do instead."""
        super().__init__(f"session {session_id!r} is already answering a prompt; {advice}")


class QodeAssistAgent:
    """The ACP agent: sessions over `AcpHost`'s chat engine."""

    def __init__(self, host: AcpHost) -> None:
        """Serve the chats of ``host``."""
        self.host = host
        self.client: Client | None = None
        self.abilities = ClientAbilities()
        self.sessions: dict[str, AcpSession] = {}
        self.nes = NesServer(host.bench)

    def on_connect(self, conn: Client) -> None:
        """Keep the connection to the client (the SDK calls this first)."""
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Answer our capabilities; remember the client's file system and terminal methods."""
        caps = client_capabilities or ClientCapabilities()
        fs = caps.fs
        self.abilities = ClientAbilities(
            read_text_file=bool(fs and fs.read_text_file),
            write_text_file=bool(fs and fs.write_text_file),
            terminal=bool(caps.terminal),
        )
        self.nes.encoding = pick_encoding(caps.position_encodings)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
                nes=self.nes.capabilities(),
                position_encoding=self.nes.encoding,
            ),
            auth_methods=[],
            agent_info=Implementation(
                name="qodeassist-lsp", title="QodeAssist", version=__version__
            ),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Nothing to authenticate: provider keys come from the user's configuration."""
        return AuthenticateResponse()

    # -- sessions -------------------------------------------------------------------------
    def _cwd(self, cwd: str) -> Path:
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise InvalidParams(f"cwd {cwd!r} must be the absolute path of an existing folder")
        return path

    async def _open(self, where: str, servers: list[Any] | None, chat_id: str | None) -> AcpSession:
        """Open chat ``chat_id`` (None: a new one) in ``where``; the MCP ``servers`` join first."""
        cwd = self._cwd(where)
        await self.host.add_client_servers(client_servers(servers))
        client = self.client
        assert client is not None, "on_connect was not called"
        old = self.sessions.get(chat_id) if chat_id else None
        if old is not None and old.busy:
            raise SessionBusy(
                str(chat_id), "wait for its stop reason or cancel it before loading it"
            )
        holder: list[AcpSession] = []
        chats = self.host.chat_service(cwd, lambda _chat, event: holder[0].emit(event))
        session_id = chat_id or chats.open_new()
        if chat_id:
            chats.get(chat_id)  # opens the history file, or fails for an unknown chat
        session = AcpSession(session_id, cwd, chats, client, self.abilities, self.host.diff_of)
        holder.append(session)
        self.host.route(session_id, lambda _chat, event: session.emit(event))
        if old is not None:  # loaded again: the new session (and chat service) replaces it
            await old.aclose()
        self.sessions[session_id] = session
        return session

    def _pipelines(self) -> Pipelines:
        config = self.host.configuration
        return config.pipelines.loaded(config.agents)

    def _modes(self, session: AcpSession) -> SessionModeState | None:
        pipelines = self._pipelines()
        about = {name: f"chat with {name}" for name in pipelines.choices(CHAT_ASSISTANT)}
        if not about:
            return None
        if AUTO in about:
            about[AUTO] = f"{pipelines.picker(CHAT_ASSISTANT)} picks the agent"
        modes = [SessionMode(id=name, name=name, description=text) for name, text in about.items()]
        if session.agent not in about:
            session.agent = pipelines.agent(CHAT_ASSISTANT)
        modes.append(SessionMode(id=PLAN_MODE, name="Plan", description=PLAN_ABOUT))
        current = PLAN_MODE if session.plan_mode else session.agent
        return SessionModeState(current_mode_id=current, available_modes=modes)

    async def _announce_commands(self, session: AcpSession) -> None:
        library = await self.host.bench.current_skills()
        if library is None:
            return
        commands = [
            AvailableCommand(
                name=skill.name,
                description=skill.description,
                input=AvailableCommandInput(UnstructuredCommandInput(hint="what to do")),
            )
            for skill in library.skills.values()
        ]
        session.send(update_available_commands(commands))

    @answering
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """Open an empty chat working in ``cwd``; the client's MCP servers join the hub."""
        session = await self._open(cwd, mcp_servers, None)
        if AUTO in self._pipelines().choices(CHAT_ASSISTANT):  # a new session starts in auto
            session.agent = AUTO
        modes = self._modes(session)
        await self._announce_commands(session)
        return NewSessionResponse(session_id=session.session_id, modes=modes)

    @answering
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Open stored chat ``session_id`` and replay it before answering."""
        session = await self._open(cwd, mcp_servers, session_id)
        for raw in session.chats.get(session_id)["messages"]:
            blocks = []
            for data in raw.get("blocks", []):
                try:
                    blocks.append(decode_block(data))
                except ValueError:
                    continue
            for update in replay_updates(Message(raw["role"], tuple(blocks)), session.cwd):
                session.send(update)
        plan = session.chats.plans.get(session_id)
        if plan is not None and plan.steps:
            for update in plan_updates(plan.event()):
                session.send(update)
        await self._announce_commands(session)
        await session.flush()
        return LoadSessionResponse(modes=self._modes(session))

    @answering
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Return the stored chats (the LSP chat's too), most recent first."""
        where = Path(cwd) if cwd else Path.cwd()
        chats = self.host.chat_service(where, lambda _chat, _event: None)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=c["chatId"],
                    cwd=str(where),
                    title=c["title"],
                    updated_at=c["updatedAt"],
                )
                for c in chats.list()
            ]
        )

    @answering
    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Switch the session's chat agent (a chat agent or ``auto``), or to plan mode."""
        session = self._session(session_id)
        names = self._pipelines().choices(CHAT_ASSISTANT)
        if mode_id not in (*names, PLAN_MODE):
            raise InvalidParams(
                f"no mode {mode_id!r}; the modes are the chat agents: {', '.join(names)}, "
                f"and {PLAN_MODE!r}"
            )
        session.plan_mode = mode_id == PLAN_MODE
        if not session.plan_mode:
            session.agent = mode_id
        session.send(update_current_mode(mode_id))
        return SetSessionModeResponse()

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise InvalidParams(
                f"no session {session_id!r} in this process; start one with session/new or "
                "load a stored chat with session/load"
            )
        return session

    # -- turns ----------------------------------------------------------------------------
    @answering
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """Send one message; stream the answer as updates; return why the turn stopped."""
        session = self._session(session_id)
        if session.busy:  # ACP v1 has one turn at a time; the running one goes on
            raise SessionBusy(
                session_id,
                "wait for its stop reason or send session/cancel, then prompt again (the running "
                "prompt goes on)",
            )
        text, attachments, images = _message(prompt)
        turn = session.begin_turn()
        token = CURRENT.set(session)
        chats = session.chats
        try:
            await (chats.plans.start if session.plan_mode else chats.send)(
                SendInput(
                    text,
                    chat_id=session_id,
                    agent=session.agent or None,
                    attachments=attachments,
                    images=images,
                )
            )
        except Exception:  # refused before it began (a busy chat goes on, never cancelled)
            session.end_turn()
            raise
        finally:
            CURRENT.reset(token)
        try:
            terminal = await turn
        except asyncio.CancelledError:
            session.chats.cancel(session_id)
            raise
        if session.plan_mode and terminal.kind == "finished":
            terminal = await self._run_plan(session)
        reason = stop_reason(terminal)
        if reason is None:
            assert isinstance(terminal, FailedEvent)
            raise CategorizedError(terminal.error)
        return PromptResponse(stop_reason=reason)  # type: ignore[arg-type]

    async def _run_plan(self, session: AcpSession) -> TerminalEvent:
        """Run the plan the planning turn proposed; return how the last step ended."""
        plans = session.chats.plans
        plan = plans.get(session.session_id)
        terminal: TerminalEvent = FinishedEvent("", "end_turn")
        if plan is not None and plan.state == "proposed":
            token = CURRENT.set(session)  # the steps' tool calls reach this session's client
            session.running_plan = True
            try:
                terminal = await plans.run(session.session_id)
            except asyncio.CancelledError:
                session.chats.cancel(session.session_id)
                raise
            finally:
                session.running_plan = False
                CURRENT.reset(token)
            await session.chats.flush()  # the plan's last state is on disk when the turn ends
        await session.flush()
        return terminal

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's turn and its upstream stream (it ends ``cancelled``)."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.chats.cancel(session_id)

    @functools.cached_property
    def extensions(self) -> Extensions:
        """The extension methods: feature operations, ACP's ``nes/*`` and ``document/*``."""
        return Extensions(lambda: self.host.bench.features, self.nes)

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        """Answer ``_qodeassist/<feature>/<op>`` and ``nes/*`` (the SDK's extension hook)."""
        return await self.extensions.request(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Handle ``document/*`` and ``nes/accept|reject`` (the SDK's extension hook)."""
        await self.extensions.notify(method, params)

    async def aclose(self) -> None:
        """Cancel every turn and next edit; write the chats."""
        self.nes.aclose()
        for session in self.sessions.values():
            await session.chats.aclose()
            await session.aclose()


def _message(prompt: list[Any]) -> tuple[str, list[str], list[InlineImage]]:
    """Return the message text, the attachments (file URIs) and the images of a prompt.

    The text blocks, links and quoted resources are joined by a blank line, in their order:
    separate blocks are separate paragraphs, never run together.
    """
    parts: list[str] = []
    attachments: list[str] = []
    images: list[InlineImage] = []
    for block in prompt:
        if isinstance(block, TextContentBlock):
            if block.text:
                parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            if block.uri.startswith("file:"):
                attachments.append(block.uri)
            else:
                parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if not isinstance(resource, TextResourceContents):
                raise InvalidParams(f"{resource.uri}: only text resources can be embedded")
            parts.append(f"File: {resource.uri}\n```\n{resource.text}\n```")
        elif isinstance(block, ImageContentBlock):
            images.append(_image(block, len(images) + 1))
        else:
            raise InvalidParams(
                f"{block.type} content is not supported; send text, images, resources"
            )
    return "\n\n".join(parts), attachments, images


def _image(block: ImageContentBlock, number: int) -> InlineImage:
    """Return the image of an image block (named after its URI, else ``image-N``)."""
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams(f"image {number}: its data is not base64") from None
    name = PurePosixPath(block.uri).stem if block.uri else ""
    return InlineImage(data, block.mime_type, name or f"image-{number}")
