"""Real editors for end-to-end tests: fetching them from Debian testing, running them headless.

`fetch_debian` unpacks Debian testing packages (with their own glibc; nothing is installed) with
`tests.support.debian_testing` into a cache folder under ``<repo>/.cache/``, atomically,
and fails the test (never skips) when that is impossible. `run_in_session` runs an editor in a
session of its own, so the language server it starts (and anything that outlives the editor) can
be found and killed. Each caller keeps its own launcher script and version checks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.support import debian_testing

LEAK_GRACE_S = 5


def fetch_debian(
    cache: Path, packages: Sequence[str], what: str, *, binary: str, env_var: str | None = None
) -> Path:
    """Unpack ``packages`` into ``cache/root`` (atomically; fails unless ``binary`` is there)."""
    other_copy = f"\nSet ${env_var} to a {what} executable to use another copy." if env_var else ""
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{cache.name}.", dir=cache.parent))
    staging.chmod(0o755)
    try:
        try:
            debian_testing.unpack(staging / "root", packages)
        except (debian_testing.FetchError, OSError, subprocess.SubprocessError) as error:
            pytest.fail(
                f"cannot obtain {what} from Debian testing (is the Debian mirror reachable?)\n"
                f"{error}{other_copy}",
                pytrace=False,
            )
        if not (staging / "root" / binary).is_file():
            pytest.fail(f"cannot obtain {what}: {binary} is not in {packages}{other_copy}")
        if cache.exists():  # a concurrent run won the race; keep the copy it made
            shutil.rmtree(staging)
        else:
            os.rename(staging, cache)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return cache / "root"


def session_processes(sid: int) -> list[str]:
    """The processes still alive in session ``sid`` (pid and command)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            alive.append(f"{stat.parent.name} {text[text.index('(') : text.rindex(')') + 1]}")
    return alive


class SessionRun(NamedTuple):
    """What `run_in_session` saw: exit code, output, whether it timed out, what outlived it."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    leaked: list[str]


def run_in_session(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> SessionRun:
    """Run ``command`` in a new session (no stdin), killing its process group on timeout/leaks."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the server runs in this session too: leaks are findable
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    deadline = time.monotonic() + LEAK_GRACE_S
    while (leaked := session_processes(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if leaked:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    return SessionRun(process.returncode, stdout, stderr, timed_out, leaked)
