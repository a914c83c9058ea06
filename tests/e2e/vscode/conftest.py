"""The VS Code extension's build, shared by the tests of this folder (once per session).

``installed`` is a temporary copy of ``editors/vscode`` (the checkout is never written to)
after ``npm ci`` from the committed ``package-lock.json``; ``tested`` runs ``npm test`` there
once (tsc, then the unit tests); ``compiled`` is that copy after it; ``packaged`` is the .vsix
``npm run package`` builds from ``installed``.
Without npm the tests fail (never skip): CI must prove the extension builds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
EXTENSION = REPO_ROOT / "editors" / "vscode"
NPM_TIMEOUT_S = 600


def npm() -> str:
    found = shutil.which("npm")
    if found is None:
        pytest.fail(
            "npm is not installed: the VS Code extension cannot be built (install Node.js 20+)",
            pytrace=False,
        )
    return found


def npm_env() -> dict[str, str]:
    """The environment of npm here: no update notice, funding or audit chatter, no colours."""
    return {
        **os.environ,
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "NO_COLOR": "1",
    }


def run(command: list[str], cwd: Path, timeout: float = NPM_TIMEOUT_S) -> str:
    started = time.monotonic()
    done = subprocess.run(
        command,
        cwd=cwd,
        env=npm_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, (
        f"$ {' '.join(command)} (in {cwd}) exited {done.returncode} after "
        f"{time.monotonic() - started:.1f} s\n{output[-6000:]}"
    )
    return output


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of editors/vscode with its dependencies installed by ``npm ci``."""
    executable = npm()
    work = tmp_path_factory.mktemp("vscode") / "vscode"
    shutil.copytree(EXTENSION, work, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"))
    run([executable, "ci", "--no-audit", "--no-fund", "--prefer-offline"], work)
    return work


@pytest.fixture(scope="session")
def tested(installed: Path) -> tuple[int, str]:
    """``npm test`` in the installed copy (it compiles first): its exit status and output.

    One tsc run serves the extension's unit tests and every test that needs ``compiled``.
    """
    done = subprocess.run(
        [npm(), "test"],
        cwd=installed,
        env=npm_env(),
        capture_output=True,
        text=True,
        timeout=NPM_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="session")
def compiled(installed: Path, tested: tuple[int, str]) -> Path:
    """The installed copy after ``npm run compile`` (the first half of ``npm test``)."""
    assert (installed / "out" / "extension.js").is_file(), tested[1][-6000:]
    return installed


@pytest.fixture(scope="session")
def packaged(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension packaged by ``npm run package`` (vsce) from the installed copy."""
    vsix = tmp_path_factory.mktemp("vsix") / "qodeassist.vsix"
    run([npm(), "run", "package", "--", "--out", str(vsix)], installed)
    assert vsix.is_file()
    return vsix
