"""The process-provider base: prompts from the rendered body, a missing program."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.core import provider as provider_module
from qodeassist_lsp.core.agent_process.base import ProcessConfigError, program_of, prompt_of
from qodeassist_lsp.core.agent_process.factory import make_provider
from qodeassist_lsp.wire.errors import ErrorCategory


def test_the_latest_user_message_and_the_conversation_before_it() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "persona"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "answer"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ]
    }
    assert prompt_of(body) == ("second", "user: first\n\nassistant: answer")
    assert prompt_of({"messages": []}) == ("", "")


def test_a_missing_program_names_its_npm_package() -> None:
    instance = ProviderInstance(
        name="X", client_api="ACP Agent", command=("no-such-agent-qa",), package="@x/agent"
    )
    with pytest.raises(ProcessConfigError) as missing:
        program_of(instance)
    assert missing.value.info.category is ErrorCategory.CONFIG
    assert "npm install -g @x/agent" in missing.value.info.message


async def test_a_process_provider_opens_no_http_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[object] = []
    monkeypatch.setattr(provider_module, "make_http_client", lambda **kw: opened.append(kw))
    for api in ("Claude Code", "Gemini CLI", "ACP Agent"):
        instance = ProviderInstance(name=api, client_api=api, command=("agent",))
        process = make_provider(instance, SecretStore(tmp_path))
        await process.aclose()
    assert opened == []
