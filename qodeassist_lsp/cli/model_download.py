"""Download the instruct model's wheel once, saying how far it got.

The wheel comes from the index pip uses (``PIP_INDEX_URL``, else PyPI). Its JSON simple API
(PEP 691) gives the file's URL and SHA-256; the file is streamed with httpx and every chunk is
reported to a ``Progress`` callback, which the terminal shows as a percentage and a launched
``embedded serve`` prints as ``progress:`` lines (the language server turns those into LSP
``$/progress``). When that fails short of a corrupt file (an index without the JSON API, a
``file://`` index, a proxy only pip is set up for) ``pip download`` is asked instead, which
honours the rest of pip's configuration but reports no progress.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx

from qodeassist_lsp.wire.errors import QodeAssistError

Progress = Callable[[int, int | None], None]
"""Called with the bytes received so far and the total (None when unknown)."""
PYPI_SIMPLE = "https://pypi.org/simple"
_JSON_API = "application/vnd.pypi.simple.v1+json"
_CHUNK = 1 << 16
_TIMEOUT = httpx.Timeout(30.0)
_PIP_TIMEOUT_S = 600


class FetchFailed(QodeAssistError):
    """The wheel could not be downloaded (the caller adds how to install it by hand)."""


class CorruptDownload(FetchFailed):
    """The file arrived but does not match the SHA-256 the index gives (no second try)."""


def fetch_wheel(
    project: str,
    version: str,
    folder: Path,
    progress: Progress,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Download ``project==version``'s wheel into ``folder``; return its path."""
    index = (env if env is not None else os.environ).get("PIP_INDEX_URL") or PYPI_SIMPLE
    try:
        return download_from_index(index, project, version, folder, progress)
    except CorruptDownload:
        raise
    except FetchFailed as first:
        # No JSON API, a file:// index, a proxy only pip is configured for: pip knows its setup.
        try:
            return pip_download(f"{project}=={version}", folder)
        except FetchFailed as second:
            raise FetchFailed(f"{first}; then {second}") from second


def download_from_index(
    index: str, project: str, version: str, folder: Path, progress: Progress
) -> Path:
    """Find the wheel in ``index``'s JSON simple API and stream it, checking its SHA-256."""
    with httpx.Client(timeout=_TIMEOUT, follow_redirects=True) as client:
        page = f"{index.rstrip('/')}/{project}/"
        try:
            listing = client.get(page, headers={"Accept": _JSON_API})
        except httpx.HTTPError as exc:
            raise FetchFailed(f"could not reach {page} ({exc})") from exc
        if listing.status_code != 200 or "json" not in listing.headers.get("content-type", ""):
            raise FetchFailed(f"{page} answered HTTP {listing.status_code} without JSON")
        entry = _wheel_entry(listing.json(), project, version)
        url = urljoin(str(listing.url), str(entry["url"]))
        expected = (entry.get("hashes") or {}).get("sha256")
        target = folder / str(entry["filename"])
        try:
            _stream(client, url, target, expected, progress, entry.get("size"))
        except httpx.HTTPError as exc:
            raise FetchFailed(f"could not download {url} ({exc})") from exc
    return target


def _wheel_entry(data: Any, project: str, version: str) -> dict[str, Any]:
    prefix = f"{project.replace('-', '_')}-{version}-"
    files = data.get("files", []) if isinstance(data, dict) else []
    for entry in files:
        name = entry.get("filename", "") if isinstance(entry, dict) else ""
        if name.startswith(prefix) and name.endswith(".whl") and entry.get("url"):
            return dict(entry)
    raise FetchFailed(f"the index lists no wheel of {project} {version}")


def _stream(
    client: httpx.Client,
    url: str,
    target: Path,
    expected: str | None,
    progress: Progress,
    size: object,
) -> None:
    digest = hashlib.sha256()
    with client.stream("GET", url) as response:
        if response.status_code != 200:
            raise FetchFailed(f"{url} answered HTTP {response.status_code}")
        length = response.headers.get("content-length")
        total = int(length) if length and length.isdigit() else size
        total = total if isinstance(total, int) and total > 0 else None
        done = 0
        progress(done, total)
        with target.open("wb") as sink:
            for chunk in response.iter_bytes(_CHUNK):
                sink.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                progress(done, total)
    if expected and digest.hexdigest() != expected:
        raise CorruptDownload(f"{target.name} does not match the SHA-256 the index gives")


def pip_download(requirement: str, folder: Path) -> Path:
    """Download ``requirement``'s wheel with ``pip download`` (no progress); return its path."""
    command = [
        sys.executable,
        *("-m", "pip", "download", "--no-deps", "--only-binary=:all:"),
        *("--disable-pip-version-check", "-q", "-d", str(folder), requirement),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchFailed(f"could not run pip to fetch {requirement} ({exc})") from exc
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        raise FetchFailed(f"could not fetch {requirement} with pip ({detail[0]})")
    return wheels[0]


class ProgressSteps:
    """A ``Progress`` that calls ``emit(percent, message)`` at every ``step`` percent and at 100.

    A total-less download is reported by size every ``step`` MiB instead.
    """

    def __init__(
        self,
        what: str,
        emit: Callable[[int, str], None],
        step: int = 5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Report the download of ``what`` through ``emit``."""
        self._what = what
        self._emit = emit
        self._step = step
        self._clock = clock
        self._last = -1
        self._started = clock()

    def __call__(self, done: int, total: int | None) -> None:
        """Take the bytes received so far."""
        mib = done / 2**20
        if total is None:
            mark = int(mib) // self._step
            if mark > self._last:
                self._last = mark
                self._emit(0, f"downloading {self._what}: {mib:.0f} MiB")
            return
        percent = min(100, done * 100 // total)
        if percent // self._step > self._last // self._step or (percent == 100 > self._last):
            self._last = percent
            seconds = self._clock() - self._started
            self._emit(
                percent,
                f"downloading {self._what}: {mib:.0f} of {total / 2**20:.0f} MiB ({seconds:.0f} s)",
            )


def terminal_progress(what: str, stream: Any = None) -> ProgressSteps:
    """Return a ``Progress`` for a terminal: one rewritten line on a TTY, else every 10 %."""
    out = stream if stream is not None else sys.stderr
    tty = bool(getattr(out, "isatty", lambda: False)())

    def emit(percent: int, message: str) -> None:
        start = "\r" if tty else ""
        end = "\n" if not tty or percent == 100 else ""
        out.write(f"{start}qodeassist-lsp: {percent:3d}% {message}{end}")
        out.flush()

    return ProgressSteps(what, emit, step=1 if tty else 10)
