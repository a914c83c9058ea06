"""How a completion's cost grows with the time the server idled before it (never part of the tests).

Run: .venv/bin/python benchmarks/idle_cost.py [--requests N]

The same completion request, against a loopback provider that answers at once, is sent after
pauses of 0, 1, 5, 20 and 70 ms; the table gives the server's CPU per request and the round
trip (medians), and each as a ratio to the back-to-back case. The server does the same work
every time, so any growth is what idling costs on this machine (cold caches, the host's core
state): `lsp_bench.py`'s overhead rows pay it twice per request, before the request and while
the provider takes its 50 ms, and an editor's requests pay it too.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.lsp_bench import Bench, cpu_clock, prepare_home, python_file
from benchmarks.provider_process import ProviderProcess
from tests.support.streams import completion_reply

PAUSES_MS = (0.0, 1.0, 5.0, 20.0, 70.0)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=150, help="requests per pause")
    args = parser.parse_args()
    lines = 100
    rows: list[tuple[float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, ProviderProcess() as provider:
        home = Path(tmp)
        prepare_home(home, provider)
        bench = Bench(home, provider)
        try:
            await bench.start()
            uri = bench.open("idle.py", python_file(lines))
            total = (args.requests + 20) * len(PAUSES_MS)
            provider.script("/v1/completions", completion_reply("x", repeat=total))
            for pause in PAUSES_MS:
                cpu: list[float] = []
                round_trips: list[float] = []
                for i in range(args.requests + 20):
                    if pause:
                        await asyncio.sleep(pause / 1000)
                    before = cpu_clock(bench.pid)
                    await bench.complete(uri, (i * 7) % (lines - 2) + 1, 4 + i % 3)
                    if i >= 20:  # warmed up at this pause
                        cpu.append((cpu_clock(bench.pid) - before) * 1000)
                        round_trips.append(bench.client.last_round_trip * 1000)
                rows.append((pause, statistics.median(cpu), statistics.median(round_trips)))
        finally:
            await bench.stop()
    base_cpu, base_rtt = rows[0][1], rows[0][2]
    print(f"{'idle before request':<20}  {'server CPU':<18}  round trip")
    for pause, cpu_ms, rtt_ms in rows:
        print(
            f"{pause:>6.0f} ms{'':<11}  {cpu_ms:5.2f} ms ({cpu_ms / base_cpu:4.2f}x)  "
            f"{rtt_ms:5.2f} ms ({rtt_ms / base_rtt:4.2f}x)"
        )


if __name__ == "__main__":
    asyncio.run(main())
