"""Repository-level completion: the server with the codebase index against the server without.

Run: .venv/bin/pip install -e '.[bench,local]'
     .venv/bin/python benchmarks/repo_completion.py [--tasks 40] [--seed N] [--repo DIR]
     [--tokens N] [--typed N] [--no-caret-hint] [--no-dwell] [--json]

Not a test (it needs the embedded model). Lines are sampled afresh each run (the seed is
printed; ``--seed`` repeats a run) from a real Python project nobody here wrote — the one
vendored in ``benchmarks/codebase_data/`` (``--repo`` names another; until one is vendored,
the installed ``httpx`` package) — among the lines that use, outside strings and comments, a
function or class defined at the top level of *another* module of the project that the
line's module imports by name (``Response(``, ``primitive_value_to_str(``, ``URL(``), import
lines, decorators and a definition's own name left out. Each line
is cut right before that name, as CrossCodeEval cuts its tasks: the document is the file with
the rest of that line removed, the cursor at the cut, and the right completion is the rest of
the line (it starts with the name). ``--typed N`` puts the cursor N characters into the name
instead (as a user who typed its start; all but its last at most): the same lines for a seed,
and the answer is compared with the typed characters in front of it.

Two real language servers over stdio, on a copy of the project as their workspace, ask the same
model (the embedded llama.cpp server with Gemma 3 270M, started here on a free port) in one run,
for the same lines, alternating which goes first:

* **index**: the codebase feature indexes the workspace (waited for before the first line) and
  completion puts the file block in front of the prompt (``[completion] codebase_context`` and
  ``codebase_context_in_prefix``: the embedded agent's prompt is the prefix alone);
* **plain**: the same with ``[codebase] enabled = false``: no index, the prompt as before.

Each is used as with our Neovim and Emacs clients: it opens the document, the caret goes to the
line (``qodeassist/didMoveCursor`` right after the open, as the Neovim plugin sends on attach;
``--no-caret-hint``: none, as from a generic LSP client, and the open's warm-up is planned at
the file's end), it waits (``--dwell``, the default; ``--no-dwell``: not) for the warm-up to be
read by the model, then it asks an invoked ``textDocument/inlineCompletion`` at the line. The
first item's first line is compared with the right one: exact match (whitespace at the ends
ignored) and edit similarity (rapidfuzz ``fuzz.ratio``, 0-100), and the client-side latency of
the request. Each server talks to the model through its own recording proxy, so each line also
reports what its request read and wrote: llama.cpp's ``prompt_n`` (new prompt tokens),
``cache_n`` (tokens from the prompt cache) and ``predicted_n`` (tokens generated), counts that do
not depend on the machine's load. A request that timed out (``--timeout-s``, a loaded machine)
counts as an empty answer, and is counted apart (``timed out``). The budget
(issue 45): with the index, exact matches and edit similarity at least 5 points above without,
and the latency p50 within 10 % of without's.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import io
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rapidfuzz import fuzz

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.infill_humaneval import machine
from benchmarks.rpc_client import RpcClient, start_ready_server
from benchmarks.typing_replay import Proxy, free_port, model_idle, start_model
from tests.support.streams import write_embedded_instances

INVOKED = 1  # InlineCompletionTriggerKind.Invoked
DATA = ROOT / "benchmarks" / "codebase_data"
GAIN_POINTS = 5.0
LATENCY_SLACK = 0.10
WARM_UP_WAIT_S = 5.0
"""With ``--dwell``, how long to wait for the open's warm-up to be sent (none may be)."""
TIMINGS = ("prompt_n", "cache_n", "prompt_ms", "predicted_n", "predicted_ms")
"""What each line keeps of llama.cpp's ``timings`` for its request (the counts are load-free)."""
SETTLE_S = 0.45
"""With the caret hint, how long no further warm-up must be sent: the caret's comes after the
open's when the open's 50 ms timer fired first, after the idle wait (300 ms)."""


@dataclass(frozen=True)
class Task:
    """One line cut before a name defined in another module."""

    path: str
    """The module, relative to the project."""
    line: int
    character: int
    name: str
    document: str
    """The module with the rest of the line removed."""
    expected: str
    """The rest of the line (it starts with ``name``)."""
    typed: str = ""
    """The start of ``name`` already typed before the cursor (``--typed``)."""


# ---------------------------------------------------------------------------------- the data
def find_project(repo: str) -> Path:
    """The project's folder: ``--repo``, the vendored one, or the installed httpx."""
    if repo:
        return Path(repo).resolve()
    if DATA.is_dir():
        for child in sorted(DATA.iterdir()):
            if child.is_dir() and any(child.rglob("*.py")):
                return child
    import httpx

    return Path(httpx.__file__).resolve().parent


def top_level_names(source: str) -> tuple[set[str], set[str]]:
    """The functions and classes a module defines at its top level, and the names it imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(), set()
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    return defined, imported


def load_tasks(project: Path, count: int, seed: int, typed: int = 0) -> list[Task]:
    """A seeded sample of ``count`` lines of ``project`` cut before another module's name.

    With ``typed``, the cursor is that many characters into the name instead (at most all but
    its last): the same lines for the same seed, as a user who typed the name's start.
    """
    sources = {
        path.relative_to(project).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(project.rglob("*.py"))
    }
    defined: dict[str, set[str]] = {}
    for rel, source in sources.items():
        for name in top_level_names(source)[0]:
            defined.setdefault(name, set()).add(rel)
    candidates: list[tuple[str, int, int, str]] = []
    for rel, source in sources.items():
        own, imported = top_level_names(source)
        lines = source.split("\n")
        seen_lines: set[int] = set()
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, SyntaxError):
            continue
        for token in tokens:
            # A name this module imports (a use of the other module's definition), not its own.
            if token.type != tokenize.NAME or token.string in own or token.string not in imported:
                continue
            if not (defined.get(token.string, set()) - {rel}):
                continue
            row, col = token.start[0] - 1, token.start[1]
            text = lines[row]
            stripped = text.lstrip()
            if row in seen_lines or stripped.startswith(("import ", "from ", "@")):
                continue
            if text[col - 1 : col] == "." or text[:col].rstrip().endswith(("def", "class")):
                continue  # an attribute of something else, a definition's own name
            seen_lines.add(row)
            candidates.append((rel, row, col, token.string))
    rng = random.Random(seed)
    picked = rng.sample(candidates, min(count, len(candidates)))
    tasks = []
    for rel, row, col, name in picked:
        lines = sources[rel].split("\n")
        cut = col + min(typed, len(name) - 1)
        before = "\n".join([*lines[:row], lines[row][:cut]])
        after = "\n".join(lines[row + 1 :])
        document = before + "\n" + after
        tasks.append(Task(rel, row, cut, name, document, lines[row][col:], lines[row][col:cut]))
    return tasks


# ---------------------------------------------------------------------------------- clients
class Server:
    """A language server over stdio on a copy of the project, on the embedded model."""

    def __init__(self, home: Path, label: str, proxy: Proxy) -> None:
        self.home = home
        self.label = label
        self.proxy = proxy
        """Between this server and the model: what each of its requests read."""
        self.client: RpcClient | None = None

    async def start(self, index: bool, timeout_s: float, tokens: int | None = None) -> None:
        for name in ("config", "data"):
            (self.home / name).mkdir(parents=True, exist_ok=True)
        (self.home / "config" / "settings.toml").write_text(
            f"[completion]\nfirst_byte_timeout_s = {timeout_s}\nrequest_timeout_s = {timeout_s}\n"
            + (f"codebase_context_tokens = {tokens}\n" if tokens is not None else "")
            # The Embedded Completion agent sends the prefix alone: the definitions go in front.
            + ("codebase_context_in_prefix = true\n" if index else "")
            + ("" if index else "\n[codebase]\nenabled = false\n")
        )
        self.client = await start_ready_server(self.home)
        if index:
            status = await self.client.request(
                "qodeassist/codebase/reindex", {"wait": True}, within=600
            )
            print(f"{self.label}: index {json.dumps(status)[:200]}", file=sys.stderr)

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.shutdown()

    async def warm_ups(self) -> int:
        """Return the server's warm-up count (``qodeassist/status``)."""
        assert self.client is not None
        status = await self.client.request("qodeassist/status", {})
        return int(((status or {}).get("completion") or {}).get("warmUps") or 0)

    async def complete(
        self,
        task: Task,
        timeout_s: float,
        model: httpx.AsyncClient | None = None,
        url: str = "",
        *,
        caret: bool = True,
    ) -> tuple[str, float, dict[str, Any]]:
        """Open the task's document, ask at the cursor, close it; the first line, seconds, counts.

        With ``caret``, say where the caret rests right after the open, as the Neovim plugin
        does on attach. With ``model`` (``--dwell``): wait for the server's warm-up to be sent
        and the model to be idle, as when a user opens a file, goes to a line and reads it.
        The counts: warm-ups sent, and the request's ``prompt_n``/``cache_n`` (llama.cpp).
        """
        assert self.client is not None
        uri = (self.home / "project" / task.path).as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": task.document}
        position = {"line": task.line, "character": task.character}
        before = await self.warm_ups()
        self.client.notify("textDocument/didOpen", {"textDocument": document})
        if caret:
            self.client.notify(
                "qodeassist/didMoveCursor", {"textDocument": {"uri": uri}, "position": position}
            )
        if model is not None:
            await self._dwell(before, model, url, timeout_s, settle=caret)
        warmed = await self.warm_ups() - before
        params = {
            "textDocument": {"uri": uri},
            "position": position,
            "context": {"triggerKind": INVOKED},
        }
        posted = len(self.proxy.requests)
        started = time.perf_counter()
        timed_out = False
        try:
            result = await self.client.request(
                "textDocument/inlineCompletion", params, within=timeout_s
            )
        except TimeoutError:  # a loaded machine: counted as an empty answer of timeout_s
            result, timed_out = None, True
        finally:
            elapsed = time.perf_counter() - started
            self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        counts: dict[str, Any] = {"warm_ups": warmed, "timed_out": timed_out}
        counts |= dict.fromkeys(TIMINGS)
        asked = [r.timings for r in self.proxy.requests[posted:] if r.timings is not None]
        if asked:  # the request's first upstream request (one, unless it was retried)
            counts |= {key: asked[0].get(key) for key in TIMINGS}
        items = result.get("items") if isinstance(result, dict) else result
        if not items:
            return "", elapsed, counts
        text = items[0].get("insertText")
        if isinstance(text, dict):
            text = text.get("value", "")
        return str(text or "").split("\n", 1)[0], elapsed, counts

    async def _dwell(
        self, before: int, model: httpx.AsyncClient, url: str, timeout_s: float, *, settle: bool
    ) -> None:
        """Wait for a warm-up after ``before`` to be sent and read (with ``settle``: the last)."""
        seen = before
        while True:
            deadline = time.monotonic() + (SETTLE_S if seen != before else WARM_UP_WAIT_S)
            count = seen
            while time.monotonic() < deadline:  # it is sent 50 ms after the open (or caret)
                count = await self.warm_ups()
                if count != seen:
                    break
                await asyncio.sleep(0.05)
            if count == seen:
                return  # none (more) was sent
            seen = count
            # Counted when launched: wait for the model to start reading it, then to be done.
            deadline = time.monotonic() + WARM_UP_WAIT_S
            while time.monotonic() < deadline:
                slots = (await model.get(url + "/slots")).json()
                if any(slot.get("is_processing") for slot in slots):
                    break
                await asyncio.sleep(0.02)
            await model_idle(model, url, timeout_s)
            if not settle:
                return


def exact(expected: str, got: str) -> bool:
    return expected.strip() == got.strip()


def similarity(expected: str, got: str) -> float:
    return float(fuzz.ratio(expected.strip(), got.strip()))


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


# ---------------------------------------------------------------------------------- main
async def run(args: argparse.Namespace) -> dict[str, Any]:
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10**6)
    print(f"seed {seed}", file=sys.stderr)
    project = find_project(args.repo)
    tasks = load_tasks(project, args.tasks, seed, args.typed)
    model: subprocess.Popen[bytes] | None = None
    url = args.model_url
    if not url:
        port = free_port()
        model = await asyncio.to_thread(start_model, port)
        url = f"http://127.0.0.1:{port}"
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    upstream = httpx.URL(url).port or 80
    with tempfile.TemporaryDirectory(prefix="repo-completion-") as tmp:
        servers = {}
        for label in ("index", "plain"):
            home = Path(tmp) / label
            shutil.copytree(project, home / "project" / project.name)
            (home / "config" / "providers").mkdir(parents=True)
            proxy = Proxy(upstream)
            await proxy.start()
            write_embedded_instances(home / "config" / "providers", proxy.url)
            servers[label] = Server(home, label, proxy)
        model_client = httpx.AsyncClient(timeout=30)
        try:
            await servers["index"].start(True, args.timeout_s, args.tokens)
            await servers["plain"].start(False, args.timeout_s)
            for number, task in enumerate(tasks):
                located = Task(
                    f"{project.name}/{task.path}",
                    task.line,
                    task.character,
                    task.name,
                    task.document,
                    task.expected,
                    task.typed,
                )
                order = ("index", "plain") if number % 2 == 0 else ("plain", "index")
                row: dict[str, Any] = {
                    "path": located.path,
                    "line": task.line + 1,
                    "name": task.name,
                    "expected": task.expected,
                }
                for label in order:
                    got, seconds, counts = await servers[label].complete(
                        located,
                        args.timeout_s,
                        model_client if args.dwell else None,
                        url,
                        caret=args.caret_hint,
                    )
                    row[f"{label}_empty"] = not got.strip()
                    got = task.typed + got  # the line as the user sees it
                    row[label] = got
                    row[f"{label}_s"] = round(seconds, 3)
                    row.update({f"{label}_{key}": value for key, value in counts.items()})
                    row[f"{label}_exact"] = exact(task.expected, got)
                    row[f"{label}_similarity"] = similarity(task.expected, got)
                rows.append(row)
                if args.verbose:
                    print(json.dumps(row), file=sys.stderr)
                elif number % 10 == 9:
                    print(f"{number + 1}/{len(tasks)} lines", file=sys.stderr)
        finally:
            await model_client.aclose()
            for server in servers.values():
                await server.stop()
                await server.proxy.close()
            if model is not None:
                os.kill(model.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    model.wait(10)
    count = len(rows)

    def summary(label: str) -> dict[str, float]:
        latencies = [row[f"{label}_s"] for row in rows]
        read = [row[f"{label}_prompt_n"] for row in rows if row[f"{label}_prompt_n"] is not None]
        cached = [row[f"{label}_cache_n"] for row in rows if row[f"{label}_cache_n"] is not None]
        return {
            "prompt_n_p50": percentile(read, 0.5),
            "cache_n_p50": percentile(cached, 0.5),
            "predicted_n_p50": percentile(
                [row[f"{label}_predicted_n"] for row in rows if row[f"{label}_predicted_n"]], 0.5
            ),
            "timed_out": sum(1 for row in rows if row[f"{label}_timed_out"]),
            "warm_ups": sum(row[f"{label}_warm_ups"] for row in rows),
            "exact_match": 100.0 * sum(row[f"{label}_exact"] for row in rows) / max(count, 1),
            "edit_similarity": statistics.fmean(row[f"{label}_similarity"] for row in rows)
            if rows
            else float("nan"),
            "latency_p50_s": percentile(latencies, 0.5),
            "latency_p95_s": percentile(latencies, 0.95),
            "empty": sum(1 for row in rows if row[f"{label}_empty"]),
        }

    index, plain = summary("index"), summary("plain")
    checks = {
        "exact_match_gain": index["exact_match"] - plain["exact_match"] >= GAIN_POINTS,
        "edit_similarity_gain": index["edit_similarity"] - plain["edit_similarity"] >= GAIN_POINTS,
        "latency_p50": index["latency_p50_s"] <= plain["latency_p50_s"] * (1 + LATENCY_SLACK),
    }
    return {
        "project": str(project),
        "lines": count,
        "seed": seed,
        "index": index,
        "plain": plain,
        "checks": checks,
        "passed": all(checks.values()),
        "dwell": args.dwell,
        "caret_hint": args.caret_hint,
        "typed": args.typed,
        "load_average": os.getloadavg(),
        "seconds": round(time.monotonic() - started, 1),
        "machine": machine(),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40, help="lines in the sample (40)")
    parser.add_argument("--seed", type=int, default=None, help="repeat a run's sample")
    parser.add_argument("--repo", default="", help="the project (default: the vendored one)")
    parser.add_argument("--timeout-s", type=float, default=120.0, help="per answer")
    parser.add_argument(
        "--tokens",
        type=int,
        default=None,
        help="[completion] codebase_context_tokens of the index server (default: the product's)",
    )
    parser.add_argument(
        "--model-url", default="", help="a running embedded model server (default: start one)"
    )
    parser.add_argument(
        "--no-dwell",
        dest="dwell",
        action="store_false",
        help="ask right after opening (default: wait for the open's warm-up and an idle model)",
    )
    parser.add_argument(
        "--no-caret-hint",
        dest="caret_hint",
        action="store_false",
        help="do not say where the caret goes after the open (qodeassist/didMoveCursor), as a"
        " generic LSP client: the open's warm-up is planned at the file's end",
    )
    parser.add_argument(
        "--typed",
        type=int,
        default=0,
        help="characters of the name typed before asking (0: cut right before it, as"
        " CrossCodeEval; the same lines for a seed whatever this is)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (with every line)")
    parser.add_argument("--verbose", action="store_true", help="print each line as it ends")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    print(
        f"repository-level completion: {result['lines']} lines of {result['project']}, "
        f"seed {result['seed']}"
    )
    for label in ("index", "plain"):
        s = result[label]
        print(
            f"  {label:5}  exact {s['exact_match']:5.1f}  similarity {s['edit_similarity']:5.1f}"
            f"  p50 {s['latency_p50_s']:.2f} s  p95 {s['latency_p95_s']:.2f} s"
            f"  empty {s['empty']} (timed out {s['timed_out']})  read p50"
            f" {s['prompt_n_p50']:.0f} new / {s['cache_n_p50']:.0f} cached tokens, wrote p50"
            f" {s['predicted_n_p50']:.0f}  warm-ups {s['warm_ups']}"
        )
    for check, ok in result["checks"].items():
        print(f"  {check}: {'pass' if ok else 'FAIL'}")
    print(
        f"  {result['seconds']} s on {result['machine']}, dwell {result['dwell']}, caret hint"
        f" {result['caret_hint']}, load average"
        f" at the end {' '.join(f'{x:.1f}' for x in result['load_average'])}"
    )


if __name__ == "__main__":
    main()
