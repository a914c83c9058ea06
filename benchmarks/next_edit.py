"""Next-edit suggestions replayed from real edit histories (not a test).

Run: .venv/bin/python benchmarks/next_edit.py [--url URL --model NAME] [--limit N] [--json]

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
counts in neither rate. Latency is the request's round trip.

Without ``--url`` the bundled default agent (Embedded Next Edit, SmolLM2-135M-Instruct on the
built-in server, started on first use) answers; with ``--url`` an "OpenAI Compatible" instance
at that URL (ending in /v1) and the "OpenAI Compatible Next Edit" agent with ``--model``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.rpc_client import start_ready_server

CASES = ROOT / "benchmarks" / "next_edit_data" / "cases.jsonl"


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
    """Replay one case; return its verdict and latency."""
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
    return {"id": case["id"], "verdict": verdict, "latency_ms": round(latency, 1)}


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Replay the cases against one server; the last entry is the server's outcome counts."""
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    cases = cases[: args.limit] if args.limit else cases
    with tempfile.TemporaryDirectory(prefix="qa-next-edit-") as tmp:
        home = Path(tmp)
        configure(home, args.url, args.model, args.budget_ms)
        client = await start_ready_server(home)
        try:
            results = []
            for index, case in enumerate(cases):
                results.append(await run_case(client, home, index, case, args.budget_ms))
                if not args.json:
                    last = results[-1]
                    print(f"{last['verdict']:18} {last['latency_ms']:8.1f} ms  {case['id']}")
            status = await client.request("qodeassist/status", {})
            outcomes = (status.get("nextEdit") or {}).get("outcomes") or {}
            results.append({"id": "server outcomes", "verdict": "status", "outcomes": outcomes})
            return results
        finally:
            await client.shutdown()


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Count the verdicts: right, rightly empty, wrong; latency percentiles."""
    outcomes = next((r["outcomes"] for r in results if r["verdict"] == "status"), {})
    results = [r for r in results if r["verdict"] != "status"]
    with_edit = [r for r in results if r["verdict"] in ("right", "wrong", "missed")]
    without = [r for r in results if r["verdict"] in ("rightly_empty", "wrongly_suggested")]
    # Late answers count in neither rate: the model was not heard.
    latencies = sorted(r["latency_ms"] for r in results)
    return {
        "cases": len(results),
        "right": f"{sum(r['verdict'] == 'right' for r in with_edit)}/{len(with_edit)}",
        "rightly_empty": f"{sum(r['verdict'] == 'rightly_empty' for r in without)}/{len(without)}",
        "wrong": sum(r["verdict"] in ("wrong", "wrongly_suggested") for r in results),
        "late": sum(r["verdict"] == "late" for r in results),
        "latency_ms_p50": latencies[len(latencies) // 2] if latencies else None,
        "latency_ms_max": latencies[-1] if latencies else None,
        "server_outcomes": outcomes,
    }


def main() -> None:
    """Parse the arguments, replay the cases, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="an OpenAI-compatible base URL (ending in /v1)")
    parser.add_argument("--model", help="the model name to ask for at --url")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases")
    parser.add_argument("--budget-ms", type=int, default=30000, help="[next_edit] time_budget_ms")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    report = summary(results)
    if args.json:
        print(json.dumps({"summary": report, "cases": results}, indent=1))
    else:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
