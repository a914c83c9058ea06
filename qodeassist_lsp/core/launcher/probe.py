"""The readiness probe: one GET of a ``[launch]`` server's ``ready_url``, classified.

The supervisor asks it at start (adopt, or wait for a spawned server) and again only after a
request could not connect; it never runs before every request.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import httpx

ADOPT_PROBE_TIMEOUT_S = 1.5
"""How long a probe of a server that may already run waits for an answer."""
PROBE_TIMEOUT_S = 2.0
"""How long one probe of a starting server waits for an answer."""


class ProbeKind(enum.Enum):
    """What a probe saw at ``ready_url``."""

    OK = "ok"
    REFUSED = "refused"
    STATUS = "status"
    TIMEOUT = "timeout"
    PROTOCOL = "protocol"


@dataclass(frozen=True, slots=True)
class Probe:
    """The outcome of one probe: its kind, a phrase for messages and the HTTP status."""

    kind: ProbeKind
    detail: str = ""
    status: int | None = None

    @property
    def foreign(self) -> bool:
        """Whether the answer shows a program that is no server of ours, not even a loading one."""
        # llama.cpp and most model servers answer 503 while they load the model.
        return self.kind is ProbeKind.PROTOCOL or (
            self.kind is ProbeKind.STATUS and self.status != 503
        )


class ReadinessProbe:
    """Probes one ``ready_url`` (every answer is OK when there is none) and counts its probes."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.count = 0
        """How many probes were sent (tests check the probe stays off the request path)."""
        self._http: httpx.AsyncClient | None = None

    async def __call__(self, wait_s: float) -> Probe:
        """Probe once, waiting at most ``wait_s`` seconds for the answer."""
        if self.url is None:
            return Probe(ProbeKind.OK)
        if self._http is None:
            # trust_env off: a loopback probe must never go through the user's HTTP proxy.
            self._http = httpx.AsyncClient(trust_env=False)
        self.count += 1
        try:
            response = await self._http.get(self.url, timeout=wait_s)
        except httpx.ConnectError as exc:
            return Probe(ProbeKind.REFUSED, f"refused the connection: {exc}")
        except httpx.TimeoutException:
            return Probe(ProbeKind.TIMEOUT, f"did not answer within {wait_s:g} s")
        except httpx.HTTPError as exc:
            return Probe(ProbeKind.PROTOCOL, f"did not answer HTTP: {exc}")
        if response.is_success:
            return Probe(ProbeKind.OK, status=response.status_code)
        return Probe(
            ProbeKind.STATUS, f"answered HTTP {response.status_code}", response.status_code
        )

    async def aclose(self) -> None:
        """Close the HTTP client (a later probe opens a new one)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
