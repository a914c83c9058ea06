"""A real VS Code for end-to-end tests: code-server from npm, installed offline-safe and cached.

``code-server`` (VS Code in a browser, from npm) has install scripts that download from GitHub
in three places: ripgrep's binary, argon2's prebuilt module and node-gyp through ``npx``. The
install below skips every install script and redoes their useful part locally (argon2 built
from source, the native modules rebuilt with ``npm_config_yes``, Debian's ``/usr/bin/rg`` linked
where VS Code looks for ripgrep), as ``/work/shared``'s real-clients notes describe. It is
installed once into ``<repo>/.cache/code-server-<version>/`` (staged, then renamed, so a broken
install never looks complete); a second run only checks the marker file.

`install` raises `InstallError` with the failing command's output; callers decide whether that
skips or fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

VERSION = "4.100.3"
MARKER = ".installed"
STEP_TIMEOUT_S = 900
NATIVE = ("@parcel/watcher", "@vscode/spdlog", "@vscode/deviceid", "native-watchdog", "node-pty")


class InstallError(RuntimeError):
    """code-server could not be installed (npm missing, registry unreachable, a build failed)."""


def binary(root: Path) -> Path:
    """The ``code-server`` launcher inside an install folder."""
    return root / "node_modules" / ".bin" / "code-server"


def _run(command: list[str], cwd: Path, log: list[str]) -> None:
    env = {
        **os.environ,
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "NO_COLOR": "1",
    }
    if command[0] == "env":  # `env NAME=VALUE … npm …`
        while "=" in command[1]:
            name, value = command.pop(1).split("=", 1)
            env[name] = value
        command = command[1:]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InstallError(f"$ {' '.join(command)} (in {cwd}): {error}") from error
    log.append(f"$ {' '.join(command)}  # {time.monotonic() - started:.1f} s")
    if done.returncode != 0:
        raise InstallError(
            f"$ {' '.join(command)} (in {cwd}) exited {done.returncode}\n"
            f"{(done.stdout + done.stderr)[-4000:]}"
        )


def _steps(root: Path, npm: str, rg: str, log: list[str]) -> None:
    (root / "package.json").write_text("{}\n")  # else npm installs into a parent folder
    _run([npm, "install", "--ignore-scripts", "--no-save", f"code-server@{VERSION}"], root, log)
    _run(["env", "npm_config_build_from_source=true", npm, "rebuild", "argon2"], root, log)
    vscode = root / "node_modules" / "code-server" / "lib" / "vscode"
    _run([npm, "install", "--omit=dev", "--ignore-scripts"], vscode, log)
    ripgrep = vscode / "node_modules" / "@vscode" / "ripgrep" / "bin"
    ripgrep.mkdir(parents=True, exist_ok=True)
    (ripgrep / "rg").unlink(missing_ok=True)
    (ripgrep / "rg").symlink_to(rg)
    # The native modules VS Code's server loads; not `kerberos` (proxy Kerberos auth, loaded
    # lazily, needs libkrb5 headers) nor the Windows-only ones: about half the build time.
    _run(["env", "npm_config_yes=true", npm, "rebuild", *NATIVE], vscode, log)
    for link, target in (
        (vscode / "node_modules.asar", "node_modules"),
        (vscode / "bin" / "remote-cli" / "code-server", "code-linux.sh"),
        (vscode / "bin" / "helpers" / "browser.sh", "browser-linux.sh"),
    ):
        link.unlink(missing_ok=True)
        link.symlink_to(target)
    _run([npm, "install", "--omit=dev"], vscode / "extensions", log)


def install(cache: Path) -> Path:
    """code-server installed in ``cache`` (once; later calls return at once); its launcher."""
    if (cache / MARKER).is_file() and binary(cache).exists():
        return binary(cache)
    npm, rg = shutil.which("npm"), shutil.which("rg")
    if npm is None:
        raise InstallError("npm is not installed (Node.js 20+ is needed for code-server)")
    if rg is None:
        raise InstallError("ripgrep is not installed (apt-get install ripgrep)")
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{cache.name}.", dir=cache.parent))
    log: list[str] = []
    try:
        _steps(staging, npm, rg, log)
        (staging / MARKER).write_text("\n".join(log) + "\n")
        if cache.exists():
            shutil.rmtree(cache)
        os.rename(staging, cache)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return binary(cache)
