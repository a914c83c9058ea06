"""Debian's Chromium (and the other Debian packages a browser-driven test needs), installed once.

Browser tests drive ``/usr/bin/chromium`` with the ``playwright`` Python package, pointed at
that executable (``playwright install`` would download a browser and is never run). When a
package is missing and the tests run as root, ``apt-get update`` and ``apt-get install`` fetch
it from the machine's own Debian mirror (waiting up to five minutes for another apt to finish);
otherwise `ensure` says what to install, and the tests fail with that (never skip).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Chromium flags for tests: headless as root, and nothing fetched from the internet."""

APT_TIMEOUT_S = 900


def _present(check: str) -> bool:
    return Path(check).exists() if check.startswith("/") else shutil.which(check) is not None


def ensure(packages: Mapping[str, str]) -> str | None:
    """Install the Debian ``packages`` whose check (command or absolute path) is missing.

    ``packages`` maps a package name to a command on ``PATH`` or a file it provides. Returns
    None when everything is there, else why it could not be installed.
    """
    missing = [name for name, check in packages.items() if not _present(check)]
    if not missing:
        return None
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return f"install the Debian packages {' '.join(missing)} (apt-get as root)"
    lock = ["-o", "DPkg::Lock::Timeout=300"]
    for args in (["update", "-qq"], ["install", "-y", "-qq", "--no-install-recommends", *missing]):
        try:
            done = subprocess.run(
                ["apt-get", *lock, *args],
                capture_output=True,
                text=True,
                timeout=APT_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"apt-get {' '.join(args)}: {error}"
        if done.returncode != 0:
            return f"apt-get {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"
    still = [name for name, check in packages.items() if not _present(check)]
    return f"apt-get installed {missing} but {still} are still missing" if still else None


def chromium_executable() -> tuple[str | None, str]:
    """Return (the browser to drive, "") or (None, why there is none).

    ``$QODEASSIST_CHROMIUM`` names another browser; else Debian's, installed when missing.
    """
    named = os.environ.get("QODEASSIST_CHROMIUM")
    if named:
        return (named, "") if Path(named).is_file() else (None, f"{named} is not a file")
    problem = ensure({"chromium": str(CHROMIUM)})
    return (str(CHROMIUM), "") if problem is None else (None, problem)
