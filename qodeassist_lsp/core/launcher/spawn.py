"""Starting a ``[launch]`` command: its command line and environment, attached or detached.

Attached servers are our children in their own process group, with their output captured;
detached ones are started by a short-lived helper interpreter so they outlive us and asyncio never
sees (or kills) them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.core.launcher.processes import start_marker
from qodeassist_lsp.core.launcher.server_process import Owned, Scrollback
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

log = logging.getLogger("qodeassist.launcher")

SPAWN_TIMEOUT_S = 2.0
OWNER_PID_ENV = "QODEASSIST_OWNER_PID"
"""Set for attached servers: the owner's pid, so a server can exit when its owner is gone."""

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NEW_PROCESS_GROUP: int = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)

# Spawns the server in its own session and exits at once, so the server is not our child. The
# spec arrives as JSON on stdin.
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


class Spawner:
    """Starts the ``[launch]`` command of instance ``name`` (``LaunchError`` when it cannot)."""

    def __init__(self, name: str, config: LaunchConfig, source: Path | None) -> None:
        self.name = name
        self.config = config
        self._source = source

    def config_error(self, problem: str) -> LaunchError:
        """Return the ``config`` error for ``problem`` with this instance's command."""
        where = f" in {self._source}" if self._source else ""
        return LaunchError(
            ErrorInfo(
                ErrorCategory.CONFIG, f"cannot start the {self.name} server: {problem}{where}"
            )
        )

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
            raise self.config_error(f"its working directory {str(cwd)!r} does not exist")
        program = resolve_command(command, env.get("PATH"))
        if program is None:
            raise self.config_error(
                f"command {command!r} was not found (looked on PATH and next to "
                f"{Path(sys.executable).parent}); install it or fix [launch] command"
            )
        return [program, *args], str(cwd)

    def _too_slow(self) -> LaunchError:
        return LaunchError(
            ErrorInfo(
                ErrorCategory.NETWORK,
                f"the {self.name} server did not start within {SPAWN_TIMEOUT_S:g} s",
            )
        )

    async def attached(
        self, scrollback: Scrollback, on_line: Callable[[str], None] | None = None
    ) -> Owned:
        """Start the server as our child; its output goes to ``scrollback`` (and ``on_line``)."""
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
            raise self._too_slow() from exc
        except OSError as exc:
            raise self.config_error(f"{argv[0]!r} could not be run: {exc.strerror or exc}") from exc
        assert process.stdout is not None
        return Owned(
            pid=process.pid,
            detached=False,
            marker=start_marker(process.pid),
            process=process,
            waiter=asyncio.create_task(process.wait(), name=f"launch-{self.name}-wait"),
            reader=asyncio.create_task(
                self._pump(process.stdout, scrollback, on_line),
                name=f"launch-{self.name}-output",
            ),
        )

    async def _pump(
        self,
        stream: asyncio.StreamReader,
        scrollback: Scrollback,
        on_line: Callable[[str], None] | None,
    ) -> None:
        partial = ""
        while chunk := await stream.read(65536):
            scrollback.append(chunk)
            *lines, partial = (partial + chunk.decode("utf-8", errors="replace")).split("\n")
            for line in lines:
                if log.isEnabledFor(logging.DEBUG):
                    log.debug("[%s] %s", self.name, line)
                if on_line is not None:
                    on_line(line.rstrip("\r"))

    async def detached(self) -> Owned:
        """Start the server so it outlives us; its output is discarded."""
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
            raise self._too_slow() from exc
        try:
            answer = json.loads(out.decode() or "{}")
        except ValueError:
            answer = {}
        if "error" in answer:
            raise self.config_error(f"{argv[0]!r} could not be run: {answer['error']}")
        if not isinstance(answer.get("pid"), int):
            raise LaunchError(
                ErrorInfo(ErrorCategory.NETWORK, f"could not start the {self.name} server")
            )
        pid: int = answer["pid"]
        return Owned(pid=pid, detached=True, marker=start_marker(pid))
