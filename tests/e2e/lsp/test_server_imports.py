"""What the real server imports to serve completions (issue 46's memory budget).

The server runs with ``PYTHONPROFILEIMPORTTIME=1``, so its stderr (captured at the file
descriptor, which the server inherits) names every module it imports; after ``initialize``, the
loaded configuration and a completion, modules no completion needs must not be among them.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_inline_completion import open_doc, params
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply

CHAT_TOOLS = (
    "qodeassist_lsp.tools.kit",
    "qodeassist_lsp.tools.edits.file_tools",
    "qodeassist_lsp.skills.load_skill_tool",
)
"""Modules only a chat session's tools need."""


@pytest.fixture(autouse=True)
def importtime(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch, extra={"PYTHONPROFILEIMPORTTIME": "1"})
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\nprefetch_after_accept = false\n"
        # No indexer child: it inherits the environment, and its imports would be mixed in.
        "[codebase]\nenabled = false\n"
    )


def imported(err: str) -> set[str]:
    """The module names of ``-X importtime`` lines (``import time: self | total | name``)."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in err.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


async def ready(client: Any) -> None:
    for _ in range(500):
        status = await client.protocol.send_request_async("qodeassist/status", {})
        if getattr(status, "state", None) in ("ready", "degraded"):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the configuration never loaded: {status}")


async def modules_after_a_completion(
    client: Any, lsp_home: Path, replay: ReplayServer, capfd: pytest.CaptureFixture[str]
) -> set[str]:
    """Start the session, answer one completion, and return the modules the server imported."""
    replay.script("/v1/completions", completion_reply("a + b"))
    await client.initialize_session(client.init_params)
    await ready(client)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert isinstance(answer, types.InlineCompletionList) and answer.items
    return imported(capfd.readouterr().err)


async def test_a_completion_never_imports_httpx_command_line_client(
    client: Any, lsp_home: Path, replay: ReplayServer, capfd: pytest.CaptureFixture[str]
) -> None:
    """With rich installed (the test extra), httpx's CLI would bring rich, click and pygments."""
    assert importlib.util.find_spec("rich") is not None, "the test needs rich installed"
    modules = await modules_after_a_completion(client, lsp_home, replay, capfd)
    assert "httpx" in modules and "pygls" in modules, sorted(modules)[:20]
    # ``httpx._main`` itself is listed: its import is tried and fails, as without rich.
    assert not {"rich", "pygments", "click"} & modules


async def test_the_chat_tools_are_imported_with_the_first_chat_not_for_completions(
    client: Any, lsp_home: Path, replay: ReplayServer, capfd: pytest.CaptureFixture[str]
) -> None:
    """The tool kit, file tools and skill tool are wired into the first session that has tools."""
    modules = await modules_after_a_completion(client, lsp_home, replay, capfd)
    assert "qodeassist_lsp.features.completion.service" in modules, sorted(modules)[-20:]
    assert not set(CHAT_TOOLS) & modules
