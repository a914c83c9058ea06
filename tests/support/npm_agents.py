"""Install an ACP agent from npm into the repository's ignored ``.cache/`` folder, once.

The real-agent tests need a published agent program (``opencode-ai``), installed the way a user
would: ``npm install`` of a pinned version into ``.cache/npm-agents/<package>@<version>`` (with
npm's own cache beside it), reused by later runs. `install` raises `NpmUnavailable` with the
reason when npm is missing or the install fails (no registry, no disk); the tests fail with it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / ".cache/npm-agents"
INSTALL_TIMEOUT_S = 900


class NpmUnavailable(RuntimeError):
    """npm cannot provide the package here; the message says why."""


def install(package: str, version: str, program: str) -> Path:
    """Return the path of ``program`` from ``package@version``, installing it if needed."""
    folder = CACHE / f"{package.replace('/', '+')}@{version}"
    binary = folder / "node_modules/.bin" / program
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise NpmUnavailable("npm is not on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
               "--cache", str(CACHE / "npm-cache"), f"{package}@{version}"]  # fmt: skip
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        took = f"npm install {package}@{version} took over {INSTALL_TIMEOUT_S} s"
        raise NpmUnavailable(took) from exc
    if done.returncode != 0 or not binary.exists():
        tail = (done.stderr or done.stdout).strip()[-400:]
        raise NpmUnavailable(f"npm install {package}@{version} failed: {tail}")
    return binary
