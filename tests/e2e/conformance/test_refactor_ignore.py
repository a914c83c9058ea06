"""A quick refactor of a file ``.qodeassistignore`` lists is refused by the LSP and the CLI alike.

Completion and next edits never send such a file; a refactor (the LSP's ``qodeassist.refactor``
command, ``qodeassist-lsp refactor``) is refused with the same message before anything reaches
the provider, and the file is left as it was (issue 44: one ignore rule, the workbench's).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.acp.conftest import agent_env
from tests.e2e.conformance.doors import SECRET, lsp_server, make_home
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

REFUSAL = "secret.txt is excluded by .qodeassistignore"


@pytest.fixture
def replay() -> Any:
    with ReplayServer() as server:
        yield server


async def _via_lsp(home: Path) -> str:
    secret = home / "project/secret.txt"
    async with asyncio.timeout(60), lsp_server(home) as lsp:
        document = {"uri": secret.as_uri(), "languageId": "plaintext", "version": 1}
        await lsp.send(
            {
                "method": "textDocument/didOpen",
                "params": {"textDocument": {**document, "text": secret.read_text()}},
            }
        )
        where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}
        answer = await lsp.request(
            "workspace/executeCommand",
            {
                "command": "qodeassist.refactor",
                "arguments": [{"uri": secret.as_uri(), "range": where, "instruction": "shout"}],
            },
        )
    assert answer["result"]["applied"] is False, answer
    return str(answer["result"]["message"])


async def _via_cli(home: Path) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qodeassist_lsp",
        "refactor",
        "secret.txt",
        "--range",
        "1:1-1:4",
        "--instruction",
        "shout",
        env={**agent_env(home), "PYTHONIOENCODING": "utf-8"},
        cwd=home / "project",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode not in (0, None) and SECRET not in out.decode(), out.decode()
    return err.decode()


@pytest.mark.parametrize("door", ["lsp", "cli"])
async def test_refactoring_an_ignored_file_is_refused(
    door: str, tmp_path: Path, replay: ReplayServer
) -> None:
    home = make_home(tmp_path, replay)
    replay.script("/v1/chat/completions", chat_reply("TOP"))
    refusal = await (_via_lsp if door == "lsp" else _via_cli)(home)
    assert REFUSAL in refusal, refusal
    assert replay.requests == []  # nothing of the file reached the provider
    assert (home / "project/secret.txt").read_text() == f"{SECRET}\n"
