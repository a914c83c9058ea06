"""Next-edit suggestions replayed from real edit histories (not a test).

Run (prints a README-ready markdown table; ``--json`` for the raw numbers):

  .venv/bin/python benchmarks/next_edit.py                      # the embedded default
  .venv/bin/python benchmarks/next_edit.py --embedded-openai    # SmolLM2 over OpenAI-compatible
  .venv/bin/python benchmarks/next_edit.py --url URL/v1 --model NAME

The cases in ``benchmarks/next_edit_data/cases.jsonl`` were cut from the commit histories of
pallets/click, pallets/flask and pallets/itsdangerous (BSD-3-Clause; see SOURCES.md there) by
``next_edit_cases.py``: a commit that changed a file in two nearby places gives a case whose
first change is the user's edit and whose second is the right next edit; a commit that changed
it in one place gives a case whose right answer is no suggestion.

Per case, one real server over stdio: open the excerpt as it was before the commit (version 1),
send the user's edit (``didChange``, version 2), ask ``textDocument/copilotInlineEdit`` at the
end of the edit and apply the answer. A suggestion is *right* when the text then equals the
commit's (trailing whitespace of lines ignored); an empty answer is *rightly empty* when the
commit made no second change; an empty answer that took the whole time budget is *late* and
counts in neither rate. Latency is the request's round trip. The cases alternate between the
two kinds, and no case starts ``--minutes`` (default 10) after the run began: a slow model
measures fewer.

Where the model runs:

- default: the bundled default agent (Embedded Next Edit: SmolLM2-135M-Instruct on the
  built-in server, started by the server on first use, the bundled chat prompt);
- ``--url``: an "OpenAI Compatible" instance at that URL (ending in /v1) and the "OpenAI
  Compatible Next Edit" agent (the same chat prompt) with ``--model``;
- ``--embedded-openai``: the benchmark starts ``qodeassist-lsp embedded serve --bundled
  smollm2-135m-instruct`` itself (llama.cpp's OpenAI-compatible server) and measures it as
  ``--url``: the same model through the OpenAI-compatible path.

Server overhead is measured first, on every case, against an instant loopback model (the
``ProviderProcess`` replay server, answering the commit's text): the request's round trip minus
the provider's own time. The budget is 10 ms at the 95th percentile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.embedded_servers import start
from benchmarks.provider_process import ProviderProcess
from benchmarks.rpc_client import start_ready_server
from tests.support.streams import chat_reply, write_embedded_instances

CASES = ROOT / "benchmarks" / "next_edit_data" / "cases.jsonl"
SOURCES = "benchmarks/next_edit_data/SOURCES.md"
INSTRUCT = "smollm2-135m-instruct"
OVERHEAD_BUDGET_MS = 10.0


def configure(home: Path, url: str | None, model: str | None, budget_ms: int) -> None:
    """Write the config home: the agent to use and a time budget for slow local models."""
    config = home / "config"
    for folder in ("config/providers", "data", "project"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(f"[next_edit]\ntime_budget_ms = {budget_ms}\n")
    if url:
        (config / "providers" / "openai_compatible.toml").write_text(
            f'name = "OpenAI Compatible"\nclient_api = "OpenAI Compatible"\nurl = "{url}"\n'
        )
        (config / "pipelines.toml").write_text(
            '[pipelines]\nnext_edit = ["OpenAI Compatible Next Edit"]\n'
        )
        if model:
            overrides = {"OpenAI Compatible Next Edit": {"model": model}}
            (config / "agent_models.json").write_text(json.dumps(overrides))


def user_edit(before: str, after: str) -> dict[str, Any]:
    """The ``didChange`` content change that turns ``before`` into ``after`` (one range)."""
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1

    def position(offset: int) -> dict[str, int]:
        line = before.count("\n", 0, offset)
        character = offset - (before.rfind("\n", 0, offset) + 1)
        return {
            "line": line,
            "character": len(before[offset - character : offset].encode("utf-16-le")) // 2,
        }

    return {
        "range": {"start": position(prefix), "end": position(len(before) - suffix)},
        "text": after[prefix : len(after) - suffix],
    }


def offset(text: str, position: dict[str, int]) -> int:
    """The offset of an LSP position (UTF-16 columns) in ``text``."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: position["line"]])
    line = lines[position["line"]] if position["line"] < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position["character"]:
            return start + index
        units += len(char.encode("utf-16-le")) // 2
    return start + len(line)


def normalised(text: str) -> str:
    """``text`` without trailing whitespace on its lines and at its end."""
    return "\n".join(line.rstrip() for line in text.rstrip().split("\n"))


async def run_case(
    client: Any, home: Path, index: int, case: dict[str, Any], budget_ms: int
) -> dict[str, Any]:
    """Replay one case; return its verdict and latency (``round_trip_s``: timed at the pipe)."""
    path = home / "project" / f"case{index}_{Path(case['source']['path']).name}"
    uri = path.as_uri()
    before, after = case["before"], case["after_user"]
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": before}},
    )
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [user_edit(before, after)]},
    )
    started = time.perf_counter()
    result = await client.request(
        "textDocument/copilotInlineEdit",
        {"textDocument": {"uri": uri, "version": 2}, "position": case["cursor"]},
        within=budget_ms / 1000.0 + 30.0,
    )
    latency = (time.perf_counter() - started) * 1000.0
    round_trip_s = client.last_round_trip
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    edits = result.get("edits") or []
    expected = case["expected"]
    if not edits and latency >= budget_ms * 0.98:
        verdict = "late"  # answered empty because the model ran out of time
    elif not edits:
        verdict = "rightly_empty" if expected is None else "missed"
    else:
        edit = edits[0]
        start, end = offset(after, edit["range"]["start"]), offset(after, edit["range"]["end"])
        applied = after[:start] + edit["text"] + after[end:]
        right = expected is not None and normalised(applied) == normalised(expected)
        verdict = "right" if right else ("wrongly_suggested" if expected is None else "wrong")
    return {
        "id": case["id"],
        "verdict": verdict,
        "latency_ms": round(latency, 1),
        "round_trip_s": round_trip_s,
    }


def load_cases(limit: int) -> list[dict[str, Any]]:
    """The cases, alternating those with a next edit and those without (a cut run is fair)."""
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    with_edit = [c for c in cases if c["expected"] is not None]
    without = [c for c in cases if c["expected"] is None]
    mixed: list[dict[str, Any]] = []
    for index in range(max(len(with_edit), len(without))):
        mixed += with_edit[index : index + 1] + without[index : index + 1]
    return mixed[:limit] if limit else mixed


@contextlib.contextmanager
def embedded_openai() -> Iterator[str]:
    """Start ``embedded serve`` with the bundled instruct model; yield its OpenAI-compatible URL."""
    process, url, ready_s = start(INSTRUCT)
    print(
        f"started embedded serve --bundled {INSTRUCT} at {url} in {ready_s:.1f} s", file=sys.stderr
    )
    try:
        yield url + "/v1"
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        if process.poll() is None:
            process.kill()


async def measure_overhead(cases: list[dict[str, Any]]) -> list[float]:
    """Per case, the server's time beyond an instant loopback model's (ms)."""
    overheads: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="qa-next-edit-overhead-") as tmp,
        ProviderProcess() as provider,
    ):
        home = Path(tmp)
        configure(home, None, None, 6000)
        write_embedded_instances(home / "config" / "providers", provider.url)
        client = await start_ready_server(home)
        try:
            # The first request imports the feature and opens the HTTP client: not measured.
            for index, case in enumerate([cases[0], *cases]):
                answer = case["expected"] or case["after_user"]
                provider.script(
                    "/v1/chat/completions", chat_reply(f"<updated>\n{answer}</updated>")
                )
                seen = provider.count()
                result = await run_case(client, home, index, case, 6000)
                if provider.count() == seen or index == 0:
                    continue  # answered without the model (nothing to charge the model with)
                model_s = provider.upstream(seen).provider_time
                overheads.append((result["round_trip_s"] - model_s) * 1000.0)
        finally:
            await client.shutdown()
    return overheads


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure the overhead, then replay the cases against the model; return the report."""
    deadline = time.monotonic() + args.minutes * 60.0  # the whole run, overhead phase included
    cases = load_cases(args.limit)
    overheads = [] if args.no_overhead else await measure_overhead(cases)
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(embedded_openai()) if args.embedded_openai else args.url
        model = INSTRUCT if args.embedded_openai else args.model
        with tempfile.TemporaryDirectory(prefix="qa-next-edit-") as tmp:
            home = Path(tmp)
            configure(home, url, model, args.budget_ms)
            client = await start_ready_server(home)
            try:
                results = []
                for index, case in enumerate(cases):
                    if time.monotonic() > deadline:
                        break
                    results.append(await run_case(client, home, index, case, args.budget_ms))
                    last = results[-1]
                    line = f"{last['verdict']:18} {last['latency_ms']:8.1f} ms  {case['id']}"
                    print(line, file=sys.stderr)
                status = await client.request("qodeassist/status", {})
            finally:
                await client.shutdown()
    outcomes = (status.get("nextEdit") or {}).get("outcomes") or {}
    return {
        "model": describe(args, url, model),
        "cases": results,
        "available": len(cases),
        "server_outcomes": outcomes,
        "overhead_ms": overheads,
    }


def describe(args: argparse.Namespace, url: str | None, model: str | None) -> str:
    """How the model was reached, for the table."""
    if args.embedded_openai:
        return f"{INSTRUCT}, OpenAI-compatible (embedded serve)"
    if url:
        return f"{model or 'the agent default model'} at {url}"
    return f"{INSTRUCT}, embedded default (Embedded Next Edit)"


def percentile(values: list[float], fraction: float) -> float | None:
    """The ``fraction`` quantile of ``values`` (None when empty)."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """Count the verdicts: right, rightly empty, wrong, late; latency and overhead percentiles."""
    results = report["cases"]
    with_edit = [r for r in results if r["verdict"] in ("right", "wrong", "missed")]
    without = [r for r in results if r["verdict"] in ("rightly_empty", "wrongly_suggested")]
    # Late answers count in neither rate: the model was not heard.
    latencies = [r["latency_ms"] for r in results]
    overheads = report["overhead_ms"]
    p95 = percentile(overheads, 0.95)
    return {
        "model": report["model"],
        "cases": f"{len(results)}/{report['available']}",
        "right": f"{sum(r['verdict'] == 'right' for r in with_edit)}/{len(with_edit)}",
        "rightly_empty": f"{sum(r['verdict'] == 'rightly_empty' for r in without)}/{len(without)}",
        "wrong": sum(r["verdict"] in ("wrong", "wrongly_suggested") for r in results),
        "late": sum(r["verdict"] == "late" for r in results),
        "latency_ms_p50": percentile(latencies, 0.5),
        "latency_ms_p95": percentile(latencies, 0.95),
        "overhead_ms_p50": percentile(overheads, 0.5),
        "overhead_ms_p95": p95,
        "overhead_within_budget": None if p95 is None else p95 <= OVERHEAD_BUDGET_MS,
        "server_outcomes": report["server_outcomes"],
    }


def ms(value: float | None) -> str:
    """A millisecond figure for the table."""
    return "n/a" if value is None else f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms"


def markdown(row: dict[str, Any]) -> str:
    """The README table, the overhead check and the data's source and licence."""
    check = {True: "within", False: "OVER", None: "not measured"}[row["overhead_within_budget"]]
    return "\n".join(
        [
            "| model | cases | right | rightly empty | wrong | late | latency p50 | latency p95 |",
            "|---|---|---|---|---|---|---|---|",
            f"| {row['model']} | {row['cases']} | {row['right']} | {row['rightly_empty']} "
            f"| {row['wrong']} | {row['late']} | {ms(row['latency_ms_p50'])} "
            f"| {ms(row['latency_ms_p95'])} |",
            "",
            f"Server overhead beyond the model (instant loopback model): p50 "
            f"{ms(row['overhead_ms_p50'])}, p95 {ms(row['overhead_ms_p95'])}: {check} the "
            f"{OVERHEAD_BUDGET_MS:.0f} ms budget.",
            "",
            "Data: edit histories cut from the commit histories of pallets/click, pallets/flask "
            "and pallets/itsdangerous (BSD-3-Clause, © the Pallets authors); sources, commits "
            f"and licences in `{SOURCES}`.",
            f"Server outcomes: {json.dumps(row['server_outcomes'], sort_keys=True)}",
        ]
    )


def main() -> None:
    """Parse the arguments, replay the cases, print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="an OpenAI-compatible base URL (ending in /v1)")
    where.add_argument(
        "--embedded-openai",
        action="store_true",
        help=f"start `embedded serve --bundled {INSTRUCT}` and use it as --url",
    )
    parser.add_argument("--model", help="the model name to ask for at --url")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases")
    parser.add_argument("--minutes", type=float, default=10.0, help="start no case after this")
    parser.add_argument("--budget-ms", type=int, default=30000, help="[next_edit] time_budget_ms")
    parser.add_argument("--no-overhead", action="store_true", help="skip the overhead phase")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    row = summary(report)
    if args.json:
        print(
            json.dumps(
                {"summary": row, "cases": report["cases"], "overhead_ms": report["overhead_ms"]},
                indent=1,
            )
        )
    else:
        print(markdown(row))


if __name__ == "__main__":
    main()
