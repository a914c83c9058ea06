"""Slot release: how soon llama.cpp stops generating when a client drops a request (not a test).

Run: .venv/bin/python benchmarks/slot_release.py [--rounds 3] [--json]

Starts the embedded llama.cpp server (``qodeassist-lsp embedded serve``: Gemma 3 270M, one slot)
on a free port and, per round, asks for a long completion (``n_predict`` 64, no stop) in three
ways, dropping the request early:

- ``stream``: a streamed request whose connection is closed after its first chunk of tokens
  (what the language server does to a superseded generation);
- ``plain``: a non-streamed request whose connection is closed ``--drop-ms`` after it was sent
  (what a naive client that drops its previous request does);
- ``kept``: the same streamed request read to its end, for the full generation time.

It then polls ``GET /slots`` until the slot is no longer ``is_processing`` and reports, per way,
the time from the close to the idle slot, also in tokens' worth of generation time (the ``kept``
request's time per token). A second request sent right after the close waits that long for the
one slot: this is the queueing a cancel must avoid.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.typing_replay import free_port, start_model

PROMPT = "".join(f"def function_{i}(value):\n    return value * {i}\n\n" for i in range(12))
BODY = {"model": "gemma3-270m", "prompt": PROMPT, "n_predict": 64, "temperature": 0}


async def idle_after(client: httpx.AsyncClient, url: str, since: float) -> float:
    """Poll ``/slots`` until the slot is idle; return the milliseconds since ``since``."""
    while True:
        slots = (await client.get(url + "/slots")).json()
        if not any(slot.get("is_processing") for slot in slots):
            return (time.monotonic() - since) * 1000
        await asyncio.sleep(0.005)


async def dropped_stream(client: httpx.AsyncClient, url: str) -> float:
    """Stream, close after the first chunk; return the ms to an idle slot."""
    async with client.stream("POST", url + "/completion", json={**BODY, "stream": True}) as r:
        async for _ in r.aiter_bytes():
            break
    closed = time.monotonic()  # leaving the block closes the unread response's connection
    return await idle_after(client, url, closed)


async def dropped_plain(client: httpx.AsyncClient, url: str, drop_ms: float) -> float:
    """Post without streaming, drop the connection after ``drop_ms``."""
    task = asyncio.create_task(client.post(url + "/completion", json={**BODY, "stream": False}))
    await asyncio.sleep(drop_ms / 1000)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    closed = time.monotonic()
    return await idle_after(client, url, closed)


async def kept_stream(client: httpx.AsyncClient, url: str) -> float:
    """Stream to the end; return the ms of the whole request."""
    started = time.monotonic()
    async with client.stream("POST", url + "/completion", json={**BODY, "stream": True}) as r:
        async for _ in r.aiter_bytes():
            pass
    return await idle_after(client, url, started)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    model = await asyncio.to_thread(start_model, port)
    url = f"http://127.0.0.1:{port}"
    results: dict[str, list[float]] = {"stream": [], "plain": [], "kept": []}
    try:
        # Fresh connections per request, as a dropped request's connection is gone anyway.
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            await kept_stream(client, url)  # warm-up: load and first prompt
            for _ in range(args.rounds):
                results["stream"].append(await dropped_stream(client, url))
                results["plain"].append(await dropped_plain(client, url, args.drop_ms))
                results["kept"].append(await kept_stream(client, url))
                print({way: rows[-1] for way, rows in results.items()}, file=sys.stderr)
    finally:
        model.terminate()
        model.wait(10)
    per_token = statistics.median(results["kept"]) / BODY["n_predict"]
    return {
        way: {
            "ms_to_idle_p50": round(statistics.median(rows)),
            "ms_to_idle_max": round(max(rows)),
            "tokens_worth_p50": round(statistics.median(rows) / per_token, 1),
        }
        for way, rows in results.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--drop-ms", type=float, default=300.0, help="plain: close after (300)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = asyncio.run(run(args))
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    print("way     ms to idle p50     max  in tokens' worth")
    for way, row in out.items():
        print(
            f"{way:<7} {row['ms_to_idle_p50']:>14}  {row['ms_to_idle_max']:>6}"
            f"  {row['tokens_worth_p50']:>16g}"
        )


if __name__ == "__main__":
    main()
