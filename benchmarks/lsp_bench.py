"""Performance harness for the language server (never part of the test run).

Run: .venv/bin/python benchmarks/lsp_bench.py [--requests N] [--latency-ms MS]

Drives the real server over stdio against a loopback provider that answers after a fixed delay,
and prints one table:

- server overhead: LSP round trip minus the provider's own time, on 100- and 5,000-line files
  (explicit requests at changing positions, so neither the typed-ahead cache nor generation
  reuse can answer);
- keystroke storm: 30 characters typed at 20 per second with an automatic request each;
- typed-ahead: the latency of a request answered from the cache, and upstream requests it cost;
- initialize: process start to the ``initialize`` answer, and the answer's own round trip;
- resident memory of the server after 1,000 completions.

Budgets (issue 4): overhead p50 <= 2 ms and p99 <= 10 ms; storm <= 2 upstream requests with
every request answered; typed-ahead <= 2 ms with no upstream request; initialize <= 500 ms;
RSS <= 80 MB after 1,000 completions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply, embedded_instance


def python_file(lines: int) -> str:
    body = []
    for i in range(lines // 2):
        body.append(f"def function_{i}(a, b):\n    return a * {i} + b\n")
    return "".join(body)


class Bench:
    """One server process, its client and the loopback provider."""

    def __init__(self, home: Path, replay: ReplayServer, profile: str | None = None) -> None:
        self.profile = profile
        self.home = home
        self.replay = replay
        self.client = LanguageClient("qodeassist-bench", "1")
        self.version = 1

    async def start(self) -> tuple[float, float]:
        env = {
            **os.environ,
            "QODEASSIST_CONFIG_DIR": str(self.home / "config"),
            "QODEASSIST_DATA_DIR": str(self.home / "data"),
            "QODEASSIST_LOG_LEVEL": "ERROR",
        }
        spawned = time.perf_counter()
        profiler = ["-m", "cProfile", "-o", self.profile] if self.profile else []
        await self.client.start_io(sys.executable, *profiler, "-m", "qodeassist_lsp", env=env)
        sent = time.perf_counter()
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=(self.home / "project").as_uri(),
            )
        )
        answered = time.perf_counter()
        self.client.initialized(types.InitializedParams())
        for _ in range(200):  # wait until the configuration is loaded
            status = await self.client.protocol.send_request_async("qodeassist/status", {})
            if status.state == "ready":
                break
            await asyncio.sleep(0.02)
        return (answered - spawned) * 1000, (answered - sent) * 1000

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def open(self, name: str, text: str) -> str:
        path = self.home / "project" / name
        path.write_text(text)
        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
        )
        return uri

    def insert(self, uri: str, line: int, character: int, text: str) -> None:
        self.version += 1
        position = types.Position(line, character)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=self.version, uri=uri),
                [types.TextDocumentContentChangePartial(types.Range(position, position), text)],
            )
        )

    async def complete(
        self, uri: str, line: int, character: int, invoked: bool = True
    ) -> types.InlineCompletionList | None:
        kind = (
            types.InlineCompletionTriggerKind.Invoked
            if invoked
            else types.InlineCompletionTriggerKind.Automatic
        )
        result = await self.client.text_document_inline_completion_async(
            types.InlineCompletionParams(
                context=types.InlineCompletionContext(trigger_kind=kind),
                text_document=types.TextDocumentIdentifier(uri),
                position=types.Position(line, character),
            )
        )
        return result if isinstance(result, types.InlineCompletionList) else None


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def overhead(bench: Bench, lines: int, requests: int, latency: float) -> list[float]:
    bench.replay.reset()  # no replies left over from another phase
    uri = bench.open(f"file_{lines}.py", python_file(lines))
    bench.replay.script(
        "/v1/completions",
        completion_reply("x", first_byte_delay=latency, repeat=requests + 5),
    )
    samples = []
    for i in range(requests + 5):
        line = (i * 7) % (lines - 2) + 1
        bench.insert(uri, 0, 0, "#")  # a new document every time: no cache can answer
        await asyncio.sleep(0.02)  # edits land during the debounce, not inside the request
        before = len(bench.replay.requests)
        started = time.monotonic()
        await bench.complete(uri, line, 4)
        rtt = time.monotonic() - started
        upstream = bench.replay.requests[before]
        upstream.wait_finished(5)
        provider = (upstream.response_finished_at or 0) - upstream.received_at
        if i >= 5:  # warm-up
            samples.append((rtt - provider) * 1000)
    return samples


async def storm(bench: Bench) -> tuple[int, int, int]:
    bench.replay.reset()  # no replies left over from another phase
    text = "def add(a, b):\n    return a + b\n\nprint(add"
    uri = bench.open("storm.py", text)
    bench.replay.script("/v1/completions", completion_reply("(1, 2))", repeat=30))
    before = len(bench.replay.requests)
    column = len("print(add")
    tasks = []
    for i in range(30):
        bench.insert(uri, 3, column, "xy"[i % 2])
        column += 1
        tasks.append(asyncio.create_task(bench.complete(uri, 3, column, invoked=False)))
        await asyncio.sleep(0.05)
    answers = await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.sleep(0.5)
    answered = sum(1 for a in answers if not isinstance(a, Exception) or "cancel" in str(a))
    return len(bench.replay.requests) - before, answered, len(answers)


async def typed_ahead(bench: Bench, rounds: int) -> tuple[list[float], int]:
    bench.replay.reset()  # no replies left over from another phase
    samples = []
    upstream = 0
    for r in range(rounds):
        uri = bench.open(f"typed_{r}.py", "def add(a, b):\n    return \n")
        bench.replay.script(
            "/v1/completions",
            completion_reply("a + b  # sum"),
        )
        await bench.complete(uri, 1, 11)
        before = len(bench.replay.requests)
        bench.insert(uri, 1, 11, "a")
        started = time.monotonic()
        result = await bench.complete(uri, 1, 12, invoked=False)
        samples.append((time.monotonic() - started) * 1000)
        upstream += len(bench.replay.requests) - before
        if result is None or not result.items:
            raise AssertionError("typed-ahead did not answer")
    return samples, upstream


async def rss_after(bench: Bench, count: int) -> float:
    bench.replay.reset()  # no replies left over from another phase
    uri = bench.open("rss.py", python_file(200))
    bench.replay.script("/v1/completions", completion_reply("value", repeat=count))
    for i in range(count):
        await bench.complete(uri, (i * 3) % 190 + 1, 4)
    pid = bench.client._server.pid
    status = await asyncio.to_thread(Path(f"/proc/{pid}/status").read_text)
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--profile", metavar="FILE", help="run the server under cProfile")
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as replay:
        home = Path(tmp)
        for name in ("config/providers", "data", "project"):
            (home / name).mkdir(parents=True)
        (home / "config/providers/embedded.toml").write_text(embedded_instance(replay.url))
        (home / "config/settings.toml").write_text("[completion]\ntime_budget_ms = 0\n")
        bench = Bench(home, replay, args.profile)
        spawn_ms, rtt_ms = await bench.start()
        rows.append(("initialize: process start → answer", f"{spawn_ms:.0f} ms", "≤ 500 ms"))
        rows.append(("initialize: request → answer", f"{rtt_ms:.1f} ms", ""))
        for lines in (100, 5000):
            samples = await overhead(bench, lines, args.requests, args.latency_ms / 1000)
            rows.append(
                (
                    f"server overhead, {lines}-line file (p50 / p99)",
                    f"{statistics.median(samples):.2f} / {percentile(samples, 0.99):.2f} ms",
                    "≤ 2 / ≤ 10 ms",
                )
            )
        upstream, answered, total = await storm(bench)
        rows.append(("30-keystroke storm: upstream requests", str(upstream), "≤ 2"))
        rows.append(("30-keystroke storm: requests answered", f"{answered}/{total}", "all"))
        samples, extra = await typed_ahead(bench, 20)
        rows.append(
            (
                "typed-ahead hit (p50 / max), upstream requests",
                f"{statistics.median(samples):.2f} / {max(samples):.2f} ms, {extra}",
                "≤ 2 ms, 0",
            )
        )
        rss = await rss_after(bench, 1000)
        rows.append(("resident memory after 1,000 completions", f"{rss:.0f} MB", "≤ 80 MB"))
        await bench.stop()
    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'result':<28}  budget")
    for label, value, budget in rows:
        print(f"{label:<{width}}  {value:<28}  {budget}")


if __name__ == "__main__":
    asyncio.run(main())
