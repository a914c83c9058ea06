"""Start-up and memory of the embedded model servers, one vs two (not part of the test run).

Run: .venv/bin/python benchmarks/embedded_servers.py [--runs N]
Starts ``embedded serve`` for the base model (completion) and for the instruct model (chat) on
free ports, as the launcher does, and prints a table: seconds from spawn to ``/health`` ready,
seconds from the request to the first streamed token (a completion for the base model, ``hi``
with the bundled chat persona for the instruct model), and resident memory (VmRSS) of each
server and of both together. Needs the ``local`` extra; the instruct model is fetched once.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

PERSONA = Path(__file__).parents[1] / "agents" / "personas" / "software-engineer.md"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start(bundled: str) -> tuple[subprocess.Popen[bytes], str, float]:
    port = free_port()
    command = [sys.executable, "-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port)]
    command += ["--bundled", bundled]
    began = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"{bundled}: the server exited with {process.returncode}")
        time.sleep(0.05)
    return process, url, time.monotonic() - began


def first_token(url: str, bundled: str) -> float:
    if bundled == "gemma3-270m":
        path = "/v1/completions"
        body: dict[str, object] = {"prompt": "def add(a, b):\n    return", "max_tokens": 16}
    else:
        path = "/v1/chat/completions"
        persona = PERSONA.read_text(encoding="utf-8")
        messages = [{"role": "system", "content": persona}, {"role": "user", "content": "hi"}]
        body = {"messages": messages, "max_tokens": 64}
    body |= {"model": bundled, "stream": True, "temperature": 0}
    began = time.monotonic()
    with httpx.stream("POST", url + path, json=body, timeout=120) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and json.loads(line[6:])["choices"]:
                return time.monotonic() - began
    return float("nan")


def stop(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGTERM)
    process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    rows: dict[str, list[tuple[float, float, float]]] = {}
    both: list[float] = []
    for _ in range(runs):
        servers = []
        for bundled in ("gemma3-270m", "smollm2-135m-instruct"):
            process, url, ready = start(bundled)
            token = first_token(url, bundled)
            rows.setdefault(bundled, []).append((ready, token, rss_mib(process.pid)))
            servers.append(process)
        both.append(sum(rss_mib(p.pid) for p in servers))
        for process in servers:
            stop(process)
    print(f"median of {runs} runs      | ready s | first token s | RSS MiB")
    print("-------------------------|---------|---------------|--------")
    for bundled, samples in rows.items():
        ready, token, rss = (statistics.median(column) for column in zip(*samples, strict=True))
        print(f"{bundled:<24} | {ready:7.2f} | {token:13.2f} | {rss:7.0f}")
    print(f"{'both servers':<24} |         |               | {statistics.median(both):7.0f}")


if __name__ == "__main__":
    main()
