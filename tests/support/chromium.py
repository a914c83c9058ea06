"""The system's Chromium for the web-chat test, driven by Playwright (never a downloaded browser).

`chromium_executable` returns ``$QODEASSIST_CHROMIUM``, else ``chromium`` on ``PATH``; when it is
missing and this process may use apt (root, ``apt-get`` present) it installs Debian's
``chromium`` package once (a file lock keeps parallel test processes from racing); otherwise it
returns None with the reason, and the test skips with it. `LAUNCH_ARGS` keep the browser off the
network: this machine's closed network refuses its background connections otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from filelock import FileLock

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL_TIMEOUT_S = 900


def _found() -> str | None:
    named = os.environ.get("QODEASSIST_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_executable() -> tuple[str | None, str]:
    """Return (the executable, "") or (None, why there is none)."""
    found = _found()
    if found:
        return found, ""
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, "no chromium on PATH, and apt-get cannot install it here (not root / no apt)"
    lock = Path(tempfile.gettempdir()) / "qodeassist-chromium-install.lock"
    with FileLock(str(lock)):
        found = _found()
        if found:
            return found, ""
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for argv in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                env=env,
                timeout=INSTALL_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if done.returncode != 0:
                return None, f"$ {' '.join(argv)} failed ({done.returncode}): {done.stderr[-500:]}"
    found = _found()
    return (found, "") if found else (None, "apt-get installed chromium but it is not on PATH")
