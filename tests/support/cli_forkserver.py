"""Run many ``qodeassist-lsp`` command lines as separate processes without paying the imports each time.

``python -m qodeassist_lsp …`` spends most of its ~1 s in imports. This script imports the CLI
once, then forks one child process per job; each child switches to the job's environment and
working directory, points file descriptors 1 and 2 at the job's output files and runs
``qodeassist_lsp.cli.main(argv)`` exactly like ``qodeassist_lsp/__main__.py`` does
(``raise SystemExit(main())``), so each job is a real, separate CLI process with its own event
loop, sockets and exit status.

Protocol: one JSON object on stdin, ``{"workers": n, "jobs": [{"argv", "env", "cwd",
"stdout", "stderr"}]}``; one JSON line per job on stdout when it ends, ``{"index", "exit"}``.
Run it as a script (``python tests/support/cli_forkserver.py``), with a single thread.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any


def _child(job: dict[str, Any]) -> int:
    os.environ.clear()
    os.environ.update(job["env"])
    os.chdir(job["cwd"])
    for fd, name in ((1, "stdout"), (2, "stderr")):
        target = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    from qodeassist_lsp.cli import main

    try:
        code: Any = main(job["argv"])
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # the real entry point would print a traceback and exit 1
        import traceback

        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _warm_up() -> None:
    """Import what any command needs, once, before forking (the expensive part)."""
    import importlib
    import pkgutil

    import qodeassist_lsp.cli

    build_parser = getattr(qodeassist_lsp.cli, "build_parser", None)
    if build_parser is not None:
        build_parser()  # imports the command modules it loads lazily

    # A module that cannot load here is the child's problem to report, not ours.
    def load(name: str) -> None:
        with contextlib.suppress(Exception):
            importlib.import_module(name)

    def load_all(package: str, walk: bool) -> None:
        module = importlib.import_module(f"qodeassist_lsp.{package}")
        find = pkgutil.walk_packages if walk else pkgutil.iter_modules
        for info in find(module.__path__, module.__name__ + "."):
            load(info.name)

    for package in ("cli", "config", "core", "wire"):
        load_all(package, walk=False)
    # What a `chat` imports only when it runs (the chat service, tool kit, HTTP transport):
    # about 0.4 s of every child otherwise, measured on a forked `chat --events jsonl`.
    for package in (
        "features.chat",
        "features.codebase",
        "context.codebase",
        "tools",
        "skills",
        "mcp",
        "workbench",
    ):
        load_all(package, walk=True)
    for name in ("httpcore", "h11", "anyio._backends._asyncio", "certifi", "sqlite3"):
        load(name)


def serve() -> None:
    """Read the batch from stdin, run it, report each exit status on stdout."""
    _warm_up()

    request = json.loads(sys.stdin.read())
    jobs: list[dict[str, Any]] = request["jobs"]
    workers = max(1, int(request.get("workers", 2)))
    running: dict[int, int] = {}
    pending = list(enumerate(jobs))
    out = sys.stdout
    while pending or running:
        while pending and len(running) < workers:
            index, job = pending.pop(0)
            out.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    status = _child(job)
                finally:
                    os._exit(status)
            running[pid] = index
        pid, status = os.wait()
        index = running.pop(pid)
        out.write(json.dumps({"index": index, "exit": os.waitstatus_to_exitcode(status)}) + "\n")
        out.flush()


if __name__ == "__main__":
    serve()
