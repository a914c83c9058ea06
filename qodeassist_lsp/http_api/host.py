"""`HttpHost`: the HTTP door's ports on the `workbench.bench.Workbench`.

The composition root (``cli/serve_cmd.py``) hands it `Surroundings`: the runtime source (the
same ``Backend`` an LSP server beside it uses), the open documents, the workspace folders, the
status object and, beside an editor, the editor's workbench. Alone, the host builds a workbench
that wires the tool kit, the file-edit tools (writing on disk) and ``load_skill`` into the
runtime. Either way the HTTP chats' questions go to the workbench's one permission gate
(`gate.ChatAsker`: each request's mode), and the workbench builds its chat service (the same
ignore rule and agent pool as every door's) whose events go to the `EventHub` of the HTTP
streams.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.http_api.events import EventHub, Questions
from qodeassist_lsp.wire.errors import ErrorKind, QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.core.runtime import Runtime
    from qodeassist_lsp.features.chat.service import ChatService
    from qodeassist_lsp.tools.edits.pending import EditManager
    from qodeassist_lsp.workbench.bench import Workbench

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

    error_kind = ErrorKind.UNAVAILABLE
    error_code = "not_ready"
    retry_after_s = 2


@dataclass
class Surroundings:
    """What the composition root gives the HTTP host."""

    source: RuntimeSource
    folders: Callable[[], Sequence[Path]]
    status: Callable[[], dict[str, Any]]
    documents: DocumentStore | None = None
    bench: Callable[[], Workbench] | None = None
    """The editor's workbench (tools, edits, skills, agent pool); None: the host builds one."""


class HttpHost:
    """The state the HTTP routes share."""

    def __init__(self, surroundings: Surroundings) -> None:
        """Serve over ``surroundings``; everything is built on the first request."""
        self.surroundings = surroundings
        self.hub = EventHub()
        self.questions = Questions(self.hub)
        self._chat: ChatService | None = None
        self.bench: Workbench | None = None
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
            if self._chat is None:
                self._wire(runtime)
        return runtime

    def _wire(self, runtime: Runtime) -> None:
        view, around = self.surroundings.source, self.surroundings
        if around.bench is not None:  # beside an editor: its workbench, already wired
            self.bench = around.bench()
        else:  # alone: a workbench of our own, files written on disk
            from qodeassist_lsp.workbench.bench import Workbench
            from qodeassist_lsp.workbench.ports import Ports

            self.bench = Workbench(
                view,
                Ports(
                    folders=around.folders,
                    documents=around.documents or DocumentStore(),
                    edit_status=self.hub.emit,
                ),
            )
            self.bench.wire(runtime.contributors)
        self._chat = self.bench.chat_service(self.hub.emit)

    async def chat(self) -> ChatService:
        """Return the chat service once the runtime is ready."""
        await self.runtime()
        assert self._chat is not None
        return self._chat

    async def edits(self) -> EditManager:
        """Return the edit manager the chats' file tools propose through."""
        await self.runtime()
        assert self.bench is not None
        return self.bench.edits

    async def aclose(self) -> None:
        """Cancel the HTTP chats' requests and write their pending saves."""
        if self._chat is not None:
            await self._chat.aclose()
