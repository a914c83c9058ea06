"""A running code-server (a real VS Code) and a Playwright page on its workbench.

`CodeServer` runs code-server in a session of its own on a free loopback port, with a
throw-away user data and extensions folder, and `stop` ends every process of that session by
pid: code-server, its extension hosts, the language servers they started and the
``--type=fileWatcher`` children that outlive code-server's main process.

`Workbench` wraps one page (one browser context) on one workspace folder; each page load starts
an extension host of its own, so each test gets a fresh extension and server. Its helpers type
like a user (quick open, go to line, the command palette) and read the editor back.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.support.editor_process import session_processes

START_TIMEOUT_S = 60
STOP_GRACE_S = 5


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class CodeServer:
    """code-server with its own user data and extensions folders under ``root``."""

    def __init__(self, launcher: Path, root: Path, env: Mapping[str, str]) -> None:
        """Prepare (not start) code-server from ``launcher`` with state in ``root``."""
        self.launcher = launcher
        self.root = root
        self.env = dict(env)
        self.user_data = root / "user-data"
        self.extensions = root / "extensions"
        self.log = root / "code-server.log"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def _base(self) -> list[str]:
        (self.root / "config.yaml").write_text("auth: none\ncert: false\n")
        return [
            str(self.launcher),
            "--config",
            str(self.root / "config.yaml"),
            "--user-data-dir",
            str(self.user_data),
            "--extensions-dir",
            str(self.extensions),
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
        ]

    def write_settings(self, settings: Mapping[str, Any]) -> None:
        """Write the user's ``settings.json``."""
        folder = self.user_data / "User"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(settings, indent=2))

    def install_extension(self, vsix: Path) -> None:
        """``code-server --install-extension`` into the throw-away extensions folder."""
        done = subprocess.run(
            [*self._base(), "--install-extension", str(vsix)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
            start_new_session=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    @property
    def url(self) -> str:
        """The workbench's address."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start code-server on a free port and wait until it answers ``/healthz``."""
        self.port = free_port()
        command = [*self._base(), "--auth", "none", "--bind-addr", f"127.0.0.1:{self.port}"]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"code-server exited {self.process.returncode}: {self.tail()}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer,
            ):
                if answer.status == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"code-server did not answer within {START_TIMEOUT_S} s: {self.tail()}")

    def tail(self, size: int = 4000) -> str:
        """The end of code-server's own log."""
        return self.log.read_text(errors="replace")[-size:] if self.log.is_file() else ""

    def processes(self) -> list[str]:
        """Every process still alive in code-server's session (pid and name)."""
        return session_processes(self.process.pid) if self.process else []

    def stop(self) -> list[str]:
        """End code-server and every process of its session; what outlived SIGTERM."""
        if self.process is None:
            return []
        sid = self.process.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sid, signal.SIGTERM)
        for pid in _pids(session_processes(sid)):  # children that left the process group
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_GRACE_S)
        deadline = time.monotonic() + STOP_GRACE_S
        while (left := session_processes(sid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in _pids(left):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        deadline = time.monotonic() + STOP_GRACE_S
        while session_processes(sid) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left


def _pids(processes: list[str]) -> list[int]:
    return [int(line.split()[0]) for line in processes]


def wait_until(
    check: Callable[[], Any], what: str, timeout: float = 20.0, explain: Callable[[], str] = str
) -> Any:
    """Poll ``check`` until it returns something truthy; fail with ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}{explain()}")
        time.sleep(0.1)
