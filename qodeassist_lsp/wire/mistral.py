"""Mistral and Codestral (``/v1/chat/completions``, ``/v1/fim/completions``, ``/v1/models``).

The stream is OpenAI's chunk format, so parsing is `OpenAIChatParser`, which already knows
Mistral's differences: whole tool calls without ``index``/``type`` (and, in 2024, without
``id``), Magistral content arrays, ``model_length`` and ``error`` finish reasons, and usage
on the finish chunk. FIM streams use the same chunks. What is Mistral's own: tool messages in
the continuation carry the tool ``name``, and model cards say which models can do FIM.
"""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.parser import obj
from qodeassist_lsp.wire.tools import ToolResult
from qodeassist_lsp.wire.turns import AssistantTurn

MistralParser = openai_chat.OpenAIChatParser
tool_definitions = openai_chat.tool_definitions
parse_model_list = openai_chat.parse_model_list
next_models_page = openai_chat.next_models_page


def build_continuation(
    body: dict[str, Any], turn: AssistantTurn, results: list[ToolResult]
) -> dict[str, Any]:
    """Build the Chat Completions continuation with ``name`` on each tool message."""
    return openai_chat.build_continuation(body, turn, results, tool_message_name=True)


def fim_models(payload: object) -> list[str]:
    """Ids of the models whose card says ``capabilities.completion_fim``."""
    cards = payload if isinstance(payload, list) else obj(payload).get("data")
    if not isinstance(cards, list):
        return []
    return [
        card["id"]
        for card in cards
        if isinstance(card, dict)
        and isinstance(card.get("id"), str)
        and obj(card.get("capabilities")).get("completion_fim") is True
    ]
