from typing import Any

import pytest

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, CODE_COMPLETION, QUICK_REFACTOR
from qodeassist_lsp.core.content import TextBlock, user_text
from qodeassist_lsp.core.policy import policy_for
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.session_manager import POOL_SIZE
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.wire.tools import ToolSpec


class Noop:
    permission = "read"
    spec = ToolSpec("noop", "Does nothing")

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput("")


@pytest.fixture
async def runtime(tree):
    tree.write("config/agents/t.toml", 'name = "Tooled"\nextends = "Chat"\nenable_tools = true\n')
    rt = Runtime(tree.load())
    rt.contributors.add(lambda registry, _p: registry.register(Noop()))
    yield rt
    await rt.aclose()


async def test_acquired_sessions_are_reset_and_pooled_up_to_two(runtime) -> None:
    manager = runtime.sessions
    async with manager.acquire("Chat", CODE_COMPLETION) as first:
        first.history.append_blocks("r", [TextBlock("old answer")])
        first.system_prompt.set_layer("completion.context", "file info")
    async with manager.acquire("Chat", CODE_COMPLETION) as again:
        assert again is first
        assert len(again.history) == 0 and again.system_prompt.compose() == ""
        async with (
            manager.acquire("Chat", CODE_COMPLETION) as second,
            manager.acquire("Chat", CODE_COMPLETION) as third,
        ):
            assert len({id(again), id(second), id(third)}) == 3
    assert manager.idle_count("Chat", CODE_COMPLETION) == POOL_SIZE


async def test_tools_only_for_tool_agents_in_chat_and_refactor(runtime) -> None:
    assert len(runtime.sessions.create("Tooled", CHAT_ASSISTANT).tools) == 1
    assert len(runtime.sessions.create("Tooled", CODE_COMPLETION).tools) == 0
    assert len(runtime.sessions.create("Chat", CHAT_ASSISTANT).tools) == 0
    async with runtime.sessions.acquire("Tooled", QUICK_REFACTOR) as session:
        assert [s.name for s in session.tools.specs()] == ["noop"]


async def test_reload_flushes_pools_and_keeps_unchanged_providers(runtime, tree) -> None:
    async with runtime.sessions.acquire("Chat", CODE_COMPLETION):
        pass
    provider = runtime.provider("Local")
    await runtime.reload(tree.load())
    assert runtime.sessions.idle_count("Chat", CODE_COMPLETION) == 0
    assert runtime.provider("Local") is provider
    tree.write(
        "config/providers/local.toml",
        'name = "Local"\nclient_api = "llama.cpp"\nurl = "http://127.0.0.1:1"\n',
    )
    await runtime.reload(tree.load())
    assert runtime.provider("Local") is not provider


async def test_model_override_change_is_not_served_from_the_pool(runtime, tree) -> None:
    async with runtime.sessions.acquire("Chat", CODE_COMPLETION) as session:
        old = session
    tree.write("config/agent_models.json", '{"Chat": {"model": "bigger"}}')
    await runtime.reload(tree.load())
    async with runtime.sessions.acquire("Chat", CODE_COMPLETION) as session:
        assert session is not old and session.agent.model == "bigger"


def test_policies_follow_settings(tree) -> None:
    tree.write(
        "config/settings.toml",
        "[completion]\nconnect_timeout_s = 2\nrequest_timeout_s = 0\n"
        "[tools]\nmax_tool_continuations = 7\n",
    )
    settings = tree.load().settings
    completion = policy_for(CODE_COMPLETION, settings)
    assert completion.timeouts.connect == 2 and completion.timeouts.inactivity is None
    assert completion.retry.max_attempts == 1 and completion.max_tool_rounds == 7
    assert policy_for(CHAT_ASSISTANT, settings).retry.max_attempts > 1


async def test_unknown_agent(runtime) -> None:
    from qodeassist_lsp.core.agent import AgentNotAvailable

    with pytest.raises(AgentNotAvailable):
        runtime.sessions.create("Nope")
    assert user_text("x")


async def test_pools_are_per_pipeline(runtime) -> None:
    async with runtime.sessions.acquire("Chat", QUICK_REFACTOR) as refactor:
        pass
    async with runtime.sessions.acquire("Chat", CODE_COMPLETION) as completion:
        assert completion is not refactor
        assert completion.policy.retry.max_attempts == 1
