"""``ProviderLauncher``: start, adopt, watch and stop the local model server of a provider instance.

An instance with a ``[launch]`` table (behaviour §2.4) names a command that serves its API, such
as ``qodeassist-lsp embedded serve`` for the bundled Embedded instance. The launcher makes that
server ready on demand: a server already answering ``ready_url`` is adopted as is; otherwise the
command is spawned and ``ready_url`` polled until it answers 2xx. Attached servers capture their
output (for error messages) and are stopped with their owner; detached ones outlive it.

Several language servers of one user share one server: the start is serialised by a lock file
per ``ready_url`` host and port in the run directory, so the second process waits for the first
and then adopts its server instead of racing it for the port. Within one process concurrent
``ensure_ready`` calls share one start. Every failure is a ``LaunchError`` whose message says what
to do.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import enum
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import platformdirs

from qodeassist_lsp.config.paths import APP_NAME
from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core.processes import (
    KILL,
    open_lock,
    pid_matches,
    signal_group,
    signal_pid,
    start_marker,
    try_lock,
    unlock,
)
from qodeassist_lsp.wire.errors import CategorizedError, ErrorCategory, ErrorInfo

log = logging.getLogger("qodeassist.launcher")


class LaunchError(CategorizedError):
    """A ``[launch]`` server could not be started, adopted or reached; ``info`` says why."""


ADOPT_PROBE_TIMEOUT_S = 1.5
PROBE_TIMEOUT_S = 2.0
SPAWN_TIMEOUT_S = 2.0
SCROLLBACK_BYTES = 1024 * 1024
EX_CONFIG = 1
"""Exit code of a launched command for a problem the user must fix (SPEC §3: 1 = config error).

Reported as a ``config`` error; any other non-zero exit is reported as ``network``."""
OWNER_PID_ENV = "QODEASSIST_OWNER_PID"
"""Set for attached servers: the owner's pid, so a server can exit when its owner is gone."""

_TAIL_CHARS = 800
_DETAIL_CHARS = 4000
_RECHECK_S = 2.0
_LOCK_POLL_S = 0.1
_READER_DRAIN_S = 1.0
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

# Spawns the server in its own session and exits at once, so the server is not our child: it
# outlives us and asyncio never sees (or kills) it. The spec arrives as JSON on stdin.
_DETACH_SCRIPT = r"""
import json, os, subprocess, sys
spec = json.loads(sys.stdin.read())
extra = {}
if os.name == "nt":
    extra["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
else:
    extra["start_new_session"] = True
try:
    child = subprocess.Popen(
        spec["argv"], cwd=spec["cwd"], env=spec["env"], stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **extra,
    )
except OSError as exc:
    print(json.dumps({"error": str(exc)}), flush=True)
else:
    print(json.dumps({"pid": child.pid}), flush=True)
os._exit(0)
"""


class LauncherState(enum.StrEnum):
    """Where a launcher is in the life of its server."""

    IDLE = "idle"
    STARTING = "starting"
    PROBING = "probing"
    READY = "ready"
    STOPPING = "stopping"
    FAILED = "failed"


class _ProbeKind(enum.Enum):
    OK = "ok"
    REFUSED = "refused"
    STATUS = "status"
    TIMEOUT = "timeout"
    PROTOCOL = "protocol"


@dataclass(frozen=True, slots=True)
class _Probe:
    kind: _ProbeKind
    detail: str = ""
    status: int | None = None


class _Scrollback:
    """The last ``limit`` bytes a server printed."""

    def __init__(self, limit: int = SCROLLBACK_BYTES) -> None:
        self._limit = limit
        self._data = bytearray()

    def append(self, chunk: bytes) -> None:
        self._data += chunk
        if len(self._data) > self._limit:
            del self._data[: len(self._data) - self._limit]

    def tail(self, chars: int) -> str:
        text = self._data.decode("utf-8", errors="replace").strip()
        return text[-chars:] if len(text) > chars else text


@dataclass(slots=True)
class _Owned:
    """A server this launcher started."""

    pid: int
    detached: bool
    marker: str | None = None
    process: asyncio.subprocess.Process | None = None
    waiter: asyncio.Task[int] | None = None
    reader: asyncio.Task[None] | None = None

    @property
    def exited(self) -> bool:
        if self.process is not None:
            return self.process.returncode is not None
        return not pid_matches(self.pid, self.marker)


_LIVE: weakref.WeakSet[ProviderLauncher] = weakref.WeakSet()


@atexit.register
def _stop_attached_at_exit() -> None:
    # The owner is exiting without aclose(): attached servers must not outlive it.
    for launcher in list(_LIVE):
        launcher._signal_attached(signal.SIGTERM)


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
    ) -> None:
        self.name = name
        self.config = config
        self.run_dir = run_dir or default_run_dir()
        self._source = source
        self._interval = probe_interval_s
        self._grace = stop_grace_s
        self._cooldown = failure_cooldown_s
        self._on_state = on_state
        self._state = LauncherState.IDLE
        self._owned: _Owned | None = None
        self._adopted = False
        self._checked_at = 0.0
        self._failed_at = 0.0
        self._start_task: asyncio.Task[None] | None = None
        self._http: httpx.AsyncClient | None = None
        self._scrollback = _Scrollback()
        self.last_error: ErrorInfo | None = None
        """The failure of the last start, if it failed."""

    # -- public state ----------------------------------------------------------------------

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
    def detached(self) -> bool:
        """Whether servers are started to outlive this process."""
        return self.config.detach

    def output_tail(self, chars: int = _TAIL_CHARS) -> str:
        """Return the last ``chars`` characters an attached server printed."""
        return self._scrollback.tail(chars)

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
        owned = self._owned
        if owned is not None and owned.process is not None:
            if owned.process.returncode is None:
                return True
            log.warning(
                "%s server exited with code %s; starting it again",
                self.name,
                owned.process.returncode,
            )
            await self._reap(owned)
            self._clear_pid_file(owned.pid)
            self._forget()
            return False
        if self.config.ready_url is None or time.monotonic() - self._checked_at < _RECHECK_S:
            return True
        probe = await self._probe(ADOPT_PROBE_TIMEOUT_S)
        if probe.kind is _ProbeKind.OK:
            self._checked_at = time.monotonic()
            return True
        log.warning("%s server stopped answering %s", self.name, self.config.ready_url)
        self._forget()
        return False

    async def _start(self) -> None:
        self._scrollback = _Scrollback()
        try:
            url = self.config.ready_url
            if url is not None:
                self._set_state(LauncherState.PROBING)
                probe = await self._probe(ADOPT_PROBE_TIMEOUT_S)
                if probe.kind is _ProbeKind.OK:
                    self._adopt()
                    return
                if _foreign(probe):
                    raise self._port_taken(probe)
            async with self._start_lock():
                if url is not None and await self._adopt_running():
                    return
                self._set_state(LauncherState.STARTING)
                owned = await (self._spawn_detached() if self.detached else self._spawn_attached())
                self._owned = owned
                if not owned.detached:
                    _LIVE.add(self)
                self._write_pid_file(owned)
                await self._wait_ready(owned)
        except asyncio.CancelledError:
            await self._kill_owned()
            self._forget()
            raise
        except Exception as exc:
            await self._kill_owned()
            error = (
                exc
                if isinstance(exc, LaunchError)
                else LaunchError(
                    ErrorInfo(
                        ErrorCategory.NETWORK, f"could not start the {self.name} server: {exc}"
                    )
                )
            )
            self.last_error = error.info
            self._failed_at = time.monotonic()
            self._forget(LauncherState.FAILED)
            log.info("%s", error.info.message)  # raised: the caller reports it
            if error is exc:
                raise
            raise error from exc
        if not self._adopted:
            self.last_error = None
            self._checked_at = time.monotonic()
            self._set_state(LauncherState.READY)
            log.info("%s server ready (pid %s)", self.name, self.pid)

    def _adopt(self) -> None:
        self._adopted = True
        self._checked_at = time.monotonic()
        self.last_error = None
        self._set_state(LauncherState.READY)
        log.info("%s: adopted the server already answering %s", self.name, self.config.ready_url)

    async def _adopt_running(self) -> bool:
        """Adopt a server another process started (or is still starting) on our port."""
        probe = await self._probe(ADOPT_PROBE_TIMEOUT_S)
        if probe.kind is _ProbeKind.REFUSED:
            return False
        if probe.kind is _ProbeKind.OK:
            self._adopt()
            return True
        if _foreign(probe):
            raise self._port_taken(probe)
        # 503 or no answer yet: possibly a server still loading its model; give it our timeout.
        deadline = time.monotonic() + self.config.ready_timeout_s
        while time.monotonic() < deadline:
            await asyncio.sleep(self._interval)
            probe = await self._probe(PROBE_TIMEOUT_S)
            if probe.kind is _ProbeKind.OK:
                self._adopt()
                return True
            if probe.kind is _ProbeKind.REFUSED:
                return False
        raise self._port_taken(probe)

    def _port_taken(self, probe: _Probe) -> LaunchError:
        parts = urlsplit(self.config.ready_url or "")
        return LaunchError(
            ErrorInfo(
                ErrorCategory.CONFIG,
                f"{parts.hostname}:{_port_of(parts.scheme, parts.port)} is taken by a program "
                f"that is not a ready {self.name} server ({self.config.ready_url} {probe.detail}); "
                f"stop that program, or move the {self.name} instance to a free port "
                "(its url, [launch] ready_url and args)",
                provider_detail=probe.detail,
                status=probe.status,
            )
        )

    # -- spawning --------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        # Inherited from a launcher that started us; only our own attached servers get ours.
        env.pop(OWNER_PID_ENV, None)
        env["PROVIDER_NAME"] = self.name
        env.update(self.config.env)
        return env

    def _expand(self, text: str) -> str:
        def value(match: re.Match[str]) -> str:
            key = match.group(1)
            if key in self.config.env:
                return self.config.env[key]
            if key == "PROVIDER_NAME":
                return self.name
            return os.environ.get(key, match.group(0))

        return _VAR.sub(value, text)

    def _command_line(self, env: Mapping[str, str]) -> tuple[list[str], str]:
        command = self._expand(self.config.command)
        args = [self._expand(arg) for arg in self.config.args]
        cwd = Path(self._expand(self.config.cwd)).expanduser() if self.config.cwd else Path.home()
        if not cwd.is_dir():
            raise self._config_error(f"its working directory {str(cwd)!r} does not exist")
        program = resolve_command(command, env.get("PATH"))
        if program is None:
            raise self._config_error(
                f"command {command!r} was not found (looked on PATH and next to "
                f"{Path(sys.executable).parent}); install it or fix [launch] command"
            )
        return [program, *args], str(cwd)

    def _config_error(self, problem: str) -> LaunchError:
        where = f" in {self._source}" if self._source else ""
        return LaunchError(
            ErrorInfo(
                ErrorCategory.CONFIG,
                f"cannot start the {self.name} server: {problem}{where}",
            )
        )

    async def _spawn_attached(self) -> _Owned:
        env = self._environment()
        env[OWNER_PID_ENV] = str(os.getpid())
        argv, cwd = self._command_line(env)
        log.info("starting %s server: %s", self.name, " ".join(argv))
        try:
            async with asyncio.timeout(SPAWN_TIMEOUT_S):
                process = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=cwd,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    # Own process group, so stop() also reaches helpers the command starts.
                    start_new_session=sys.platform != "win32",
                    creationflags=_NEW_PROCESS_GROUP,
                )
        except TimeoutError as exc:
            raise LaunchError(
                ErrorInfo(
                    ErrorCategory.NETWORK,
                    f"the {self.name} server did not start within {SPAWN_TIMEOUT_S:g} s",
                )
            ) from exc
        except OSError as exc:
            raise self._config_error(
                f"{argv[0]!r} could not be run: {exc.strerror or exc}"
            ) from exc
        assert process.stdout is not None
        return _Owned(
            pid=process.pid,
            detached=False,
            marker=start_marker(process.pid),
            process=process,
            waiter=asyncio.create_task(process.wait(), name=f"launch-{self.name}-wait"),
            reader=asyncio.create_task(
                self._pump(process.stdout), name=f"launch-{self.name}-output"
            ),
        )

    async def _pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self._scrollback.append(chunk)
            if log.isEnabledFor(logging.DEBUG):
                for line in chunk.decode("utf-8", errors="replace").splitlines():
                    log.debug("[%s] %s", self.name, line)

    async def _spawn_detached(self) -> _Owned:
        env = self._environment()
        argv, cwd = self._command_line(env)
        log.info("starting detached %s server: %s", self.name, " ".join(argv))
        spec = json.dumps({"argv": argv, "cwd": cwd, "env": env}).encode()
        helper = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-c",
            _DETACH_SCRIPT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            async with asyncio.timeout(SPAWN_TIMEOUT_S + 3):
                out, _ = await helper.communicate(spec)
        except TimeoutError as exc:
            helper.kill()
            await helper.wait()
            raise LaunchError(
                ErrorInfo(
                    ErrorCategory.NETWORK,
                    f"the {self.name} server did not start within {SPAWN_TIMEOUT_S:g} s",
                )
            ) from exc
        try:
            answer = json.loads(out.decode() or "{}")
        except ValueError:
            answer = {}
        if "error" in answer:
            raise self._config_error(f"{argv[0]!r} could not be run: {answer['error']}")
        if not isinstance(answer.get("pid"), int):
            raise LaunchError(
                ErrorInfo(ErrorCategory.NETWORK, f"could not start the {self.name} server")
            )
        pid: int = answer["pid"]
        return _Owned(pid=pid, detached=True, marker=start_marker(pid))

    async def _wait_ready(self, owned: _Owned) -> None:
        url = self.config.ready_url
        timeout = self.config.ready_timeout_s
        deadline = time.monotonic() + timeout
        self._set_state(LauncherState.PROBING)
        last = _Probe(_ProbeKind.REFUSED, "was never probed")
        while True:
            if owned.exited:
                raise await self._exit_error(owned)
            if url is None:
                return
            remaining = deadline - time.monotonic()
            last = await self._probe(max(0.1, min(PROBE_TIMEOUT_S, remaining)))
            if last.kind is _ProbeKind.OK:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            pause = min(self._interval, remaining)
            if owned.waiter is not None:
                await asyncio.wait({owned.waiter}, timeout=pause)
            else:
                await asyncio.sleep(pause)
        tail = self.output_tail()
        raise LaunchError(
            ErrorInfo(
                ErrorCategory.NETWORK,
                f"the {self.name} server did not become ready within {timeout:g} s "
                f"({url} {last.detail}); raise [launch] ready_timeout_s if it is just slow"
                + (f". Its last output: {tail}" if tail else ""),
                provider_detail=self.output_tail(_DETAIL_CHARS),
            )
        )

    async def _exit_error(self, owned: _Owned) -> LaunchError:
        if owned.process is None:
            return LaunchError(
                ErrorInfo(
                    ErrorCategory.NETWORK,
                    f"the detached {self.name} server exited before it was ready; its output is "
                    "discarded in detached mode, so run the [launch] command in a terminal to "
                    "see why",
                )
            )
        await self._reap(owned)
        code = owned.process.returncode
        tail = self.output_tail()
        category = ErrorCategory.CONFIG if code == EX_CONFIG else ErrorCategory.NETWORK
        return LaunchError(
            ErrorInfo(
                category,
                f"the {self.name} server exited with code {code} before it was ready"
                + (f": {tail}" if tail else " (it printed nothing)"),
                provider_detail=self.output_tail(_DETAIL_CHARS),
            )
        )

    # -- probing ---------------------------------------------------------------------------

    async def _probe(self, wait_s: float) -> _Probe:
        url = self.config.ready_url
        if url is None:
            return _Probe(_ProbeKind.OK)
        if self._http is None:
            # trust_env off: a loopback probe must never go through the user's HTTP proxy.
            self._http = httpx.AsyncClient(trust_env=False)
        try:
            response = await self._http.get(url, timeout=wait_s)
        except httpx.ConnectError as exc:
            return _Probe(_ProbeKind.REFUSED, f"refused the connection: {exc}")
        except httpx.TimeoutException:
            return _Probe(_ProbeKind.TIMEOUT, f"did not answer within {wait_s:g} s")
        except httpx.HTTPError as exc:
            return _Probe(_ProbeKind.PROTOCOL, f"did not answer HTTP: {exc}")
        if response.is_success:
            return _Probe(_ProbeKind.OK, status=response.status_code)
        return _Probe(
            _ProbeKind.STATUS, f"answered HTTP {response.status_code}", response.status_code
        )

    # -- one instance per user ---------------------------------------------------------------

    def _key(self) -> str:
        url = self.config.ready_url
        if url:
            parts = urlsplit(url)
            key = f"{parts.hostname}_{_port_of(parts.scheme, parts.port)}"
        else:
            key = self.name
        return re.sub(r"[^A-Za-z0-9_.-]", "_", key)

    @property
    def lock_path(self) -> Path:
        """The lock file that serialises starts of this server across processes."""
        return self.run_dir / f"{self._key()}.lock"

    @property
    def pid_path(self) -> Path:
        """The file naming the process that started the server (for people and tools)."""
        return self.run_dir / f"{self._key()}.pid.json"

    @contextlib.asynccontextmanager
    async def _start_lock(self) -> AsyncIterator[None]:
        try:
            handle = open_lock(self.lock_path)
        except OSError as exc:
            raise self._config_error(
                f"its lock file {self.lock_path} is not writable: {exc}"
            ) from exc
        try:
            deadline = time.monotonic() + self.config.ready_timeout_s + 10
            while not try_lock(handle):
                if time.monotonic() > deadline:
                    raise LaunchError(
                        ErrorInfo(
                            ErrorCategory.NETWORK,
                            f"another qodeassist-lsp process has been starting the {self.name} "
                            f"server for too long (lock {self.lock_path})",
                        )
                    )
                await asyncio.sleep(_LOCK_POLL_S)
            try:
                yield
            finally:
                unlock(handle)
        finally:
            handle.close()

    def _write_pid_file(self, owned: _Owned) -> None:
        info = {
            "provider": self.name,
            "pid": owned.pid,
            "owner_pid": os.getpid(),
            "detached": owned.detached,
            "ready_url": self.config.ready_url,
            "command": self.config.command,
            "started_at": time.time(),
        }
        temporary = self.pid_path.with_name(f".{self.pid_path.name}.{os.getpid()}")
        try:
            temporary.write_text(json.dumps(info), encoding="utf-8")
            os.replace(temporary, self.pid_path)
        except OSError as exc:
            log.warning("could not write %s: %s", self.pid_path, exc)

    def _clear_pid_file(self, pid: int) -> None:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(self.pid_path.read_text(encoding="utf-8")).get("pid") == pid:
                self.pid_path.unlink()

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
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def _cancel_start(self) -> None:
        task = self._start_task
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.wait({task})

    async def _still_ours(self, owned: _Owned) -> bool:
        if not pid_matches(owned.pid, owned.marker):
            return False
        # A detached server is not our child: only a still-answering probe shows the pid is not
        # reused by an unrelated process (where no start time can be read).
        return owned.marker is not None or (await self._probe(PROBE_TIMEOUT_S)).kind is (
            _ProbeKind.OK
        )

    async def _kill_owned(self) -> None:
        owned = self._owned
        if owned is None:
            return
        if owned.process is not None:
            if owned.process.returncode is None:
                signal_group(owned.process, signal.SIGTERM)
                assert owned.waiter is not None
                await asyncio.wait({owned.waiter}, timeout=self._grace)
                if owned.process.returncode is None:
                    signal_group(owned.process, KILL)
            await self._reap(owned)
        elif sys.platform == "win32":
            signal_pid(owned.pid, signal.SIGTERM)
        elif pid_matches(owned.pid, owned.marker):
            signal_pid(owned.pid, signal.SIGTERM)
            # Not our child, so there is nothing to wait on: poll for it to go away.
            for _ in range(max(1, int(self._grace / 0.1))):
                if not pid_matches(owned.pid, owned.marker):
                    break
                await asyncio.sleep(0.1)
            if pid_matches(owned.pid, owned.marker):
                signal_pid(owned.pid, KILL)
        self._clear_pid_file(owned.pid)
        log.info("%s server (pid %s) stopped", self.name, owned.pid)

    async def _reap(self, owned: _Owned) -> None:
        """Wait for an exited attached server and read the rest of its output."""
        if owned.waiter is not None:
            await asyncio.wait({owned.waiter})
        if owned.reader is not None:
            done, _ = await asyncio.wait({owned.reader}, timeout=_READER_DRAIN_S)
            if not done:
                # A grandchild that left the process group still holds the pipe open.
                owned.reader.cancel()
                await asyncio.wait({owned.reader})

    def _forget(self, state: LauncherState = LauncherState.IDLE) -> None:
        self._owned = None
        self._adopted = False
        _LIVE.discard(self)
        self._set_state(state)

    def _signal_attached(self, signum: int) -> None:
        """Signal a running attached server synchronously (process exit)."""
        owned = self._owned
        if owned is not None and owned.process is not None:
            with contextlib.suppress(Exception):
                if owned.process.returncode is None:
                    signal_group(owned.process, signum)

    def _set_state(self, state: LauncherState) -> None:
        if state is self._state:
            return
        log.debug("%s launcher: %s -> %s", self.name, self._state, state)
        self._state = state
        if self._on_state is not None:
            self._on_state(state)


# -- helpers -------------------------------------------------------------------------------

_NEW_PROCESS_GROUP: int = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)


def default_run_dir() -> Path:
    """Return the per-user directory for lock and pid files when none is given."""
    data = os.environ.get("QODEASSIST_DATA_DIR") or platformdirs.user_data_dir(APP_NAME)
    return Path(data).expanduser() / "run"


def resolve_command(command: str, path: str | None = None) -> str | None:
    """Find ``command`` on ``path`` (default PATH), then next to the running interpreter."""
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(command).expanduser()
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    found = shutil.which(command, path=path)
    if found:
        return found
    # Editors often start the language server by its full path, with its venv not on PATH.
    return shutil.which(command, path=str(Path(sys.executable).parent))


def _foreign(probe: _Probe) -> bool:
    """Whether a probe answer shows a program that is no server of ours, not even a loading one."""
    # llama.cpp and most model servers answer 503 while they load the model.
    return probe.kind is _ProbeKind.PROTOCOL or (
        probe.kind is _ProbeKind.STATUS and probe.status != 503
    )


def _retrieve(task: asyncio.Task[None]) -> None:
    # Waiters read the outcome themselves; this only marks it retrieved for the event loop.
    if not task.cancelled():
        task.exception()


def _port_of(scheme: str, port: int | None) -> int:
    if port is not None:
        return port
    return 443 if scheme == "https" else 80
