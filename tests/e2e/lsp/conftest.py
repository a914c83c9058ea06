"""Drive the real server process over stdio with pytest-lsp and real editor capabilities."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.support.replay_server import ReplayServer
from tests.support.streams import write_embedded_instances


@pytest.fixture
def lsp_home(tmp_path: Path) -> Path:
    """A config root, data root and workspace for one server run."""
    for name in ("config/agents", "config/providers", "data", "project"):
        (tmp_path / name).mkdir(parents=True)
    return tmp_path


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    """A loopback provider of this test's own (the e2e-wide one is shared between tests)."""
    with ReplayServer() as server:
        yield server


def serve_from(
    home: Path,
    replay: ReplayServer,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, str] | None = None,
) -> None:
    """Point both embedded instances at ``replay`` and the server's environment at ``home``."""
    write_embedded_instances(home / "config/providers", replay.url)
    for key, value in server_env(home, extra).items():
        monkeypatch.setenv(key, value)


def server_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        # Nothing of the machine's own ~/.claude/skills (or other home state) leaks in.
        "HOME": str(home),
        "QODEASSIST_CONFIG_DIR": str(home / "config"),
        "QODEASSIST_DATA_DIR": str(home / "data"),
        "QODEASSIST_LOG_LEVEL": "INFO",
    }
    env.update(extra or {})
    return env


def client_factory() -> LanguageClient:
    client = pytest_lsp.make_test_lsp_client()
    client.statuses = []  # type: ignore[attr-defined]

    @client.feature("qodeassist/status")
    def on_status(ls: LanguageClient, params: Any) -> None:
        ls.statuses.append(params)  # type: ignore[attr-defined]

    # A client that offers dynamic registration (VS Code's capabilities) answers it: the server
    # asks for a file watcher when a feature follows files on disk (the codebase index).
    client.registrations = []  # type: ignore[attr-defined]
    client.registered = asyncio.Event()  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(ls: LanguageClient, params: types.RegistrationParams) -> None:
        ls.registrations.extend(params.registrations)  # type: ignore[attr-defined]
        ls.registered.set()  # type: ignore[attr-defined]

    return client


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "qodeassist_lsp"],
        client_factory=client_factory,
    )
)
async def client(
    lsp_client: LanguageClient, lsp_home: Path, request: pytest.FixtureRequest
) -> AsyncIterator[LanguageClient]:
    editor = getattr(request, "param", "neovim")
    capabilities = pytest_lsp.client_capabilities(editor)
    lsp_client.init_params = types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=capabilities,
        root_uri=(lsp_home / "project").as_uri(),
        workspace_folders=[types.WorkspaceFolder((lsp_home / "project").as_uri(), "project")],
        # No warm-up of the cursor window: the tests script every upstream request (the
        # warming tests turn it on).
        initialization_options={
            "qodeassist": {"completion": {"lines_before": 12, "warm_cursor_window": False}}
        },
    )
    yield lsp_client
    await stop_server(lsp_client)


async def stop_server(client: LanguageClient) -> None:
    """End the server even when the test failed half-way (pytest-lsp would wait forever)."""
    import asyncio
    import contextlib

    process = client._server
    if process is None or process.returncode is not None:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.shutdown_session(), 5)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(process.wait(), 5)
    if process.returncode is None:
        process.kill()
        await process.wait()


def open_file(client: LanguageClient, path: Path, language: str) -> str:
    """Open ``path`` in the client with its text on disk; return its URI."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, path.read_text()))
    )
    return uri


async def published_diagnostics(
    client: LanguageClient, uri: str, *, cleared: bool = False
) -> list[types.Diagnostic]:
    """Wait (up to 60 s) for diagnostics of ``uri``: some, or with ``cleared`` an empty list.

    The deadline only catches a server that never publishes: a reload after a save takes
    seconds on a loaded machine, and the test should not fail for that.
    """
    from tests.support.waiting import until

    def published() -> bool:
        found = client.diagnostics.get(uri)
        return found is not None and bool(found) != cleared

    await until(published)
    return list(client.diagnostics.get(uri) or [])
