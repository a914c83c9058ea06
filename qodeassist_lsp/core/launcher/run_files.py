"""The lock and pid files that make one ``[launch]`` server per machine user.

Both live in the run directory and are named for the ``ready_url`` host and port (the instance
name when there is none), so every language server of the user that would start a server on that
port takes the same lock, and the second one adopts the first one's server instead of racing it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs
from filelock import FileLock, Timeout

from qodeassist_lsp.config.paths import APP_NAME
from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

log = logging.getLogger("qodeassist.launcher")

_LOCK_POLL_S = 0.1


def default_run_dir() -> Path:
    """Return the per-user directory for lock and pid files when none is given."""
    data = os.environ.get("QODEASSIST_DATA_DIR") or platformdirs.user_data_dir(APP_NAME)
    return Path(data).expanduser() / "run"


def port_of(scheme: str, port: int | None) -> int:
    """Return ``port``, or the default port of ``scheme`` when the URL names none."""
    if port is not None:
        return port
    return 443 if scheme == "https" else 80


@dataclass(frozen=True, slots=True)
class RunFiles:
    """The lock and pid file of one server in ``run_dir``."""

    run_dir: Path
    name: str
    ready_url: str | None

    def _key(self) -> str:
        if self.ready_url:
            parts = urlsplit(self.ready_url)
            key = f"{parts.hostname}_{port_of(parts.scheme, parts.port)}"
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
    async def start_lock(
        self, timeout_s: float, config_error: Callable[[str], LaunchError]
    ) -> AsyncIterator[None]:
        """Hold the start lock; ``LaunchError`` if it is unwritable or held past ``timeout_s``."""
        lock = FileLock(self.lock_path)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                lock.acquire(timeout=0)  # polled: a blocking wait would hold the event loop
                break
            except Timeout:
                if time.monotonic() > deadline:
                    raise LaunchError(
                        ErrorInfo(
                            ErrorCategory.NETWORK,
                            f"another qodeassist-lsp process has been starting the {self.name} "
                            f"server for too long (lock {self.lock_path})",
                        )
                    ) from None
                await asyncio.sleep(_LOCK_POLL_S)
            except OSError as exc:
                raise config_error(
                    f"its lock file {self.lock_path} is not writable: {exc}"
                ) from exc
        try:
            yield
        finally:
            lock.release()

    def write_pid(self, pid: int, *, detached: bool, command: str) -> None:
        """Record ``pid`` as the server's process (atomically; a failure is only logged)."""
        info = {
            "provider": self.name,
            "pid": pid,
            "owner_pid": os.getpid(),
            "detached": detached,
            "ready_url": self.ready_url,
            "command": command,
            "started_at": time.time(),
        }
        temporary = self.pid_path.with_name(f".{self.pid_path.name}.{os.getpid()}")
        try:
            temporary.write_text(json.dumps(info), encoding="utf-8")
            os.replace(temporary, self.pid_path)
        except OSError as exc:
            log.warning("could not write %s: %s", self.pid_path, exc)

    def clear_pid(self, pid: int) -> None:
        """Remove the pid file if it still names ``pid``."""
        with contextlib.suppress(OSError, ValueError):
            if json.loads(self.pid_path.read_text(encoding="utf-8")).get("pid") == pid:
                self.pid_path.unlink()
