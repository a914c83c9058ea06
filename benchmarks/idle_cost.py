"""How a completion's cost grows with the time the server idled before it (never part of the tests).

Run: .venv/bin/python benchmarks/idle_cost.py [--requests N]

The same completion request, against a loopback provider that answers at once, is sent after
pauses of 0, 1, 5, 20 and 70 ms; the table gives the server's CPU per request and the round
trip (medians), and each as a ratio to the back-to-back case. The server does the same work
every time, so any growth is what idling costs on this machine: `lsp_bench.py`'s overhead rows
pay it twice per request, before the request and while the provider takes its 50 ms, and an
editor's requests pay it too.

The last column is a control: a fixed pure-Python loop (no I/O, a few hundred bytes of data)
timed in this process after the same pauses. When it slows down as much as the server does, the
cost of idling is the machine's (the core's clock and power state on the host), not the
server's caches or code.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.lsp_bench import Bench, cpu_clock, prepare_home, python_file
from benchmarks.provider_process import ProviderProcess
from tests.support.streams import completion_reply

PAUSES_MS = (0.0, 1.0, 5.0, 20.0, 70.0)


def fixed_work() -> float:
    """CPU milliseconds of a fixed pure-Python loop that touches almost no memory."""
    start = time.thread_time()
    total = 0
    for i in range(3000):
        total += i * i
    return (time.thread_time() - start) * 1000


async def control(pause_ms: float, count: int) -> float:
    """Median CPU ms of `fixed_work` run after ``pause_ms`` of sleep."""
    samples = []
    for _ in range(count):
        if pause_ms:
            await asyncio.sleep(pause_ms / 1000)
        samples.append(fixed_work())
    return statistics.median(samples)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=150, help="requests per pause")
    args = parser.parse_args()
    lines = 100
    rows: list[tuple[float, float, float, float]] = []
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
                loop_ms = await control(pause, args.requests)
                rows.append(
                    (pause, statistics.median(cpu), statistics.median(round_trips), loop_ms)
                )
        finally:
            await bench.stop()
    base_cpu, base_rtt, base_loop = rows[0][1], rows[0][2], rows[0][3]
    print(f"{'idle before request':<20}  {'server CPU':<18}  {'round trip':<18}  control loop")
    for pause, cpu_ms, rtt_ms, loop_ms in rows:
        print(
            f"{pause:>6.0f} ms{'':<11}  {cpu_ms:5.2f} ms ({cpu_ms / base_cpu:4.2f}x)  "
            f"{rtt_ms:5.2f} ms ({rtt_ms / base_rtt:4.2f}x)  "
            f"{loop_ms:5.3f} ms ({loop_ms / base_loop:4.2f}x)"
        )


if __name__ == "__main__":
    asyncio.run(main())
