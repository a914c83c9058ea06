"""``qodeassist-lsp acp`` with a stdin or stdout that is not a pipe: ``/dev/null``, a file.

The event loop's pipe transports refuse them (the agent hung on ``/dev/null``, a file was a
traceback): they are read by a thread and written with blocking writes, a file's requests are
answered, and the end of the input ends the agent with exit code 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tests.e2e.acp.conftest import agent_env

WITHIN_S = 60
"""Far longer than the agent takes; the old code hung on ``/dev/null`` until this ran out."""


def run_acp(home: Path, stdin: IO[Any], stdout: IO[Any] | int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qodeassist_lsp", "acp"],
        stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
        env=agent_env(home), cwd=home / "project", timeout=WITHIN_S, check=False,
    )  # fmt: skip


def requests_file(home: Path) -> Path:
    path = home / "requests.jsonl"
    new = {"cwd": str(home / "project"), "mcpServers": []}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n")
    return path


def answers(stdout: str) -> dict[Any, dict[str, Any]]:
    messages = [json.loads(line) for line in stdout.splitlines()]  # protocol only
    return {m.get("id"): m for m in messages if "method" not in m}


def test_stdin_from_dev_null_ends_the_agent_at_once(acp_home: Path) -> None:
    with open("/dev/null", "rb") as devnull:
        done = run_acp(acp_home, devnull, subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_a_file_of_requests_is_answered_then_the_agent_ends(acp_home: Path) -> None:
    with requests_file(acp_home).open("rb") as requests:
        done = run_acp(acp_home, requests, subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    answered = answers(done.stdout)
    assert answered[1]["result"]["protocolVersion"] == 1
    assert answered[2]["result"]["sessionId"]  # answered although the input had ended
    assert answered[None]["error"]["code"] == -32700  # the line that is not JSON
    assert "Traceback" not in done.stderr


def test_answers_written_to_a_file(acp_home: Path) -> None:
    out = acp_home / "answers.jsonl"
    with requests_file(acp_home).open("rb") as requests, out.open("wb") as stdout:
        done = run_acp(acp_home, requests, stdout)
    assert done.returncode == 0, done.stderr
    assert answers(out.read_text())[1]["result"]["protocolVersion"] == 1
    assert "Traceback" not in done.stderr
