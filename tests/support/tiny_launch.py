"""A tiny HTTP server to start as a ``[launch]`` command, and helpers to watch its processes.

The server answers ``/health`` (optionally 503 while "loading", or another status), lists one
model and streams "pong" for any chat request; flags make it crash, hang or ignore SIGTERM, and
it logs each spawn and each probe to files so tests can count them.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from qodeassist_lsp.config.providers import LaunchConfig
from qodeassist_lsp.core.launcher.supervisor import ProviderLauncher

TINY_SERVER = r"""
import argparse, json, os, signal, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--spawn-log")
parser.add_argument("--probe-log")
parser.add_argument("--report")
parser.add_argument("--exit", type=int)
parser.add_argument("--delay", type=float, default=0.0)
parser.add_argument("--ready-after", type=float, default=0.0)
parser.add_argument("--status", type=int, default=200)
parser.add_argument("--ignore-term", action="store_true")
parser.add_argument("--progress", action="store_true", help="print download progress lines first")
parser.add_argument("extra", nargs="*")
args = parser.parse_args()
started = time.monotonic()
if args.spawn_log:
    with open(args.spawn_log, "a") as log:
        log.write(f"{os.getpid()}\n")
if args.report:
    with open(args.report, "w") as report:
        json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}, report)
if args.progress:
    for percent in (0, 50, 100):
        print(f"tiny: progress: {percent}% downloading model.gguf: {percent} of 100 MiB", flush=True)
        time.sleep(0.05)
if args.exit is not None:
    print("tiny: loading the model failed: model.gguf is not a GGUF file", flush=True)
    print("tiny: giving up", file=sys.stderr, flush=True)
    sys.exit(args.exit)
if args.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(args.delay)

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, status, body, kind="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            if args.probe_log:
                with open(args.probe_log, "a") as log:
                    log.write("probe\n")
            ready = time.monotonic() - started >= args.ready_after
            status = args.status if ready else 503
            self._send(status, json.dumps({"status": "ok" if status == 200 else "loading"}))
        elif self.path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": "tiny"}]}))
        else:
            self._send(404, "{}")

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "pong"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, body, "text/event-stream")

server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print(f"tiny: listening on {args.port}", flush=True)
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Tiny:
    """Builds launch configurations for the tiny server in one temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.script = root / "tiny_server.py"
        self.script.write_text(TINY_SERVER, encoding="utf-8")
        self.spawn_log = root / "spawns.log"
        self.probe_log = root / "probes.log"
        self.run_dir = root / "run"
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self, *extra: str, **fields: Any) -> LaunchConfig:
        values: dict[str, Any] = {
            "command": sys.executable,
            "args": [
                str(self.script),
                "--port",
                str(self.port),
                "--spawn-log",
                str(self.spawn_log),
                "--probe-log",
                str(self.probe_log),
                *extra,
            ],
            "ready_url": f"{self.url}/health",
            "ready_timeout_s": 10.0,
            "auto_start": True,
        }
        values.update(fields)
        return LaunchConfig.model_validate(values)

    def provider_file(self, name: str, *extra: str) -> str:
        """A llama.cpp provider instance ``name`` whose ``[launch]`` runs this tiny server."""
        args = [str(self.script), "--port", str(self.port), *extra]
        return (
            f'name = "{name}"\nclient_api = "llama.cpp"\nurl = "{self.url}"\n\n'
            f"[launch]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(args)}\n"
            f'ready_url = "{self.url}/health"\nready_timeout_s = 20\nauto_start = true\n'
        )

    def launcher(self, *extra: str, name: str = "Tiny", **fields: Any) -> ProviderLauncher:
        return ProviderLauncher(
            name,
            self.config(*extra, **fields),
            run_dir=self.run_dir,
            probe_interval_s=0.1,
            stop_grace_s=2.0,
        )

    def probes(self) -> int:
        """How many readiness probes the server has answered."""
        if not self.probe_log.exists():
            return 0
        return len(self.probe_log.read_text().split())

    def spawns(self) -> list[int]:
        if not self.spawn_log.exists():
            return []
        return [int(line) for line in self.spawn_log.read_text().split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    if not Path("/proc/self/stat").exists():
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # an unreaped zombie has exited


async def health(url: str) -> int | None:
    async with httpx.AsyncClient(trust_env=False) as client:
        try:
            return (await client.get(f"{url}/health", timeout=2)).status_code
        except httpx.HTTPError:
            return None


async def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False
