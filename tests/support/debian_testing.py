"""Unpack packages from Debian testing into a folder, for the headless editor tests.

Neovim 0.12 and Emacs 30 are newer than this machine's Debian release ships. Rather than
install them, the tests download the packages' dependency closure from the testing suite with
``apt-get --download-only`` under a private apt state (lists, cache and dpkg status in a
temporary folder, so the host's apt and dpkg are never touched) and extract every ``.deb`` with
``dpkg-deb -x``. The result carries that suite's own glibc, so callers run the editor through
the dynamic loader unpacked beside it. The mirror is the one this machine's apt
sources already name; nothing else is contacted.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

SUITE = os.environ.get("QODEASSIST_DEBIAN_SUITE", "forky")
_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))


class FetchError(RuntimeError):
    """Debian testing could not be reached or the packages could not be unpacked."""


def mirror_uri() -> str:
    """The Debian mirror this machine's apt sources use (deb822 ``URIs:`` or a ``deb`` line)."""
    for source in _SOURCES:
        if not source.is_file():
            continue
        text = source.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"^URIs:\s*(\S+)", text, re.M) or re.search(r"^deb\s+(\S+)", text, re.M)
        if found:
            return found.group(1)
    raise FetchError("no Debian mirror is named in /etc/apt/sources.list(.d)")


def _apt(options: list[str], *args: str, timeout: float) -> None:
    done = subprocess.run(
        ["apt-get", *options, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        raise FetchError(
            f"$ apt-get {' '.join(args)} (suite {SUITE})\nexit {done.returncode}\n"
            f"{done.stdout[-2000:]}{done.stderr[-4000:]}"
        )


def unpack(dest: Path, packages: Sequence[str], *, timeout: float = 300) -> None:
    """Download ``packages`` and their dependencies from Debian testing and extract them to ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="debian-testing.") as work:
        state = Path(work)
        (state / "lists" / "partial").mkdir(parents=True)
        (state / "cache" / "archives" / "partial").mkdir(parents=True)
        (state / "sources.list").write_text(f"deb {mirror_uri()} {SUITE} main\n")
        (state / "status").write_text("")
        options = [
            f"-oDir::Etc::sourcelist={state / 'sources.list'}",
            "-oDir::Etc::sourceparts=/dev/null",
            f"-oDir::State::Lists={state / 'lists'}",
            f"-oDir::Cache={state / 'cache'}",
            f"-oDir::State::status={state / 'status'}",
            "-oAPT::Install-Recommends=false",
            "-oDebug::NoLocking=1",
            "-oAPT::Sandbox::User=root",
        ]
        _apt(options, "update", "-qq", timeout=timeout)
        _apt(options, "install", "-y", "-qq", "--download-only", *packages, timeout=timeout)
        for deb in sorted((state / "cache" / "archives").glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True, timeout=timeout)
