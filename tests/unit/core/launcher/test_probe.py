"""The readiness probe classifies what answers ``ready_url``, and counts its probes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from qodeassist_lsp.core.launcher.probe import Probe, ProbeKind, ReadinessProbe
from tests.support.tiny_launch import free_port


async def serve_once(reply: bytes) -> tuple[asyncio.Server, int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.fixture
async def probe() -> AsyncIterator[list[ReadinessProbe]]:
    made: list[ReadinessProbe] = []
    yield made
    for one in made:
        await one.aclose()


@pytest.mark.parametrize(
    ("reply", "kind", "foreign"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ProbeKind.OK, False),
        (b"HTTP/1.1 503 Loading\r\nContent-Length: 0\r\n\r\n", ProbeKind.STATUS, False),
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", ProbeKind.STATUS, True),
        (b"SSH-2.0-OpenSSH\r\n\r\n", ProbeKind.PROTOCOL, True),
    ],
)
async def test_answers_are_classified(
    probe: list[ReadinessProbe], reply: bytes, kind: ProbeKind, foreign: bool
) -> None:
    server, port = await serve_once(reply)
    async with server:
        one = ReadinessProbe(f"http://127.0.0.1:{port}/health")
        probe.append(one)
        seen = await one(2.0)
    assert seen.kind is kind and seen.foreign is foreign and one.count == 1


async def test_nothing_listening_is_refused(probe: list[ReadinessProbe]) -> None:
    one = ReadinessProbe(f"http://127.0.0.1:{free_port()}/health")
    probe.append(one)
    seen = await one(1.0)
    assert seen.kind is ProbeKind.REFUSED and "refused" in seen.detail and not seen.foreign


async def test_no_ready_url_is_always_ready_and_sends_nothing() -> None:
    one = ReadinessProbe(None)
    assert await one(1.0) == Probe(ProbeKind.OK) and one.count == 0
