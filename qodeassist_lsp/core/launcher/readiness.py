"""Waiting for a ``[launch]`` server to answer its ``ready_url``, and the errors when it won't.

Used while starting only: for a server another process is starting on our port (adopt it once it
answers) and for the one we spawned (ready, exited early, or too slow).
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core.launcher.errors import EX_CONFIG, LaunchError
from qodeassist_lsp.core.launcher.probe import (
    ADOPT_PROBE_TIMEOUT_S,
    PROBE_TIMEOUT_S,
    Probe,
    ProbeKind,
    ReadinessProbe,
)
from qodeassist_lsp.core.launcher.run_files import port_of
from qodeassist_lsp.core.launcher.server_process import Owned, Scrollback
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

TAIL_CHARS = 800
"""How much of a server's output an error message quotes."""
_DETAIL_CHARS = 4000


class Readiness:
    """Polls ``probe`` every ``interval_s`` seconds until the server of ``name`` is ready."""

    def __init__(
        self, name: str, config: LaunchConfig, probe: ReadinessProbe, interval_s: float
    ) -> None:
        self.name = name
        self.config = config
        self.probe = probe
        self.interval_s = interval_s

    async def running_elsewhere(self) -> bool:
        """Whether a server answers (at last) on our port; False when nothing listens there.

        A 503 or a silent port may be a server another process is still loading: it gets our
        ready timeout. Any other answer is a foreign program (``LaunchError``).
        """
        probe = await self.probe(ADOPT_PROBE_TIMEOUT_S)
        if probe.kind is ProbeKind.REFUSED:
            return False
        if probe.kind is ProbeKind.OK:
            return True
        if probe.foreign:
            raise self.port_taken(probe)
        deadline = time.monotonic() + self.config.ready_timeout_s
        while time.monotonic() < deadline:
            await asyncio.sleep(self.interval_s)
            probe = await self.probe(PROBE_TIMEOUT_S)
            if probe.kind is ProbeKind.OK:
                return True
            if probe.kind is ProbeKind.REFUSED:
                return False
        raise self.port_taken(probe)

    def port_taken(self, probe: Probe) -> LaunchError:
        """Return the ``config`` error for a ``ready_url`` port held by some other program."""
        parts = urlsplit(self.config.ready_url or "")
        return LaunchError(
            ErrorInfo(
                ErrorCategory.CONFIG,
                f"{parts.hostname}:{port_of(parts.scheme, parts.port)} is taken by a program "
                f"that is not a ready {self.name} server ({self.config.ready_url} {probe.detail}); "
                f"stop that program, or move the {self.name} instance to a free port "
                "(its url, [launch] ready_url and args)",
                provider_detail=probe.detail,
                status=probe.status,
            )
        )

    async def wait(self, owned: Owned, scrollback: Scrollback) -> None:
        """Return once ``owned`` answers; ``LaunchError`` if it exits or the timeout passes."""
        url = self.config.ready_url
        timeout = self.config.ready_timeout_s
        deadline = time.monotonic() + timeout
        last = Probe(ProbeKind.REFUSED, "was never probed")
        while True:
            if owned.exited:
                raise await self._exit_error(owned, scrollback)
            if url is None:
                return
            remaining = deadline - time.monotonic()
            wait_s = min(PROBE_TIMEOUT_S, remaining)
            probe = await self.probe(max(0.1, wait_s))
            if probe.kind is ProbeKind.OK:
                return
            # A probe the deadline cut short says less than the answer the server gave before.
            cut_short = probe.kind is ProbeKind.TIMEOUT and wait_s < PROBE_TIMEOUT_S
            if not (cut_short and last.kind in (ProbeKind.STATUS, ProbeKind.PROTOCOL)):
                last = probe
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            pause = min(self.interval_s, remaining)
            if owned.waiter is not None:
                await asyncio.wait({owned.waiter}, timeout=pause)
            else:
                await asyncio.sleep(pause)
        tail = scrollback.tail(TAIL_CHARS)
        raise LaunchError(
            ErrorInfo(
                ErrorCategory.NETWORK,
                f"the {self.name} server did not become ready within {timeout:g} s "
                f"({url} {last.detail}); raise [launch] ready_timeout_s if it is just slow"
                + (f". Its last output: {tail}" if tail else ""),
                provider_detail=scrollback.tail(_DETAIL_CHARS),
            )
        )

    async def _exit_error(self, owned: Owned, scrollback: Scrollback) -> LaunchError:
        if owned.process is None:
            return LaunchError(
                ErrorInfo(
                    ErrorCategory.NETWORK,
                    f"the detached {self.name} server exited before it was ready; its output is "
                    "discarded in detached mode, so run the [launch] command in a terminal to "
                    "see why",
                )
            )
        await owned.reap()
        code = owned.process.returncode
        tail = scrollback.tail(TAIL_CHARS)
        category = ErrorCategory.CONFIG if code == EX_CONFIG else ErrorCategory.NETWORK
        return LaunchError(
            ErrorInfo(
                category,
                f"the {self.name} server exited with code {code} before it was ready"
                + (f": {tail}" if tail else " (it printed nothing)"),
                provider_detail=scrollback.tail(_DETAIL_CHARS),
            )
        )
