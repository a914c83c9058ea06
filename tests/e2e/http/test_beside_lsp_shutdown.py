"""``serve --stdio --http`` ends cleanly: the editor closing stdin, or sending ``exit``, stops
uvicorn in order (no ``CancelledError`` traceback from its lifespan task)."""

from __future__ import annotations

import asyncio
import sys

from tests.e2e.http.conftest import free_port
from tests.e2e.http.test_beside_lsp import Lsp
from tests.support.workspace import Workspace

WITHIN_S = 60


async def start(workspace: Workspace) -> tuple[asyncio.subprocess.Process, bytearray]:
    """Start the server and return it once the HTTP API listens, with the log read so far."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "qodeassist_lsp", "serve", "--stdio",
        "--http", f"127.0.0.1:{free_port()}",
        env={**workspace.env, "QODEASSIST_HTTP_TOKEN": "shutdown-token"}, cwd=workspace.project,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    log = bytearray()
    while b"#token=" not in log:  # printed once uvicorn has started, its lifespan running
        line = await process.stderr.readline()
        assert line, f"serve ended before listening: {log.decode()}"
        log += line
    return process, log


async def ended(process: asyncio.subprocess.Process, log: bytearray) -> tuple[int, str]:
    """Return the exit code and the whole log once the server has exited."""
    assert process.stderr is not None
    log += await process.stderr.read()
    return await process.wait(), log.decode()


async def test_the_end_of_stdin_stops_the_http_api_without_a_traceback(
    workspace: Workspace,
) -> None:
    process, log = await start(workspace)
    try:
        async with asyncio.timeout(WITHIN_S):
            assert process.stdin is not None
            process.stdin.close()
            code, text = await ended(process, log)
        assert code == 1, text  # the session ended without `shutdown`
        assert "Traceback" not in text and "CancelledError" not in text, text
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_shutdown_and_exit_stop_the_http_api_without_a_traceback(
    workspace: Workspace,
) -> None:
    process, log = await start(workspace)
    try:
        async with asyncio.timeout(WITHIN_S):
            editor = Lsp(process)
            initialize = {"processId": None, "rootUri": workspace.project.as_uri()}
            await editor.request("initialize", {**initialize, "capabilities": {}})
            await editor.send({"method": "initialized", "params": {}})
            await editor.request("shutdown", None)
            await editor.send({"method": "exit"})
            code, text = await ended(process, log)
        assert code == 0, text
        assert "Traceback" not in text and "CancelledError" not in text, text
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
