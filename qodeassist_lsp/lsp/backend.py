"""The server's backend: configuration, editor settings, the core runtime and config watching.

Kept free of pygls so it can be tested directly. It is the server's
``core.runtime_view.RuntimeView``: features read ``configuration``, ``sessions`` and
``settings`` from it per request. The configuration is loaded off the event loop (it reads and
dry-renders every agent), so ``initialize`` answers at once; handlers that need it
``await runtime()``. Config files are polled for changes (a few ``stat`` calls); a change
reloads everything and flushes pooled sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qodeassist_lsp import __version__
from qodeassist_lsp.config.merge import deep_merge
from qodeassist_lsp.config.paths import ConfigPaths

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.pipelines import PipelineSpec
    from qodeassist_lsp.config.problems import ConfigProblem
    from qodeassist_lsp.config.secrets import SecretsPort
    from qodeassist_lsp.config.settings import Settings
    from qodeassist_lsp.core.runtime import LaunchProgress, Runtime
    from qodeassist_lsp.core.session_manager import SessionManager

log = logging.getLogger("qodeassist.server")

Signature = tuple[tuple[str, int, int], ...]
ReloadListener = Callable[["Configuration"], None]


class Backend:
    """Owns the configuration snapshot and the runtime built from it."""

    def __init__(
        self,
        paths_factory: Callable[[Path | None], ConfigPaths] = ConfigPaths.discover,
        secrets: SecretsPort | None = None,
    ) -> None:
        self._paths_factory = paths_factory
        self._secrets = secrets
        self._paths: ConfigPaths | None = None
        self._editor_settings: dict[str, Any] = {}
        self._initial_settings: dict[str, Any] = {}
        self._config: Configuration | None = None
        self._runtime: Runtime | None = None
        self._ready = asyncio.Event()
        self._defaults: Settings | None = None
        self._lock = asyncio.Lock()
        self._signature: Signature = ()
        self._watcher: asyncio.Task[None] | None = None
        self._start_failure: Exception | None = None
        self.listeners: list[ReloadListener] = []
        self.launch_listeners: list[LaunchProgress] = []
        """Hear how far starting model servers got (the embedded model's download)."""

    def _launch_progress(self, instance: str, percent: int | None, message: str) -> None:
        for listener in self.launch_listeners:
            listener(instance, percent, message)

    @property
    def configuration(self) -> Configuration:
        """The current configuration (only valid once ``runtime()`` has returned)."""
        assert self._config is not None, "configuration not loaded yet"
        return self._config

    @property
    def loaded(self) -> bool:
        """Whether the first configuration load has finished."""
        return self._config is not None

    @property
    def settings(self) -> Settings:
        """The current settings; the defaults while the first load runs."""
        if self._config is not None:
            return self._config.settings
        if self._defaults is None:
            from qodeassist_lsp.config.settings import Settings  # heavy: see _load

            self._defaults = Settings()
        return self._defaults

    @property
    def sessions(self) -> SessionManager:
        """The current session manager (only valid once ``runtime()`` has returned)."""
        assert self._runtime is not None, "runtime not built yet"
        return self._runtime.sessions

    @property
    def runtime_now(self) -> Runtime:
        """The runtime (only valid once ``runtime()`` has returned, or in a reload listener)."""
        assert self._runtime is not None, "runtime not built yet"
        return self._runtime

    def status(self, specs: Iterable[PipelineSpec], **parts: Any) -> dict[str, Any]:
        """Return the ``qodeassist/status`` payload: the runtime, ``parts``, ``specs``' agents."""
        if not self.loaded:
            return {"state": "loading", "version": __version__}
        config = self.configuration
        errors = len(config.errors)
        return {
            "state": "ready",
            "version": __version__,
            "configRoot": str(config.paths.config_root),
            "agents": len(config.agents),
            "providers": [] if self._runtime is None else self._runtime.provider_health(),
            "problems": {"errors": errors, "warnings": len(config.problems) - errors},
            **parts,
            "pipelines": {spec.status_key: config.pipelines.shown(spec) for spec in specs},
        }

    @property
    def paths(self) -> ConfigPaths | None:
        """The configuration roots, once ``start`` ran."""
        return self._paths

    async def start(self, project: Path | None, editor_settings: Mapping[str, Any] | None) -> None:
        """Resolve the roots for ``project`` and load the configuration in the background.

        A failure is kept: ``runtime()`` and ``reload()`` raise it again, with its cause, rather
        than waiting forever or saying the start never happened.
        """
        try:
            self._paths = self._paths_factory(project)
            self._editor_settings = dict(editor_settings or {})
            self._initial_settings = dict(self._editor_settings)
            await self.reload()
        except Exception as exc:
            if self._runtime is None:
                self._start_failure = exc
                self._ready.set()  # wake the waiters of runtime(): they raise the failure
            raise

    async def runtime(self) -> Runtime:
        """Return the runtime, waiting for the first load (raise why the start failed)."""
        await self._ready.wait()
        if self._runtime is None:
            raise self._not_started()
        return self._runtime

    def _not_started(self) -> RuntimeError:
        failure = self._start_failure
        if failure is None:
            return RuntimeError("Backend.start() was not called")
        error = RuntimeError(f"the server could not start: {failure}")
        error.__cause__ = failure
        return error

    async def set_editor_settings(self, settings: Mapping[str, Any] | None) -> None:
        """Apply the editor's ``qodeassist`` settings section (a reload if it changed).

        The section is layered over the ``initializationOptions``: clients that answer
        ``workspace/configuration`` with ``{}`` for sections they do not know (lsp-mode, Zed)
        must not wipe the settings they started the server with.
        """
        new = deep_merge(self._initial_settings, dict(settings or {}))
        if new != self._editor_settings:
            self._editor_settings = new
            await self.reload()

    async def reload(self) -> Configuration:
        """Load the configuration again and switch the runtime over to it."""
        paths = self._paths
        if paths is None:
            raise self._not_started()
        async with self._lock:
            signature = await asyncio.to_thread(config_signature, paths)
            config = await asyncio.to_thread(_load, paths, self._editor_settings)
            self._signature = signature
            self._config = config
            if self._runtime is None:
                # Heavy (see _load), and by now imported: the worker thread warmed it.
                from qodeassist_lsp.core.runtime import Runtime

                self._runtime = Runtime(config, self._secrets, self._launch_progress)
            else:
                await self._runtime.reload(config)
            self._start_failure = None
            self._ready.set()
        for listener in self.listeners:  # first: one applies [logging], which the line below obeys
            listener(config)
        log.info(
            "configuration loaded: %d agents, %d providers, %d problem(s) (%d error(s))",
            len(config.agents),
            len(config.providers),
            len(config.problems),
            len(config.errors),
        )
        return config

    def problems_for(self, path: Path) -> list[ConfigProblem]:
        """Return the problems of the current configuration located in ``path``."""
        if self._config is None:
            return []
        target = str(path.resolve())
        return [
            p for p in self._config.problems if p.file and str(Path(p.file).resolve()) == target
        ]

    def watch(self, interval: float = 2.0) -> None:
        """Start polling the config files; a change triggers ``reload``."""
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._poll(interval), name="qa-config-watch")

    async def _poll(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            paths = self._paths
            if paths is None:
                continue
            try:
                signature = await asyncio.to_thread(config_signature, paths)
                if signature != self._signature:
                    log.info("configuration files changed; reloading")
                    await self.reload()
            except Exception:  # a broken poll must not stop watching
                log.exception("config watch failed")

    async def aclose(self) -> None:
        """Stop watching and close the runtime."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        if self._runtime is not None:
            await self._runtime.aclose()


def _load(paths: ConfigPaths, editor_settings: Mapping[str, Any]) -> Configuration:
    # Imported here, in the worker thread: the server answers `initialize` before these heavy
    # modules (pydantic models, Jinja2, httpx) are loaded.
    from qodeassist_lsp.config.configuration import load_configuration
    from qodeassist_lsp.config.templating import default_code_cache_path
    from qodeassist_lsp.core import runtime  # noqa: F401  (warm the import off the event loop)
    from qodeassist_lsp.lsp.sections import SECTIONS

    return load_configuration(paths, (), editor_settings, SECTIONS, default_code_cache_path())


def config_signature(paths: ConfigPaths) -> Signature:
    """Return (path, mtime, size) of every user and project config file, for change polling."""
    roots = [paths.config_root]
    if paths.project_config is not None:
        roots.append(paths.project_config)
    entries: list[tuple[str, int, int]] = []
    for root in roots:
        for pattern in ("*.toml", "*.json", ".env", "providers/*.toml", "agents/*.toml"):
            for file in sorted(root.glob(pattern)):
                with contextlib.suppress(OSError):
                    stat = file.stat()
                    entries.append((str(file), stat.st_mtime_ns, stat.st_size))
    return tuple(entries)
