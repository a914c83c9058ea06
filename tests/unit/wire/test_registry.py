"""The parser each (protocol, endpoint) gets, and the request-side shapes of every protocol."""

import pytest

from qodeassist_lsp.wire.anthropic import AnthropicParser
from qodeassist_lsp.wire.google import GoogleParser
from qodeassist_lsp.wire.llamacpp import LlamaCppNativeParser
from qodeassist_lsp.wire.ollama import OllamaChatParser, OllamaGenerateParser
from qodeassist_lsp.wire.openai_chat import OpenAIChatParser, OpenAICompletionsParser
from qodeassist_lsp.wire.openai_responses import OpenAIResponsesParser
from qodeassist_lsp.wire.protocols import WireProtocol as P
from qodeassist_lsp.wire.registry import parser_for, protocol_api
from qodeassist_lsp.wire.tools import ToolSpec


@pytest.mark.parametrize(
    ("protocol", "url", "parser"),
    [
        (P.ANTHROPIC, "https://api.anthropic.com/v1/messages", AnthropicParser),
        (P.OPENAI_CHAT, "https://api.openai.com/v1/chat/completions", OpenAIChatParser),
        (P.OPENAI_CHAT, "http://localhost:1234/v1/completions", OpenAICompletionsParser),
        (P.OPENAI_RESPONSES, "https://api.openai.com/v1/responses", OpenAIResponsesParser),
        (P.GOOGLE, "https://g/v1beta/models/m:streamGenerateContent?alt=sse&key=k", GoogleParser),
        (P.MISTRAL, "https://codestral.mistral.ai/v1/fim/completions", OpenAIChatParser),
        (P.MISTRAL, "https://api.mistral.ai/v1/chat/completions", OpenAIChatParser),
        (P.OLLAMA, "http://localhost:11434/api/chat", OllamaChatParser),
        (P.OLLAMA, "http://localhost:11434/api/generate", OllamaGenerateParser),
        (P.OLLAMA, "http://localhost:11434/v1/chat/completions", OpenAIChatParser),
        (P.LLAMACPP, "http://localhost:8080/infill", LlamaCppNativeParser),
        (P.LLAMACPP, "http://localhost:8080/completion", LlamaCppNativeParser),
        (P.LLAMACPP, "http://localhost:8080/v1/completions", OpenAICompletionsParser),
        (P.LLAMACPP, "http://localhost:8080/v1/chat/completions", OpenAIChatParser),
    ],
)
def test_parser_for_endpoint(protocol, url, parser) -> None:
    assert type(parser_for(protocol, url)) is parser


@pytest.mark.parametrize("protocol", list(P))
def test_every_protocol_has_request_shapes(protocol) -> None:
    api = protocol_api(protocol)
    assert api.tool_definitions([ToolSpec("f", "F")])
    assert api.parse_model_list({}) == []
