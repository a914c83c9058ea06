"""`HttpHost`: the chat service, permission gate and edits the HTTP routes work with.

The composition root (``cli/serve_cmd.py``) hands it `Surroundings`: the runtime source (the
same ``Backend`` an LSP server beside it uses), the open documents, the workspace folders, the
status object and, beside an editor, the editor's edit manager and skills. Alone, the host adds
the tool kit, the file-edit tools (writing on disk) and ``load_skill`` (`skills.HostSkills`) to
the runtime itself. Either way it wraps the runtime's permission gate in `HttpGate` and builds
its own `ChatService` over the same runtime and history folder, whose events go to the
`EventHub` of the HTTP streams.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.http_api.events import EventHub, Questions
from qodeassist_lsp.http_api.gate import HttpGate
from qodeassist_lsp.wire.errors import QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.config.settings import ToolsSettings
    from qodeassist_lsp.core.runtime import Runtime
    from qodeassist_lsp.features.chat.service import ChatService
    from qodeassist_lsp.skills.library import SkillLibrary
    from qodeassist_lsp.tools.edits.pending import EditManager

READY_TIMEOUT_S = 30.0
"""How long a request waits for the first configuration load (beside an editor: its start)."""


class RuntimeSource(RuntimeView, Protocol):
    """Where the runtime comes from: the server's ``Backend``, also the chat's `RuntimeView`."""

    async def runtime(self) -> Runtime:
        """Return the runtime, waiting for the first load."""
        ...

    @property
    def runtime_now(self) -> Runtime:
        """The runtime (once ``runtime()`` has returned)."""
        ...


class NotReady(QodeAssistError):
    """The configuration is not loaded yet (an editor beside us has not started the server)."""


@dataclass
class Surroundings:
    """What the composition root gives the HTTP host."""

    source: RuntimeSource
    folders: Callable[[], Sequence[Path]]
    status: Callable[[], dict[str, Any]]
    documents: DocumentStore | None = None
    skills: Callable[[], Awaitable[SkillLibrary | None]] | None = None
    edits: Callable[[], Awaitable[EditManager]] | None = None
    """The editor's edit manager; None: the host offers its own file tools (on disk)."""


class HttpHost:
    """The state the HTTP routes share."""

    def __init__(self, surroundings: Surroundings) -> None:
        """Serve over ``surroundings``; everything is built on the first request."""
        self.surroundings = surroundings
        self.hub = EventHub()
        self.questions = Questions(self.hub)
        self.gate: HttpGate | None = None
        self._chat: ChatService | None = None
        self._edits: EditManager | None = None
        self._lock = asyncio.Lock()

    async def runtime(self) -> Runtime:
        """Return the runtime once loaded and wired (raise `NotReady` after `READY_TIMEOUT_S`)."""
        try:
            runtime = await asyncio.wait_for(self.surroundings.source.runtime(), READY_TIMEOUT_S)
        except TimeoutError:
            raise NotReady(
                "the configuration is not loaded yet (beside an editor, the editor starts it); "
                "try again in a moment"
            ) from None
        async with self._lock:
            if self.gate is None:
                self._wire(runtime)
        return runtime

    def _wire(self, runtime: Runtime) -> None:
        from qodeassist_lsp.features.chat.service import ChatService

        view = self.surroundings.source
        skills = self.surroundings.skills
        if self.surroundings.edits is None:
            from qodeassist_lsp.http_api.skills import HostSkills

            self._edits = self._wire_tools(runtime, view)
            skills = skills or HostSkills(view, runtime.contributors).library
        contributors = runtime.contributors
        self.gate = HttpGate(
            lambda: view.configuration.settings.tools.permissions, self.questions, contributors.gate
        )
        contributors.gate = self.gate
        folders = self.surroundings.folders
        first = next(iter(folders()), None)
        self._chat = ChatService(
            view,
            self.surroundings.documents or DocumentStore(),
            self.hub.publish_event,
            workspace=first,
            folders=lambda: list(folders()),
            skills=skills,
        )

    def _wire_tools(self, runtime: Runtime, view: RuntimeView) -> EditManager:
        """Add the tool kit and the on-disk file tools to a runtime no editor wired."""
        from qodeassist_lsp.config.confinement import Confinement
        from qodeassist_lsp.context.ignore import FolderIgnores
        from qodeassist_lsp.context.parse_check import file_parse_check
        from qodeassist_lsp.core.memory import Memory
        from qodeassist_lsp.tools.edits.checkpoints import CheckpointStore
        from qodeassist_lsp.tools.edits.file_tools import edit_tools
        from qodeassist_lsp.tools.edits.pending import EditManager, EditScope
        from qodeassist_lsp.tools.edits.ports import NoEditor
        from qodeassist_lsp.tools.kit import KitSources, ToolKit
        from qodeassist_lsp.tools.workspace import ToolWorkspace

        folders = self.surroundings.folders

        def workspace() -> ToolWorkspace:
            roots = list(folders())
            allowed = view.configuration.settings.general.allowed_roots
            return ToolWorkspace.of(roots, allowed, ignore=FolderIgnores.of(roots))

        def confinement() -> Confinement:
            allowed = view.configuration.settings.general.allowed_roots
            return Confinement.of(list(folders()), allowed)

        def tools() -> ToolsSettings:
            return view.configuration.settings.tools

        kit = ToolKit(
            KitSources(
                settings=tools,
                workspace=workspace,
                memory=lambda: Memory.of(view.configuration.paths),
            )
        )
        manager = EditManager(
            CheckpointStore(runtime.configuration.paths.data_root / "checkpoints"),
            NoEditor(),
            EditScope(
                confinement=confinement,
                base=lambda: next(iter(folders()), None),
                auto_apply=lambda: tools().auto_apply_file_edits,
                parse_check=file_parse_check(),  # the web chat warns about a broken edit too
            ),
            self.hub.publish_event,
        )
        runtime.contributors.add(kit.contribute)
        runtime.contributors.add(edit_tools(manager, lambda: tools().enabled))
        return manager

    async def chat(self) -> ChatService:
        """Return the chat service once the runtime is ready."""
        await self.runtime()
        assert self._chat is not None
        return self._chat

    async def edits(self) -> EditManager:
        """Return the edit manager the chats' file tools propose through."""
        await self.runtime()
        if self.surroundings.edits is not None:
            return await self.surroundings.edits()
        assert self._edits is not None
        return self._edits

    async def aclose(self) -> None:
        """Cancel the HTTP chats' requests and write their pending saves."""
        if self._chat is not None:
            await self._chat.aclose()
