"""The config tables' rows name every field: a positional ``True, True`` says nothing."""

from __future__ import annotations

import dataclasses

import pytest

from qodeassist_lsp.config.client_apis import CLIENT_APIS, ClientApi
from qodeassist_lsp.config.pipelines import PIPELINE_TABLE, PipelineSpec, ToolAccess
from qodeassist_lsp.wire.protocols import WireProtocol


@pytest.mark.parametrize("row_type", [PipelineSpec, ClientApi])
def test_every_field_of_a_table_row_is_keyword_only(row_type: type) -> None:
    assert all(field.kw_only for field in dataclasses.fields(row_type))


def test_a_row_with_positional_values_is_refused() -> None:
    with pytest.raises(TypeError):
        PipelineSpec("x", "x", False, "chat", False, ToolAccess.NONE, "x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ClientApi("X", WireProtocol.OPENAI_CHAT, "/c", "/m", True, True)  # type: ignore[call-arg]


def test_the_rows_keep_their_facts() -> None:
    assert [spec.slot for spec in PIPELINE_TABLE][:2] == ["code_completion", "chat_assistant"]
    ollama = CLIENT_APIS["Ollama (OpenAI-compatible)"]
    assert ollama.openai_family and ollama.key_optional and not ollama.process
    assert CLIENT_APIS["OpenRouter"].openai_family and not CLIENT_APIS["OpenRouter"].key_optional
    assert len(CLIENT_APIS) == 16
