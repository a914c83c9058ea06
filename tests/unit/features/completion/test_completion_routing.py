"""Which agent completes a file, and whether it runs on this machine (the debounce asks)."""

from __future__ import annotations

import pytest

from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.core.router import NoAgentMatches
from qodeassist_lsp.features.completion.requests import CompletionRequest
from qodeassist_lsp.features.completion.routing import pick_agent, serves_locally
from tests.unit.conftest import ConfigTree

REMOTE = """
name = "Remote"
client_api = "OpenAI Compatible"
url = "https://api.example.com/v1"
api_key_env = "TEST_REMOTE_KEY"
"""


def request(name: str = "a.py") -> CompletionRequest:
    return CompletionRequest(Document(f"file:///p/{name}", "x = 1\n"), 0, 5)


def test_an_agent_on_a_loopback_provider_serves_locally(tree: ConfigTree) -> None:
    tree.write("bundled/pipelines.toml", '[pipelines]\ncode_completion = ["Chat"]\n')
    config = tree.load()
    assert pick_agent(config, request()).name == "Chat"
    assert serves_locally(config, request())


def test_a_remote_provider_or_no_agent_does_not(tree: ConfigTree) -> None:
    tree.write("bundled/providers/remote.toml", REMOTE)
    tree.write(
        "bundled/agents/far.toml",
        'name = "Far"\nextends = "Chat"\nprovider_instance = "Remote"\n',
    )
    tree.write("bundled/pipelines.toml", '[pipelines]\ncode_completion = ["Far"]\n')
    config = tree.load()
    assert not serves_locally(config, request())
    tree.write("bundled/pipelines.toml", "[pipelines]\ncode_completion = []\n")
    empty = tree.load()
    with pytest.raises(NoAgentMatches):
        pick_agent(empty, request())
    assert not serves_locally(empty, request())
