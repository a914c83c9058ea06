"""Which parser, tool shape, continuation builder and model list each protocol uses.

The parser depends on the endpoint as well as the protocol: llama.cpp's ``/infill`` streams
native objects while its ``/v1/chat/completions`` streams OpenAI chunks, and Ollama serves
both NDJSON (``/api/*``) and OpenAI-compatible SSE (``/v1/*``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from qodeassist_lsp.wire import (
    anthropic,
    google,
    llamacpp,
    mistral,
    ollama,
    openai_chat,
    openai_responses,
)
from qodeassist_lsp.wire.errors import ErrorContext
from qodeassist_lsp.wire.parser import IdFactory, StreamParser
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.tools import ToolResult, ToolSpec, new_tool_call_id
from qodeassist_lsp.wire.turns import AssistantTurn

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProtocolAPI:
    """The request-side shapes of one wire protocol."""

    models_endpoint: str
    tool_definitions: Callable[[list[ToolSpec]], list[dict[str, Any]]]
    build_continuation: Callable[[Body, AssistantTurn, list[ToolResult]], Body]
    parse_model_list: Callable[[object], list[str]]
    next_models_page: Callable[[str, object], str | None]


_APIS: dict[WireProtocol, ProtocolAPI] = {
    WireProtocol.ANTHROPIC: ProtocolAPI(
        anthropic.MODELS_ENDPOINT,
        anthropic.tool_definitions,
        anthropic.build_continuation,
        anthropic.parse_model_list,
        anthropic.next_models_page,
    ),
    WireProtocol.OPENAI_CHAT: ProtocolAPI(
        openai_chat.MODELS_ENDPOINT,
        openai_chat.tool_definitions,
        openai_chat.build_continuation,
        openai_chat.parse_model_list,
        openai_chat.next_models_page,
    ),
    WireProtocol.OPENAI_RESPONSES: ProtocolAPI(
        openai_responses.MODELS_ENDPOINT,
        openai_responses.tool_definitions,
        openai_responses.build_continuation,
        openai_responses.parse_model_list,
        openai_responses.next_models_page,
    ),
    WireProtocol.GOOGLE: ProtocolAPI(
        google.MODELS_ENDPOINT,
        google.tool_definitions,
        google.build_continuation,
        google.parse_model_list,
        google.next_models_page,
    ),
    WireProtocol.OLLAMA: ProtocolAPI(
        ollama.MODELS_ENDPOINT,
        ollama.tool_definitions,
        ollama.build_continuation,
        ollama.parse_model_list,
        ollama.next_models_page,
    ),
    WireProtocol.MISTRAL: ProtocolAPI(
        mistral.MODELS_ENDPOINT,
        mistral.tool_definitions,
        mistral.build_continuation,
        mistral.parse_model_list,
        mistral.next_models_page,
    ),
    WireProtocol.LLAMACPP: ProtocolAPI(
        llamacpp.MODELS_ENDPOINT,
        llamacpp.tool_definitions,
        llamacpp.build_continuation,
        llamacpp.parse_model_list,
        llamacpp.next_models_page,
    ),
}


def protocol_api(protocol: WireProtocol) -> ProtocolAPI:
    """Return the request-side shapes of ``protocol``."""
    return _APIS[protocol]


def _openai_family_parser(path: str) -> type[openai_chat.OpenAIChatParser]:
    if path.endswith("/completions") and not path.endswith(
        ("/chat/completions", "/fim/completions")
    ):
        return openai_chat.OpenAICompletionsParser
    return openai_chat.OpenAIChatParser


def parser_for(
    protocol: WireProtocol,
    url: str,
    context: ErrorContext | None = None,
    new_id: IdFactory = new_tool_call_id,
) -> StreamParser:
    """Create a parser for a streamed request of ``protocol`` to ``url``."""
    return _parser_class(protocol, url)(context=context, new_id=new_id)


@functools.lru_cache(maxsize=64)
def _parser_class(protocol: WireProtocol, url: str) -> Callable[..., StreamParser]:
    """Choose the parser class for ``protocol`` at ``url`` (once per URL: agents reuse theirs)."""
    path = urlsplit(url).path.rstrip("/")
    if protocol is WireProtocol.ANTHROPIC:
        return anthropic.AnthropicParser
    if protocol is WireProtocol.GOOGLE:
        return google.GoogleParser
    if protocol is WireProtocol.OPENAI_RESPONSES and not path.endswith("/completions"):
        return openai_responses.OpenAIResponsesParser
    if protocol is WireProtocol.OLLAMA:
        if path.endswith("/api/generate"):
            return ollama.OllamaGenerateParser
        if not path.endswith("/completions"):
            return ollama.OllamaChatParser
    if protocol is WireProtocol.LLAMACPP:
        is_oai = path.endswith(("/chat/completions", "/v1/completions"))
        if not is_oai and path.endswith(llamacpp.NATIVE_ENDPOINTS):
            return llamacpp.LlamaCppNativeParser
    return _openai_family_parser(path)
