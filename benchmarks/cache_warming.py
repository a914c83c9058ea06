"""Idle cache warming: first-answer latency after opening a file, warming on and off (not a test).

Run: .venv/bin/python benchmarks/cache_warming.py [--idle-ms 1500] [--warm-ms 300] [--json]

With ``[completion] warm_idle_ms`` set, a server idle for that long sends the last active
document's completion agent, when it runs on a loopback provider and uses the extra context,
one request with the extra-context ring and an empty prefix/suffix, closed at its first event:
the model server has then processed (and cached) the ring, so the next real request reuses it.
This measures what that buys where it should matter most: the first keys typed in a file just
opened (opening a file adds its first lines to the ring, so the ring changed).

One embedded model server (``qodeassist-lsp embedded serve``, started once and sent a request
first, so model loading counts for neither side) behind the typing replay's `Proxy`, which
reads llama.cpp's ``prompt_n`` (tokens processed) and ``cache_n`` (reused) per request. Per
configuration (``warm``: ``warm_idle_ms = --warm-ms``; ``cold``: ``0``) a fresh language server on
its own config home: a user agent like the bundled Embedded Completion whose prompt puts the
extra context first (the bundled one does not use it), routed by ``pipelines.toml``, and a ring
small enough for the model's 2,048 tokens (``extra_context_tokens = 512``, 24-line chunks).
Each configuration's files live under its own home, so the chunk headers (file paths) differ
and neither reuses the other's prompts from llama.cpp's prompt cache.

The sequence, per real source file (FILES, from the pinned installed packages): open the text
up to the first non-trivial line from ``--line`` plus that line's indentation (as the typing
replay does), wait ``--idle-ms`` (reading the file), type the line's first two characters at
``--keys-per-second`` with one automatic request per key (the previous one cancelled), and
take the answer to the last key: its latency and the ``prompt_n``/``cache_n`` of the upstream
request that answered (the last one posted before the answer). Then ``--pause-ms`` and the next
file; documents stay open. ``idle`` counts the upstream requests posted during the idle wait
(warm-ups) and the prompt tokens they processed ("-": none reported counts, as a warm-up the
next key's request replaced before its first token does not). ``warmUps`` is the server's own
count (``qodeassist/status``), so a configuration that never warmed shows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.rpc_client import RpcError
from benchmarks.typing_replay import (
    SITE,
    Proxy,
    Server,
    free_port,
    median,
    start_model,
    targets,
)
from qodeassist_lsp.features.completion.settings import CompletionSettings
from tests.support.streams import write_embedded_instances

# Real code nobody here wrote, from the pinned packages (jinja2 3.1.6, httpx 0.28).
FILES = (
    "jinja2/lexer.py",
    "jinja2/parser.py",
    "jinja2/compiler.py",
    "jinja2/nodes.py",
    "httpx/_client.py",
    "httpx/_models.py",
)
AGENT_NAME = "Embedded Completion With Context"
# The bundled Embedded Completion's prompt with the extra context (header + lines) first.
PROMPT = (
    "{% set ring %}{% for f in ctx.files_metadata %}{{ f.header }}{{ f.content }}{% endfor %}"
    '{% endset %}{{ (ring ~ ((ctx.prefix or "").split("\\n")[-60:] | join("\\n"))) | tojson }}'
)
AGENT = f"""schema_version = 1
name    = "{AGENT_NAME}"
extends = "Embedded Base Completions"
model   = "gemma3-270m"
tags    = ["completion", "embedded", "local"]

[body]
prompt      = {json.dumps(PROMPT)}
max_tokens  = 64
temperature = 0
seed        = 42
stop        = ["\\n\\n"]
"""
SETTINGS = """[completion]
extra_context_tokens = 512
extra_context_chunk_lines = 24
warm_idle_ms = {warm}
"""


def write_home(home: Path, url: str, warm_ms: int) -> None:
    """A config home: the Embedded instances at ``url``, the agent, its pipeline, settings."""
    for name in ("config/agents", "data", "project"):
        (home / name).mkdir(parents=True)
    write_embedded_instances(home / "config" / "providers", url)
    (home / "config" / "agents" / "completion_with_context.toml").write_text(AGENT)
    pipelines = f'[pipelines]\ncode_completion = ["{AGENT_NAME}"]\n'
    (home / "config" / "pipelines.toml").write_text(pipelines)
    (home / "config" / "settings.toml").write_text(SETTINGS.format(warm=warm_ms))


async def type_file(server: Server, proxy: Proxy, relative: str, args: Any) -> dict[str, Any]:
    """Open ``relative``, idle, type two keys; the last key's answer and its prompt counts."""
    lines = (SITE / relative).read_text(encoding="utf-8").splitlines()
    target = targets(lines, args.line, 1, 2)[0]
    path = server.home / "project" / relative.replace("/", "_")
    opened = "".join(line + "\n" for line in lines[: target.number]) + target.indent
    path.write_text(opened, encoding="utf-8")
    uri = server.open(path, "python", opened)
    before_idle = len(proxy.requests)
    await asyncio.sleep(args.idle_ms / 1000)
    idle = proxy.requests[before_idle:]
    task, sent, _ = await server.type_keys(uri, target, 1 / args.keys_per_second)
    with contextlib.suppress(RpcError, TimeoutError):
        await asyncio.wait_for(task, args.timeout)
    answered = time.monotonic()
    posted = [r for r in proxy.requests if r.posted <= answered]
    timings = (posted[-1].timings or {}) if posted else {}
    await asyncio.sleep(args.pause_ms / 1000)
    reported = [r for r in idle if r.timings]  # a warm-up closed before its first token: none
    return {
        "file": Path(relative).name,
        "line": target.number + 1,
        "ms": round((answered - sent) * 1000),
        "prompt_n": timings.get("prompt_n"),
        "cache_n": timings.get("cache_n"),
        "idle_requests": len(idle),
        "idle_prompt_n": sum(r.timings.get("prompt_n", 0) for r in reported) if reported else None,
    }


async def configuration(home: Path, proxy: Proxy, warm_ms: int, args: Any) -> dict[str, Any]:
    """One fresh language server through the file sequence; its answers and warm-up count."""
    write_home(home, proxy.url, warm_ms)
    proxy.reset()
    server = Server(home)
    await server.start()
    try:
        files = [await type_file(server, proxy, relative, args) for relative in FILES]
        assert server.client is not None
        status = await server.client.request("qodeassist/status", {})
    finally:
        await server.stop()
    prompts = [f["prompt_n"] for f in files if f["prompt_n"] is not None]
    return {
        "warm_idle_ms": warm_ms,
        "warm_ups": ((status or {}).get("completion") or {}).get("warmUps"),
        "p50_ms": round(median([f["ms"] for f in files])),
        "prompt_tokens_median": median(prompts),
        "upstream_requests": proxy.started,
        "files": files,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    model_port = free_port()
    model = await asyncio.to_thread(start_model, model_port)
    proxy = Proxy(model_port)
    await proxy.start()
    out: dict[str, Any] = {"idle_ms": args.idle_ms, "configurations": {}}
    try:
        async with httpx.AsyncClient(timeout=args.timeout) as client:
            body = {"model": "gemma3-270m", "prompt": "def main():\n", "max_tokens": 8}
            await client.post(f"http://127.0.0.1:{model_port}/v1/completions", json=body)
        with tempfile.TemporaryDirectory(prefix="cache-warming-") as tmp:
            for name, warm_ms in (("warm", args.warm_ms), ("cold", 0)):
                print(f"{name}: warm_idle_ms = {warm_ms}…", file=sys.stderr)
                result = await configuration(Path(tmp) / name, proxy, warm_ms, args)
                out["configurations"][name] = result
    finally:
        await proxy.close()
        model.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            model.wait(10)
    warm, cold = (out["configurations"][name]["p50_ms"] for name in ("warm", "cold"))
    out["p50_ratio_warm_to_cold"] = round(warm / cold, 2) if cold else None
    return out


COLUMNS = (
    ("file", "file"),
    ("line", "line"),
    ("ms", "ms"),
    ("prompt tok", "prompt_n"),
    ("cached tok", "cache_n"),
    ("idle req", "idle_requests"),
    ("idle prompt tok", "idle_prompt_n"),
)


def cell(value: Any) -> str:
    return "-" if value is None else value if isinstance(value, str) else f"{value:g}"


def print_tables(out: dict[str, Any]) -> None:
    for name, c in out["configurations"].items():
        print(
            f"\n{name}: warm_idle_ms = {c['warm_idle_ms']}, warmUps {c['warm_ups']}, "
            f"upstream requests {c['upstream_requests']}"
        )
        rows = [tuple(title for title, _ in COLUMNS)]
        rows += [tuple(cell(f[key]) for _, key in COLUMNS) for f in c["files"]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
        for r in rows:
            cells = enumerate(zip(r, widths, strict=True))
            print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in cells))
        print(f"p50 latency {c['p50_ms']} ms, median prompt tokens {c['prompt_tokens_median']:g}")
    print(
        f"\nwarm/cold p50 latency: {out['p50_ratio_warm_to_cold']}"
        f" (idle {out['idle_ms']:g} ms after each open)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle-ms", type=float, default=1500, help="idle after opening (1500)")
    parser.add_argument(
        "--warm-ms",
        type=int,
        default=CompletionSettings().warm_idle_ms,
        help="warm_idle_ms when on (the product default)",
    )
    parser.add_argument("--line", type=int, default=80, help="typed line, 0-based, or the next")
    parser.add_argument("--keys-per-second", type=float, default=8.0, help="typing speed (8)")
    parser.add_argument("--pause-ms", type=float, default=500, help="pause after an answer")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per answer")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args()
    out = asyncio.run(run(args))
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_tables(out)


if __name__ == "__main__":
    main()
