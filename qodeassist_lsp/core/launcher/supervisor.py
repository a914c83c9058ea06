"""``ProviderLauncher``: start, adopt, watch and stop the local model server of a provider instance.

An instance with a ``[launch]`` table (behaviour §2.4) names a command that serves its API, such
as ``qodeassist-lsp embedded serve`` for the bundled Embedded instance. The launcher makes that
server ready on demand: a server already answering ``ready_url`` is adopted as is; otherwise the
command is spawned and ``ready_url`` polled until it answers 2xx. Once ready, requests go straight
to the server: the probe runs again only after a request could not connect
(``request_failed``), and an attached server's exit is seen without any probe.

Within one process concurrent ``ensure_ready`` calls share one start; across processes the start
is serialised by a lock file (``run_files``). Every failure is a ``LaunchError`` whose message
says what to do.
"""

from __future__ import annotations

import asyncio
import atexit
import enum
import logging
import re
import signal
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.core.launcher.probe import (
    ADOPT_PROBE_TIMEOUT_S,
    PROBE_TIMEOUT_S,
    ProbeKind,
    ReadinessProbe,
)
from qodeassist_lsp.core.launcher.processes import pid_matches
from qodeassist_lsp.core.launcher.readiness import TAIL_CHARS, Readiness
from qodeassist_lsp.core.launcher.run_files import RunFiles, default_run_dir
from qodeassist_lsp.core.launcher.server_process import Owned, Scrollback
from qodeassist_lsp.core.launcher.spawn import Spawner
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

log = logging.getLogger("qodeassist.launcher")


class LauncherState(enum.StrEnum):
    """Where a launcher is in the life of its server."""

    IDLE = "idle"
    STARTING = "starting"
    PROBING = "probing"
    READY = "ready"
    STOPPING = "stopping"
    FAILED = "failed"


_LIVE: weakref.WeakSet[ProviderLauncher] = weakref.WeakSet()


@atexit.register
def _stop_attached_at_exit() -> None:
    # The owner is exiting without aclose(): attached servers must not outlive it.
    for launcher in list(_LIVE):
        if launcher._owned is not None:
            launcher._owned.signal_now(signal.SIGTERM)


PROGRESS_LINE = re.compile(r"\bprogress: (\d{1,3})% (.*)$")
"""A line a starting server prints to say how far a long step got (a model download)."""


class ProviderLauncher:
    """Makes the ``[launch]`` server of one provider instance ready, and stops it again."""

    def __init__(
        self,
        name: str,
        config: LaunchConfig,
        *,
        run_dir: Path | None = None,
        source: Path | None = None,
        probe_interval_s: float = 0.5,
        stop_grace_s: float = 5.0,
        failure_cooldown_s: float = 5.0,
        on_state: Callable[[LauncherState], None] | None = None,
        on_progress: Callable[[int | None, str], None] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.run_dir = run_dir or default_run_dir()
        self.probe = ReadinessProbe(config.ready_url)
        """The readiness probe; ``probe.count`` says how often it ran."""
        self._files = RunFiles(self.run_dir, name, config.ready_url)
        self._spawner = Spawner(name, config, source)
        self._readiness = Readiness(name, config, self.probe, probe_interval_s)
        self._grace = stop_grace_s
        self._cooldown = failure_cooldown_s
        self._on_state = on_state
        self._on_progress = on_progress
        self._progressing = False
        self._state = LauncherState.IDLE
        self._owned: Owned | None = None
        self._adopted = False
        self._suspect = False
        self._failed_at = 0.0
        self._start_task: asyncio.Task[None] | None = None
        self._scrollback = Scrollback()
        self.last_error: ErrorInfo | None = None
        """The failure of the last start, if it failed."""

    @property
    def state(self) -> LauncherState:
        """The current state."""
        return self._state

    @property
    def pid(self) -> int | None:
        """The pid of the server this launcher started, while it runs (never an adopted one)."""
        return self._owned.pid if self._owned is not None else None

    @property
    def adopted(self) -> bool:
        """Whether the ready server was already running and is used as is."""
        return self._adopted

    @property
    def lock_path(self) -> Path:
        """The lock file that serialises starts of this server across processes."""
        return self._files.lock_path

    @property
    def pid_path(self) -> Path:
        """The file naming the process that started the server (for people and tools)."""
        return self._files.pid_path

    def output_tail(self, chars: int = TAIL_CHARS) -> str:
        """Return the last ``chars`` characters an attached server printed."""
        return self._scrollback.tail(chars)

    def request_failed(self, info: ErrorInfo) -> None:
        """Note a failed request: one that got no HTTP answer makes the next call re-probe."""
        if info.category is ErrorCategory.NETWORK and info.status is None:
            self._suspect = True

    # -- start -----------------------------------------------------------------------------

    async def ensure_ready(self) -> None:
        """Return once the server answers; start or adopt it first if needed (``LaunchError``)."""
        if self._state is LauncherState.READY and await self._still_ready():
            return
        task = self._start_task
        if task is None or task.done():
            if (
                self._state is LauncherState.FAILED
                and self.last_error is not None
                and time.monotonic() - self._failed_at < self._cooldown
            ):
                # Fail fast instead of respawning a broken command on every keystroke.
                raise LaunchError(self.last_error)
            task = asyncio.create_task(self._start(), name=f"launch-{self.name}")
            task.add_done_callback(_retrieve)
            self._start_task = task
        await asyncio.wait({task})
        if task.cancelled():
            raise LaunchError(
                ErrorInfo(ErrorCategory.NETWORK, f"starting the {self.name} server was cancelled")
            )
        error = task.exception()
        if error is not None:
            # _start turns every failure into a LaunchError; each waiter gets its own.
            info = error.info if isinstance(error, LaunchError) else self.last_error
            raise LaunchError(info or ErrorInfo(ErrorCategory.NETWORK, str(error))) from error

    async def _still_ready(self) -> bool:
        """Whether the ready server still serves: a probe only after a failed connect."""
        owned = self._owned
        if owned is not None and owned.exited:
            log.warning("%s server (pid %s) exited; starting it again", self.name, owned.pid)
            await owned.reap()
            self._files.clear_pid(owned.pid)
            self._forget()
            return False
        if not self._suspect or (owned is not None and owned.process is not None):
            # A running child is ours to keep; only its exit (above) makes it restart.
            return True
        self._suspect = False
        if (await self.probe(ADOPT_PROBE_TIMEOUT_S)).kind is ProbeKind.OK:
            return True
        log.warning("%s server stopped answering %s", self.name, self.config.ready_url)
        self._forget()
        return False

    async def _start(self) -> None:
        self._scrollback = Scrollback()
        self._suspect = False
        try:
            url = self.config.ready_url
            if url is not None:
                self._set_state(LauncherState.PROBING)
                probe = await self.probe(ADOPT_PROBE_TIMEOUT_S)
                if probe.kind is ProbeKind.OK:
                    self._adopt()
                    return
                if probe.foreign:
                    raise self._readiness.port_taken(probe)
            lock_timeout = self.config.ready_timeout_s + 10
            async with self._files.start_lock(lock_timeout, self._spawner.config_error):
                if url is not None and await self._readiness.running_elsewhere():
                    self._adopt()
                    return
                self._set_state(LauncherState.STARTING)
                spawn = self._spawner
                owned = await (
                    spawn.detached()
                    if self.config.detach
                    else spawn.attached(self._scrollback, self._progress_line)
                )
                self._owned = owned
                if not owned.detached:
                    _LIVE.add(self)
                self._files.write_pid(
                    owned.pid, detached=owned.detached, command=self.config.command
                )
                self._set_state(LauncherState.PROBING)
                await self._readiness.wait(owned, self._scrollback)
        except asyncio.CancelledError:
            await self._kill_owned()
            self._forget()
            raise
        except Exception as exc:
            await self._kill_owned()
            why = f"could not start the {self.name} server: {exc}"
            info = (
                exc.info if isinstance(exc, LaunchError) else ErrorInfo(ErrorCategory.NETWORK, why)
            )
            self.last_error, self._failed_at = info, time.monotonic()
            self._forget(LauncherState.FAILED)
            log.info("%s", info.message)  # raised: the caller reports it
            raise LaunchError(info) from exc
        if not self._adopted:
            self.last_error = None
            self._set_state(LauncherState.READY)
            log.info("%s server ready (pid %s)", self.name, self.pid)

    def _adopt(self) -> None:
        self._adopted = True
        self.last_error = None
        self._set_state(LauncherState.READY)
        log.info("%s: adopted the server already answering %s", self.name, self.config.ready_url)

    # -- stop ------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop the server this launcher started (SIGTERM, then kill); forget an adopted one."""
        await self._cancel_start()
        owned = self._owned
        if owned is not None:
            if owned.detached and not await self._still_ours(owned):
                log.warning(
                    "%s: pid %s is no longer our server; not signalled", self.name, owned.pid
                )
            else:
                self._set_state(LauncherState.STOPPING)
                await self._kill_owned()
        self._forget()

    async def aclose(self) -> None:
        """Stop an attached server (a detached one keeps running) and release resources."""
        if self._owned is not None and self._owned.detached:
            await self._cancel_start()
            self._forget()
        else:
            await self.stop()
        await self.probe.aclose()

    async def _cancel_start(self) -> None:
        task = self._start_task
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.wait({task})

    async def _still_ours(self, owned: Owned) -> bool:
        if not pid_matches(owned.pid, owned.marker):
            return False
        # A detached server is not our child: only a still-answering probe shows the pid is not
        # reused by an unrelated process (where no start time can be read).
        return owned.marker is not None or (
            (await self.probe(PROBE_TIMEOUT_S)).kind is ProbeKind.OK
        )

    async def _kill_owned(self) -> None:
        owned = self._owned
        if owned is None:
            return
        await owned.terminate(self._grace)
        self._files.clear_pid(owned.pid)
        log.info("%s server (pid %s) stopped", self.name, owned.pid)

    def _forget(self, state: LauncherState = LauncherState.IDLE) -> None:
        self._owned = None
        self._adopted = False
        _LIVE.discard(self)
        self._set_state(state)

    def _progress_line(self, line: str) -> None:
        """Report a ``progress: N% what`` line of the starting server (a model download)."""
        found = PROGRESS_LINE.search(line)
        if found is not None and self._on_progress is not None:
            self._progressing = True
            self._on_progress(min(100, int(found[1])), found[2].strip())

    def _set_state(self, state: LauncherState) -> None:
        if state is self._state:
            return
        log.debug("%s launcher: %s -> %s", self.name, self._state, state)
        self._state = state
        if self._on_state is not None:
            self._on_state(state)
        if self._progressing and state in (LauncherState.READY, LauncherState.FAILED):
            self._progressing = False
            if self._on_progress is not None:  # None: the start is over, however it ended
                self._on_progress(None, "ready" if state is LauncherState.READY else "failed")


def _retrieve(task: asyncio.Task[None]) -> None:
    # Waiters read the outcome themselves; this only marks it retrieved for the event loop.
    if not task.cancelled():
        task.exception()
