"""A real VS Code for end-to-end tests: code-server from npm, installed offline-safe and cached.

``code-server`` (VS Code in a browser, from npm) has install scripts that download from GitHub
in three places: ripgrep's binary, argon2's prebuilt module and node-gyp through ``npx``. The
install below skips every install script and redoes their useful part locally (argon2 built
from source, the native modules rebuilt with ``npm_config_yes``, Debian's ``/usr/bin/rg`` linked
where VS Code looks for ripgrep), as ``/work/shared``'s real-clients notes describe. It is
installed once into ``<repo>/.cache/code-server-<version>/`` (staged, then renamed, so a broken
install never looks complete); a second run only checks the marker file.

The native builds use the Node headers installed beside ``node`` (``npm_config_nodedir``): else
node-gyp downloads them from nodejs.org, which a machine that reaches only the npm registry
cannot (and a warm ``~/.cache/node-gyp`` hides). Debian's ``nodejs`` has them in
``libnode-dev``, installed with apt as root when missing (as are ``g++`` and ``make``);
NodeSource's ``nodejs`` ships them.

`install` raises `InstallError` with the failing command's output; the tests fail with it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support import chromium

VERSION = "4.100.3"
MARKER = ".installed"
STEP_TIMEOUT_S = 900
NATIVE = ("@parcel/watcher", "@vscode/spdlog", "@vscode/deviceid", "native-watchdog", "node-pty")
HEADER = Path("include") / "node" / "node_version.h"
DEBIAN_HEADERS = "libnode-dev"  # /usr/include/node for Debian's own nodejs
PARTS = ("MAJOR", "MINOR", "PATCH")
BUILD_TOOLS = {"g++": "g++", "make": "make"}  # node-gyp's compiler (Debian packages: commands)


class InstallError(RuntimeError):
    """code-server could not be installed (npm missing, registry unreachable, a build failed)."""


def binary(root: Path) -> Path:
    """The ``code-server`` launcher inside an install folder."""
    return root / "node_modules" / ".bin" / "code-server"


def _header_version(header: Path) -> str:
    text = header.read_text(encoding="utf-8", errors="replace")
    parts = [re.search(rf"#define NODE_{part}_VERSION (\d+)", text) for part in PARTS]
    return ".".join(m.group(1) if m else "?" for m in parts)


def node_headers(node: str) -> Path:
    """The ``npm_config_nodedir`` for ``node``: the prefix holding headers of its version.

    ``$npm_config_nodedir`` wins when set. Else the prefix ``node`` is installed in (``/usr``);
    Debian's headers (``libnode-dev``) are installed with apt when they are missing.
    """
    named = os.environ.get("npm_config_nodedir")  # noqa: SIM112 (npm's own spelling)
    prefix = Path(named) if named else Path(os.path.realpath(node)).parent.parent
    if not (prefix / HEADER).is_file() and not named and prefix == Path("/usr"):
        problem = chromium.ensure({DEBIAN_HEADERS: str(prefix / HEADER)})
        if problem:
            raise InstallError(f"the Node headers for native modules are missing: {problem}")
    if not (prefix / HEADER).is_file():
        raise InstallError(
            f"no Node headers at {prefix / HEADER}: install the headers of the node on PATH "
            f"({DEBIAN_HEADERS} for Debian's nodejs) or set npm_config_nodedir to their prefix"
        )
    done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    running, headers = done.stdout.strip().removeprefix("v"), _header_version(prefix / HEADER)
    if running.split(".")[0] != headers.split(".")[0]:  # the major version sets the module ABI
        raise InstallError(
            f"the Node headers in {prefix / HEADER} are for {headers} but {node} is {running}: "
            "native modules built against them would not load"
        )
    return prefix


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


def _steps(root: Path, npm: str, rg: str, nodedir: Path, log: list[str]) -> None:
    (root / "package.json").write_text("{}\n")  # else npm installs into a parent folder
    _run([npm, "install", "--ignore-scripts", "--no-save", f"code-server@{VERSION}"], root, log)
    headers = f"npm_config_nodedir={nodedir}"  # node-gyp would download them from nodejs.org
    _run(["env", headers, "npm_config_build_from_source=true", npm, "rebuild", "argon2"], root, log)
    vscode = root / "node_modules" / "code-server" / "lib" / "vscode"
    _run([npm, "install", "--omit=dev", "--ignore-scripts"], vscode, log)
    ripgrep = vscode / "node_modules" / "@vscode" / "ripgrep" / "bin"
    ripgrep.mkdir(parents=True, exist_ok=True)
    (ripgrep / "rg").unlink(missing_ok=True)
    (ripgrep / "rg").symlink_to(rg)
    # The native modules VS Code's server loads; not `kerberos` (proxy Kerberos auth, loaded
    # lazily, needs libkrb5 headers) nor the Windows-only ones: about half the build time.
    _run(["env", headers, "npm_config_yes=true", npm, "rebuild", *NATIVE], vscode, log)
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
    npm, node, rg = shutil.which("npm"), shutil.which("node"), shutil.which("rg")
    if npm is None or node is None:
        raise InstallError("npm is not installed (Node.js 20+ is needed for code-server)")
    if rg is None:
        raise InstallError("ripgrep is not installed (apt-get install ripgrep)")
    problem = chromium.ensure(BUILD_TOOLS)
    if problem:
        raise InstallError(f"the native modules cannot be built: {problem}")
    nodedir = node_headers(node)
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{cache.name}.", dir=cache.parent))
    log: list[str] = []
    try:
        _steps(staging, npm, rg, nodedir, log)
        (staging / MARKER).write_text("\n".join(log) + "\n")
        if cache.exists():
            shutil.rmtree(cache)
        os.rename(staging, cache)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return binary(cache)
