#!/usr/bin/env python3
"""A stand-in ``claude`` executable: replays a recorded ``--output-format stream-json`` session.

The test puts it on PATH as ``claude``. It reads the prompt from stdin, appends
``{"argv": [...], "prompt": ..., "pid": ...}`` as a JSON line to ``$CLAUDE_STANDIN_LOG`` (when set), then
prints the lines of ``$CLAUDE_STANDIN_RECORDING`` (a file under tests/fixtures/claude_code/)
with a short pause between them, as Claude Code would while it works. ``$CLAUDE_STANDIN_HANG``
set: after the first line it waits forever (a run that is cancelled). Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/claude_code"


def main() -> int:
    prompt = sys.stdin.read()
    log = os.environ.get("CLAUDE_STANDIN_LOG")
    if log:
        with Path(log).open("a", encoding="utf-8") as out:
            out.write(
                json.dumps({"argv": sys.argv[1:], "prompt": prompt, "pid": os.getpid()}) + "\n"
            )
    name = os.environ.get("CLAUDE_STANDIN_RECORDING", "stream_json_tool_use_SYNTHETIC.jsonl")
    for index, line in enumerate((FIXTURES / name).read_text(encoding="utf-8").splitlines()):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if index == 0 and os.environ.get("CLAUDE_STANDIN_HANG"):
            time.sleep(3600)
        time.sleep(0.01)
    return 0


if __name__ == "__main__":
    sys.exit(main())
