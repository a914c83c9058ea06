"""The pygls language server: lifecycle, settings, documents, configuration diagnostics, status.

Handlers stay thin: they translate LSP to calls on the ``Backend`` and the feature services and
back. Feature handlers (completion, refactor, chat) register from their own modules; ``app.py``
assembles the whole server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from qodeassist_lsp import __version__
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.backend import Backend
from qodeassist_lsp.lsp.protocol import QodeProtocol
from qodeassist_lsp.lsp.throttle import MessageThrottle

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.problems import ConfigProblem
    from qodeassist_lsp.context.ignore import IgnoreFilter
    from qodeassist_lsp.core.events import SessionEvent
    from qodeassist_lsp.core.session_manager import SessionManager
    from qodeassist_lsp.features.chat.service import ChatService
    from qodeassist_lsp.features.completion.service import CompletionService
    from qodeassist_lsp.features.refactor.instructions import Instruction
    from qodeassist_lsp.features.refactor.service import RefactorService

log = logging.getLogger("qodeassist.server")


class QodeAssistServer(LanguageServer):
    """The language server and the state its handlers share."""

    def __init__(self, backend: Backend | None = None) -> None:
        super().__init__(
            "qodeassist-lsp",
            __version__,
            protocol_cls=QodeProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.backend = backend or Backend()
        self.throttle = MessageThrottle()
        self.start_task: asyncio.Task[None] | None = None
        self.documents = DocumentStore()
        self._completion: CompletionService | None = None
        self._refactor: RefactorService | None = None
        self._chat: ChatService | None = None
        self._ignore: IgnoreFilter | None = None
        self.chat_events = EventGate(self._send_chat_event)
        self._instructions: list[Instruction] | None = None
        self.backend.listeners.append(self._on_reload)

    def completion_feature(self) -> CompletionService:
        """Return the completion service, creating it (and its document listener) now.

        Called on the first ``didOpen`` so that every edit is seen, even those typed before
        the configuration finished loading; the runtime is only read per request.
        """
        if self._completion is None:
            from qodeassist_lsp.config.settings import Settings
            from qodeassist_lsp.features.completion.service import CompletionService

            defaults = Settings()
            backend = self.backend

            def settings() -> Settings:
                current = backend.current
                return current.settings if current is not None else defaults

            self._completion = CompletionService(
                _RuntimeView(backend), self.documents, settings=settings
            )
        return self._completion

    async def completion_service(self) -> CompletionService:
        """Return the completion service once the configuration is ready."""
        service = self.completion_feature()
        await self.backend.runtime()
        if service.ignore is None:
            service.ignore = self.ignore_filter()
        return service

    def ignore_filter(self) -> IgnoreFilter | None:
        """Return the project's ``.qodeassistignore`` filter (``None`` without a project)."""
        paths = self.backend.paths
        if self._ignore is None and paths is not None and paths.project is not None:
            from qodeassist_lsp.context.ignore import IgnoreFilter

            self._ignore = IgnoreFilter(paths.project)
        return self._ignore

    async def chat_service(self) -> ChatService:
        """Return the chat service once the configuration is ready."""
        await self.backend.runtime()
        if self._chat is None:
            from qodeassist_lsp.features.chat.service import ChatService

            paths = self.backend.paths
            self._chat = ChatService(
                _RuntimeView(self.backend),
                self.documents,
                self.chat_events.emit,
                workspace=paths.project if paths is not None else None,
                ignore=self.ignore_filter,
                folders=self.workspace_folders,
            )
        return self._chat

    def workspace_folders(self) -> list[Path]:
        """Return the editor's workspace folders as they are now (they may change)."""
        folders = [Path(p) for f in self.workspace.folders.values() if (p := to_fs_path(f.uri))]
        if not folders and self.workspace.root_path:
            folders.append(Path(self.workspace.root_path))
        paths = self.backend.paths
        if not folders and paths is not None and paths.project is not None:
            folders.append(paths.project)
        return folders

    def _send_chat_event(self, chat_id: str, event: SessionEvent) -> None:
        payload = event.to_json()
        if payload.get("kind") == "failed":  # the session logs it at INFO only
            log.warning("chat %s failed: %s", chat_id, payload.get("error", {}).get("message"))
        self.protocol.notify(methods.CHAT_EVENT, {"chatId": chat_id, **payload})

    async def refactor_service(self) -> RefactorService:
        """Return the refactor service once the configuration is ready."""
        await self.backend.runtime()
        if self._refactor is None:
            from qodeassist_lsp.features.refactor.service import RefactorService

            self._refactor = RefactorService(
                _RuntimeView(self.backend), self.documents, instructions=self.instructions
            )
        return self._refactor

    def instructions(self) -> list[Instruction]:
        """Return the instruction library (bundled, user, project), loaded once per reload."""
        if self._instructions is None:
            from qodeassist_lsp.features.refactor.instructions import load_instructions

            paths = self.backend.paths
            if paths is None:
                return []
            self._instructions, problems = load_instructions(paths)
            for problem in problems:
                log.warning("%s", problem.format())
        return self._instructions

    def show_error(self, key: str, message: str) -> None:
        """Show ``message`` to the user, at most once per throttle window per ``key``."""
        if self.throttle.allow(key):
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=message)
            )

    def _on_reload(self, config: Configuration) -> None:
        if self._completion is not None:
            self._completion.reset()
        self._instructions = None
        for uri in list(self.workspace.text_documents):
            self.publish_config_diagnostics(uri)
        errors = config.errors
        if errors:
            self.show_error(
                f"config-errors-{len(errors)}",
                f"qodeassist: {len(errors)} configuration error(s), first: {errors[0].format()} "
                "— run `qodeassist-lsp agents validate` for all",
            )
        self.protocol.notify(methods.STATUS, self.status())

    def publish_config_diagnostics(self, uri: str) -> None:
        """Publish load problems of the config file ``uri`` (if it is one) as diagnostics."""
        path = to_fs_path(uri)
        if path is None or not path.endswith((".toml", ".json")):
            return
        problems = self.backend.problems_for(Path(path))
        paths = self.backend.paths
        inside = paths is not None and _is_config_file(Path(path), paths.config_root, paths.project)
        if not problems and not inside:
            return
        diagnostics = [_diagnostic(p) for p in problems]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    def status(self) -> dict[str, Any]:
        """Return the ``qodeassist/status`` payload."""
        config = self.backend.current
        if config is None:
            return {"state": "loading", "version": __version__}
        return {
            "state": "ready",
            "version": __version__,
            "configRoot": str(config.paths.config_root),
            "agents": len(config.agents),
            "providers": self.backend.provider_health(),
            "problems": {
                "errors": len(config.errors),
                "warnings": len(config.problems) - len(config.errors),
            },
            "completion": self._completion.status() if self._completion else None,
            "pipelines": {
                "codeCompletion": list(config.pipelines.code_completion),
                "chatAssistant": list(config.pipelines.chat_assistant),
                "chatCompression": config.pipelines.chat_compression,
                "quickRefactor": config.pipelines.quick_refactor,
            },
        }


class EventGate:
    """Holds chat events back while a ``chat/send`` answer is on its way.

    A request may fail before the handler has returned (a template error, say); its events
    must still reach the client after the ``{chatId, requestId}`` answer, so the client knows
    the chat they belong to.
    """

    def __init__(self, send: Callable[[str, SessionEvent], None]) -> None:
        self._send = send
        self._holds = 0
        self._held: list[tuple[str, SessionEvent]] = []

    def emit(self, chat_id: str, event: SessionEvent) -> None:
        """Send ``event`` now, or after the pending answers when held."""
        if self._holds:
            self._held.append((chat_id, event))
        else:
            self._send(chat_id, event)

    def hold(self) -> None:
        """Hold events until the matching ``release``."""
        self._holds += 1

    def release_after_answer(self) -> None:
        """Release the hold once the handler's answer has been written.

        pygls writes the answer in a done-callback scheduled when the handler returns; the
        second ``call_soon`` runs after it.
        """
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_soon, self._release)

    def _release(self) -> None:
        self._holds = max(self._holds - 1, 0)
        if not self._holds:
            held, self._held = self._held, []
            for chat_id, event in held:
                self._send(chat_id, event)


class _RuntimeView:
    """The runtime as the completion service reads it: through the backend, per request."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    @property
    def configuration(self) -> Configuration:
        return self._backend.configuration_now

    @property
    def sessions(self) -> SessionManager:
        return self._backend.sessions


def _is_config_file(path: Path, config_root: Path, project: Path | None) -> bool:
    resolved = path.resolve()
    roots = [config_root.resolve()]
    if project is not None:
        roots.append((project / ".qodeassist").resolve())
    return any(resolved.is_relative_to(root) for root in roots)


def _diagnostic(problem: ConfigProblem) -> types.Diagnostic:
    line = max((problem.line or 1) - 1, 0)
    severity = (
        types.DiagnosticSeverity.Error
        if problem.severity == "error"
        else types.DiagnosticSeverity.Warning
    )
    return types.Diagnostic(
        range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)),
        message=problem.message,
        severity=severity,
        source="qodeassist",
    )


def _editor_settings(value: Any) -> dict[str, Any] | None:
    """Accept ``{"qodeassist": {...}}`` or the section itself."""
    if not isinstance(value, dict):
        return None
    section = value.get(methods.CONFIG_SECTION, value)
    return section if isinstance(section, dict) else None


def _project_of(params: types.InitializeParams) -> Path | None:
    for folder in params.workspace_folders or []:
        path = to_fs_path(folder.uri)
        if path:
            return Path(path)
    if params.root_uri:
        path = to_fs_path(params.root_uri)
        if path:
            return Path(path)
    return Path(params.root_path) if params.root_path else None


def register(server: QodeAssistServer) -> None:
    """Register lifecycle, settings, document and status handlers on ``server``."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: QodeAssistServer, params: types.InitializeParams) -> None:
        settings = _editor_settings(params.initialization_options)
        ls.start_task = asyncio.create_task(ls.backend.start(_project_of(params), settings))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: QodeAssistServer, params: types.InitializedParams) -> None:
        if ls.start_task is not None:
            await ls.start_task
        await _pull_configuration(ls)
        ls.backend.watch()
        await ls.completion_service()  # load the feature now, not on the first keystroke

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: QodeAssistServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = _editor_settings(params.settings)
        if settings is not None:
            await ls.backend.set_editor_settings(settings)
        else:
            await _pull_configuration(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: QodeAssistServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.completion_feature()  # listens to edits from the first document on
        ls.documents.open(item.uri, item.text, item.version, item.language_id)
        ls.publish_config_diagnostics(item.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: QodeAssistServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        protocol = ls.protocol
        edits = protocol.take_edits(uri) if isinstance(protocol, QodeProtocol) else None
        if ls.documents.get(uri) is not None:
            source = ls.workspace.get_text_document(uri).source
            ls.documents.change(uri, source, params.text_document.version, edits)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: QodeAssistServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.documents.close(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: QodeAssistServer, params: types.DidSaveTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        paths = ls.backend.paths
        if path and paths and _is_config_file(Path(path), paths.config_root, paths.project):
            await ls.backend.reload()

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: QodeAssistServer, params: None) -> None:
        if ls._completion is not None:
            ls._completion.close()
        if ls._chat is not None:
            await ls._chat.aclose()
        await ls.backend.aclose()

    @server.feature(methods.STATUS)
    def status(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
        return ls.status()

    @server.command(methods.CMD_RELOAD)
    async def reload_configuration(ls: QodeAssistServer) -> dict[str, Any]:
        config = await ls.backend.reload()
        return {"agents": len(config.agents), "errors": len(config.errors)}


async def _pull_configuration(ls: QodeAssistServer) -> None:
    capabilities = ls.client_capabilities.workspace
    if capabilities is None or not capabilities.configuration:
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(
                items=[types.ConfigurationItem(section=methods.CONFIG_SECTION)]
            )
        )
    except Exception as exc:  # a client that fails this request must not break the server
        log.warning("workspace/configuration failed: %s", exc)
        return
    if answer:
        section = answer[0]
        if isinstance(section, dict):
            await ls.backend.set_editor_settings(section)
