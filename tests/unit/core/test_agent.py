import pytest

from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.core.agent import AgentFactory, AgentNotAvailable


def test_request_uses_model_url_and_body(tree) -> None:
    agent = AgentFactory(tree.load()).create("Chat")
    request = agent.build_request(
        complete_context({"history": [{"role": "user", "content": "hi"}]}), None
    )
    assert request.url == "http://127.0.0.1:9999/v1/chat/completions"
    assert request.headers == {"Content-Type": "application/json"}
    assert request.body == {
        "model": "m1",
        "stream": True,
        "temperature": 0.2,
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_model_override_and_model_placeholder(tree) -> None:
    tree.write(
        "config/providers/g.toml",
        'name = "G"\nclient_api = "Google AI"\n'
        'url = "https://generativelanguage.googleapis.com/v1beta"\n',
    )
    tree.write(
        "config/agents/g.toml",
        """
        name = "Gem"
        provider_instance = "G"
        model = "gemini-a"
        endpoint = "/models/${MODEL}:streamGenerateContent?alt=sse"
        [body]
        stream = true
        contents = []
    """,
    )
    tree.write("config/agent_models.json", '{"Gem": {"model": "gemini-b"}}')
    request = AgentFactory(tree.load()).create("Gem").build_request(complete_context(), "***")
    assert request.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/"
        "gemini-b:streamGenerateContent?alt=sse&key=%2A%2A%2A"
    )
    assert request.body == {"contents": []}  # Google: no model, no stream in the body


def test_provider_override(tree) -> None:
    tree.write(
        "config/providers/o.toml",
        'name = "Other"\nclient_api = "OpenAI Compatible"\nurl = "http://127.0.0.1:7777"\n',
    )
    tree.write("config/agent_models.json", '{"Chat": {"provider_instance": "Other"}}')
    agent = AgentFactory(tree.load()).create("Chat")
    assert (
        agent.build_request(complete_context(), "k").url
        == "http://127.0.0.1:7777/v1/chat/completions"
    )
    assert agent.build_request(complete_context(), "k").headers["Authorization"] == "Bearer k"


def test_unknown_or_abstract_agent(tree) -> None:
    factory = AgentFactory(tree.load())
    with pytest.raises(AgentNotAvailable, match="did you mean 'Chat'"):
        factory.create("Chta")
    with pytest.raises(AgentNotAvailable):
        factory.create("Wire Base")
