"""Which parser, tool shape and model list each protocol uses.

Each protocol's request-side functions (`ProtocolModule`) are one module, so the registry is a
table of modules; Mistral and llama.cpp use OpenAI's. The parser depends on the endpoint too:
llama.cpp's ``/infill`` streams native objects while its ``/v1/chat/completions`` streams
OpenAI chunks, and Ollama serves both NDJSON (``/api/*``) and OpenAI-compatible SSE
(``/v1/*``); `_ENDPOINT_PARSERS` says which path endings change the protocol's default.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urlsplit

from qodeassist_lsp.wire import (
    anthropic,
    google,
    llamacpp,
    ollama,
    openai_chat,
    openai_responses,
)
from qodeassist_lsp.wire.errors import ErrorContext
from qodeassist_lsp.wire.parser import IdFactory, StreamParser
from qodeassist_lsp.wire.protocols import WireProtocol as P
from qodeassist_lsp.wire.tools import ToolSpec, new_tool_call_id


class ProtocolModule(Protocol):
    """The request-side shapes of one wire protocol: what each protocol module defines."""

    def tool_definitions(self, tools: list[ToolSpec]) -> list[dict[str, Any]]:
        """Return the tool definitions in the protocol's request shape."""
        ...

    def parse_model_list(self, payload: object) -> list[str]:
        """Return the model ids of one page of the model list."""
        ...

    def next_models_page(self, url: str, payload: object) -> str | None:
        """Return the URL of the next page of the model list, if any."""
        ...


class _ParserClass(Protocol):
    def __call__(self, *, context: ErrorContext | None, new_id: IdFactory) -> StreamParser: ...


# Each protocol's request-side shapes and the parser for an endpoint not in _ENDPOINT_PARSERS.
_PROTOCOLS: dict[P, tuple[ProtocolModule, _ParserClass]] = {
    P.ANTHROPIC: (anthropic, anthropic.AnthropicParser),
    P.OPENAI_CHAT: (openai_chat, openai_chat.OpenAIChatParser),
    P.OPENAI_RESPONSES: (openai_responses, openai_responses.OpenAIResponsesParser),
    P.GOOGLE: (google, google.GoogleParser),
    P.OLLAMA: (ollama, ollama.OllamaChatParser),
    P.MISTRAL: (openai_chat, openai_chat.OpenAIChatParser),
    P.LLAMACPP: (openai_chat, openai_chat.OpenAIChatParser),
}

_OPENAI_STYLE = frozenset({P.OPENAI_CHAT, P.OPENAI_RESPONSES, P.OLLAMA, P.MISTRAL, P.LLAMACPP})
_NATIVE_LLAMACPP = frozenset({P.LLAMACPP})

# (path ending, protocols it applies to, parser): the first matching row wins, so longer
# endings come before the shorter ones they end with. Anthropic and Gemini ignore the path.
_ENDPOINT_PARSERS: tuple[tuple[str, frozenset[P], _ParserClass], ...] = (
    ("/chat/completions", _OPENAI_STYLE, openai_chat.OpenAIChatParser),
    ("/fim/completions", _OPENAI_STYLE - _NATIVE_LLAMACPP, openai_chat.OpenAIChatParser),
    ("/v1/completions", _OPENAI_STYLE, openai_chat.OpenAICompletionsParser),
    ("/completions", _NATIVE_LLAMACPP, llamacpp.LlamaCppNativeParser),
    ("/completions", _OPENAI_STYLE, openai_chat.OpenAICompletionsParser),
    ("/completion", _NATIVE_LLAMACPP, llamacpp.LlamaCppNativeParser),
    ("/infill", _NATIVE_LLAMACPP, llamacpp.LlamaCppNativeParser),
    ("/api/generate", frozenset({P.OLLAMA}), ollama.OllamaGenerateParser),
)


def protocol_api(protocol: P) -> ProtocolModule:
    """Return the request-side shapes of ``protocol``."""
    return _PROTOCOLS[protocol][0]


def parser_for(
    protocol: P,
    url: str,
    context: ErrorContext | None = None,
    new_id: IdFactory = new_tool_call_id,
) -> StreamParser:
    """Create a parser for a streamed request of ``protocol`` to ``url``."""
    path = urlsplit(url).path.rstrip("/")
    parser = next(
        (
            cls
            for end, protocols, cls in _ENDPOINT_PARSERS
            if protocol in protocols and path.endswith(end)
        ),
        _PROTOCOLS[protocol][1],
    )
    return parser(context=context, new_id=new_id)
