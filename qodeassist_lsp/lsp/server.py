"""The pygls language server: lifecycle, settings, configuration diagnostics, status.

Handlers stay thin: they translate LSP to calls on the ``Backend`` and back. Features
(completion, refactor, chat) plug in through ``feature.LanguageFeature`` and register their
handlers from their own modules; ``app.py`` lists them. Documents live in the protocol's
`DocumentStore` (``protocol.py``), which the server shares with every feature.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from qodeassist_lsp import __version__
from qodeassist_lsp.config.pipelines import pipeline_specs
from qodeassist_lsp.context.documents import DocumentEvent, DocumentEventKind, DocumentStore
from qodeassist_lsp.core.parent_watch import ParentWatch
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.backend import Backend
from qodeassist_lsp.lsp.errors import answering
from qodeassist_lsp.lsp.feature import LanguageFeature, isolated
from qodeassist_lsp.lsp.launch_progress import LaunchProgressReporter
from qodeassist_lsp.lsp.protocol import QodeProtocol
from qodeassist_lsp.lsp.throttle import BackgroundOutage, MessageThrottle
from qodeassist_lsp.workbench.ports import Ports

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.problems import ConfigProblem
    from qodeassist_lsp.wire.errors import ErrorInfo
    from qodeassist_lsp.workbench.bench import Workbench

log = logging.getLogger("qodeassist.server")
CLOSE_TIMEOUT_S = 10.0
"""How long closing may take when the editor is gone before the server exits anyway."""
F = TypeVar("F", bound=Callable[..., Any])
L = TypeVar("L", bound=LanguageFeature)


def _answered(register: Callable[[F], Any]) -> Callable[[F], F]:
    """Wrap pygls's registering decorator so that the handler's errors are answered."""

    def decorator(handler: F) -> F:
        register(answering(handler))
        return handler

    return decorator


class QodeAssistServer(LanguageServer):
    """The language server and the state its handlers share."""

    protocol: QodeProtocol

    def __init__(self, backend: Backend | None = None) -> None:
        super().__init__(
            "qodeassist-lsp",
            __version__,
            protocol_cls=QodeProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.backend = backend or Backend()
        """The runtime the feature services read, per request (reload-safe)."""
        self.documents: DocumentStore = self.protocol.documents
        self.throttle = MessageThrottle()
        self.outage = BackgroundOutage()
        self.start_task: asyncio.Task[None] | None = None
        self.shutdown_received = False
        self.parent_watch = ParentWatch(lambda which: editor_gone(self, which))
        """Ends the server when the editor that started it exits (``processId``)."""
        self.end_input: Callable[[], None] | None = None
        """End the input as the client closing it would (set by `stdio`; None: leave by exit)."""
        self.features: list[LanguageFeature] = []
        self.ports = Ports(folders=self.workspace_folders, documents=self.documents)
        """The editor's side of the workbench; each handler module's ``setup`` adds its port."""
        self._bench: Workbench | None = None
        self._folders: tuple[object, list[Path]] = ((), [])
        """The last folders and what they were computed from (asked many times a request)."""
        self.backend.listeners.append(self._on_reload)
        self.backend.launch_listeners.append(LaunchProgressReporter(self))
        self.documents.add_listener(self._on_document)

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]:
        """Register a handler (pygls's decorator); its errors are answered by `answering`."""
        return _answered(super().feature(feature_name, options))

    def command(self, command_name: str) -> Callable[[F], F]:
        """Register a command (pygls's decorator); its errors are answered by `answering`."""
        return _answered(super().command(command_name))

    def add_feature(self, feature: LanguageFeature) -> None:
        """Call ``feature``'s lifecycle hooks from now on."""
        self.features.append(feature)

    def feature_of(self, kind: type[L]) -> L:
        """Return the added feature of class ``kind`` (how a named handler finds its feature)."""
        for feature in self.features:
            if isinstance(feature, kind):
                return feature
        raise LookupError(f"no {kind.__name__} was added to the server")

    def workbench(self) -> Workbench:
        """Return the tools, edits, skills, MCP hub, gate and chat of this server (built once)."""
        if self._bench is None:
            # Imported on first use: the tools, skills and ignore modules are not needed to
            # answer `initialize` (see chat_handlers on the import budget).
            from qodeassist_lsp.workbench.bench import Workbench

            self._bench = Workbench(self.backend, self.ports)
        return self._bench

    async def close_workbench(self) -> None:
        """Close the workbench if something built it (a completion-only session never does)."""
        if self._bench is not None:
            await self._bench.aclose()

    def workspace_folders(self) -> list[Path]:
        """Return the editor's workspace folders as they are now (they may change)."""
        paths = self.backend.paths
        project = paths.project if paths is not None else None
        uris = tuple(f.uri for f in self.workspace.folders.values())
        key = (uris, self.workspace.root_path, project)
        # The ignore rule asks for every open document of every completion (18 times a request
        # in lsp_bench): building the paths each time cost about 0.1 ms a completion.
        if self._folders[0] != key:
            folders = [Path(p) for uri in uris if (p := to_fs_path(uri))]
            if not folders and self.workspace.root_path:
                folders.append(Path(self.workspace.root_path))
            if not folders and project is not None:
                folders.append(project)
            self._folders = (key, folders)
        return list(self._folders[1])

    def show_error(self, key: str, message: str) -> None:
        """Show ``message`` to the user, at most once per throttle window per ``key``."""
        if self.throttle.allow(key):
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=message)
            )

    def background_failed(self, feature: str, agent: str, error: ErrorInfo) -> None:
        """Report a failed background request: to the status, and once per outage to the user."""
        log.warning("%s (%s) failed: %s", feature, agent or "no agent", error.message)
        first = self.outage.failed(feature, agent, error)
        if first:
            fix = self.outage.failure["fix"] if self.outage.failure else ""
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"qodeassist {feature} ({agent or 'no agent'}): {error.message} "
                    f"— {fix}. Shown once until it works again; the status has the details.",
                )
            )
            self.protocol.notify(methods.STATUS, self.status())

    def background_succeeded(self) -> None:
        """Report a background request that reached its model: it ends an outage."""
        if self.outage.succeeded():
            self.protocol.notify(methods.STATUS, self.status())

    def _on_reload(self, config: Configuration) -> None:
        for feature in self.features:
            with isolated(feature, "reloaded"):
                feature.reloaded(config)
        for document in self.documents:
            self.publish_config_diagnostics(document.uri)
        errors = config.errors
        if errors:
            self.show_error(
                f"config-errors-{len(errors)}",
                f"qodeassist: {len(errors)} configuration error(s), first: {errors[0].format()} "
                "— run `qodeassist-lsp agents validate` for all",
            )
        self.protocol.notify(methods.STATUS, self.status())

    def _on_document(self, event: DocumentEvent) -> None:
        if event.kind is DocumentEventKind.OPENED:
            self.publish_config_diagnostics(event.document.uri)

    def publish_config_diagnostics(self, uri: str) -> None:
        """Publish load problems of the config file ``uri`` (if it is one) as diagnostics."""
        path = to_fs_path(uri)
        if path is None or not path.endswith((".toml", ".json")):
            return
        problems = self.backend.problems_for(Path(path))
        for feature in self.features:
            with isolated(feature, "config_problems"):
                problems += feature.config_problems(Path(path))
        paths = self.backend.paths
        inside = paths is not None and _is_config_file(Path(path), paths.config_root, paths.project)
        if not problems and not inside:
            return
        diagnostics = [config_diagnostic(p) for p in problems]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    def status(self) -> dict[str, Any]:
        """Return the ``qodeassist/status`` payload."""
        features = self.features if self.backend.loaded else []
        parts = {f.status_key: f.status() for f in features if f.status_key is not None}
        table = self.ports.features
        if table is not None and self.backend.loaded:  # each feature's part, under its name
            if table.built:
                parts |= table.status()
            else:
                parts |= {spec.name: {"state": "waiting"} for spec in table.specs}
        parts = {key: part for key, part in parts.items() if part is not None}
        status = self.backend.status(pipeline_specs(), **parts)
        if self.outage.failure is not None and status.get("state") == "ready":
            status["state"] = "degraded"
            status["outage"] = dict(self.outage.failure)
        return status


def _is_config_file(path: Path, config_root: Path, project: Path | None) -> bool:
    resolved = path.resolve()
    roots = [config_root.resolve()]
    if project is not None:
        roots.append((project / ".qodeassist").resolve())
    return any(resolved.is_relative_to(root) for root in roots)


def config_diagnostic(problem: ConfigProblem) -> types.Diagnostic:
    """Return the diagnostic of a configuration problem (on its line, or the first)."""
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


def initialize(ls: QodeAssistServer, params: types.InitializeParams) -> None:
    """Start loading the configuration in the background and watching the editor; answer."""
    settings = _editor_settings(params.initialization_options)
    ls.start_task = asyncio.create_task(ls.backend.start(_project_of(params), settings))
    ls.parent_watch.start(params.process_id)


async def initialized(ls: QodeAssistServer, params: types.InitializedParams) -> None:
    """Pull the editor's settings, watch the config files, prepare the features."""
    if ls.start_task is not None:
        await ls.start_task
    await _pull_configuration(ls)
    ls.backend.watch()
    for feature in ls.features:
        with isolated(feature, "initialized"):
            await feature.initialized()


async def did_change_configuration(
    ls: QodeAssistServer, params: types.DidChangeConfigurationParams
) -> None:
    """Apply the editor's changed ``qodeassist`` settings."""
    settings = _editor_settings(params.settings)
    if settings is not None:
        await ls.backend.set_editor_settings(settings)
    else:
        await _pull_configuration(ls)


async def did_save(ls: QodeAssistServer, params: types.DidSaveTextDocumentParams) -> None:
    """Tell the features of the save; reload the configuration when one of its files was saved."""
    path = to_fs_path(params.text_document.uri)
    table = ls.ports.features
    if path and table is not None:
        from qodeassist_lsp.core.operations import FileChange

        table.files_changed([FileChange(path=Path(path), kind="saved", text=params.text)])
    paths = ls.backend.paths
    if path and paths and _is_config_file(Path(path), paths.config_root, paths.project):
        await ls.backend.reload()


async def shutdown(ls: QodeAssistServer, params: None) -> None:
    """Stop watching the editor, close every feature (each guarded), then the backend."""
    ls.shutdown_received = True
    await _close(ls)


async def _close(ls: QodeAssistServer) -> None:
    await ls.parent_watch.stop()
    for feature in ls.features:
        with isolated(feature, "aclose"):
            await feature.aclose()
    await ls.backend.aclose()


async def editor_gone(ls: QodeAssistServer, which: str) -> None:
    """Close what ``shutdown`` closes, then end the process as ``exit`` does without it (1)."""
    try:
        async with asyncio.timeout(CLOSE_TIMEOUT_S):
            await _close(ls)
    except TimeoutError:
        log.warning("closing took over %g s; exiting anyway", CLOSE_TIMEOUT_S)
    if ls.end_input is not None:  # stdio: the serving loop ends, a companion (--http) in order
        ls.end_input()
    else:  # out of the event loop, as pygls's `exit` handler's sys.exit
        asyncio.get_running_loop().call_soon(sys.exit, 1)


def status(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
    """Answer ``qodeassist/status``."""
    return ls.status()


async def reload_configuration(ls: QodeAssistServer) -> dict[str, Any]:
    """Reload the configuration; answer the agent and error counts."""
    config = await ls.backend.reload()
    return {"agents": len(config.agents), "errors": len(config.errors)}


def setup(server: QodeAssistServer) -> None:
    """Register the lifecycle, settings, document and status handlers on ``server``."""
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.SHUTDOWN)(shutdown)
    server.feature(methods.STATUS)(status)
    server.command(methods.CMD_RELOAD)(reload_configuration)


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
