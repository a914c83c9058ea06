"""Which agent completes a file, and whether it runs on this machine (the debounce asks)."""

from __future__ import annotations

import pytest

from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.core.router import NoAgentMatches
from qodeassist_lsp.features.completion.requests import CompletionRequest, CompletionResult
from qodeassist_lsp.features.completion.routing import pick_agent, route, serves_locally
from qodeassist_lsp.features.completion.stats import Outcome
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
    profile = pick_agent(config, request())
    assert profile.name == "Chat"
    assert serves_locally(config, profile)


def test_a_remote_provider_does_not_and_no_agent_is_an_error(tree: ConfigTree) -> None:
    tree.write("bundled/providers/remote.toml", REMOTE)
    tree.write(
        "bundled/agents/far.toml",
        'name = "Far"\nextends = "Chat"\nprovider_instance = "Remote"\n',
    )
    tree.write("bundled/pipelines.toml", '[pipelines]\ncode_completion = ["Far"]\n')
    config = tree.load()
    assert not serves_locally(config, pick_agent(config, request()))
    tree.write("bundled/pipelines.toml", "[pipelines]\ncode_completion = []\n")
    with pytest.raises(NoAgentMatches):
        pick_agent(tree.load(), request())
    refused = route(tree.load(), request())
    assert isinstance(refused, CompletionResult)
    assert refused.outcome is Outcome.ERROR and refused.error is not None


def test_where_it_runs_follows_the_provider_override(tree: ConfigTree) -> None:
    tree.write("bundled/providers/remote.toml", REMOTE)
    tree.write("bundled/pipelines.toml", '[pipelines]\ncode_completion = ["Chat"]\n')
    tree.write("config/agent_models.json", '{"Chat": {"provider_instance": "Remote"}}')
    config = tree.load()
    assert not serves_locally(config, pick_agent(config, request()))
    tree.write("config/agent_models.json", '{"Chat": {"provider_instance": "Nope"}}')
    config = tree.load()  # an unknown instance is a load warning: the agent keeps its own
    assert serves_locally(config, pick_agent(config, request()))
