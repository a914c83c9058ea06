"""The process-provider base: prompts from the rendered body, a missing program."""

from __future__ import annotations

import pytest

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.core.agent_process.base import ProcessConfigError, program_of, prompt_of
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
