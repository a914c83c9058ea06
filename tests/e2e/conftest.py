"""End-to-end fixtures: a loopback replay provider and a user configuration pointing at it.

Loading the bundled configuration (60+ agents, each dry-rendered) costs ~0.4 s, so the server,
the configuration roots and the loaded `Configuration` live per module; every test gets the
server reset (no routes, no recorded requests) and its own `Runtime`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.core.runtime import Runtime
from tests.support.replay_server import ReplayServer
from tests.support.workspace import PLANTED_KEY, PROVIDERS, Workspace


@pytest.fixture(scope="module")
def shared_replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server
    assert not server.errors, server.errors
    assert server.open_connections == 0


@pytest.fixture
def replay(shared_replay: ReplayServer) -> Iterator[ReplayServer]:
    """The module's replay server, with no routes and no recorded requests."""
    shared_replay.reset()
    yield shared_replay
    assert not shared_replay.errors, shared_replay.errors


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, shared_replay: ReplayServer) -> Workspace:
    """Config and data roots whose provider instances all point at the replay server."""
    return Workspace(tmp_path_factory.mktemp("workspace"), shared_replay.url)


@pytest.fixture(scope="module")
def configuration(workspace: Workspace) -> Configuration:
    return workspace.load()


@pytest.fixture
def planted_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    """Put the planted key in every provider's key variable of this process (in-process tests)."""
    for provider in PROVIDERS.values():
        monkeypatch.setenv(provider.key_env, PLANTED_KEY)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    return PLANTED_KEY


@pytest.fixture
async def runtime(configuration: Configuration, planted_keys: str) -> AsyncIterator[Runtime]:
    """The core built from the workspace configuration; closed after the test."""
    runtime = Runtime(configuration)
    yield runtime
    await runtime.aclose()
