"""What every recorded fixture in ``tests/fixtures/wire/`` contains, and which agent replays it.

Two sources of truth, cross-checked by the end-to-end tests:

* `STREAMS` / `HTTP_ERRORS` / `MODEL_LISTS`: hand-written facts per fixture (final text, usage,
  stop reason, tool calls, failure category), the same facts the wire unit tests in
  ``tests/unit/wire/`` pin down for the L0 parsers;
* `expected_events`: the session events a fixture must produce, derived by replaying it through
  the finished L0 parser (``parser_for``) the same way the client does.

The CLI and the Session must reproduce both exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qodeassist_lsp.core.events import summarize
from qodeassist_lsp.wire import events as wire
from qodeassist_lsp.wire.errors import ErrorContext
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.registry import parser_for
from tests.support.replay_server import FIXTURES, fixture_bytes
from tests.support.workspace import PROVIDERS

GENERATED = "<generated>"
"""Stands for a tool-call id the client makes up (the provider sent none)."""


@dataclass(frozen=True)
class Target:
    """An agent and the request path (under its provider's URL) its requests arrive at."""

    agent: str
    provider: str
    path: str
    """Exact path, or a prefix ending in ``/`` (Gemini puts the model in the path)."""
    sample_path: str = ""
    """A concrete request path, for choosing the parser (defaults to ``path``)."""

    @property
    def protocol(self) -> WireProtocol:
        return PROVIDERS[self.provider].protocol

    @property
    def route(self) -> str:
        """The path as the replay server sees it (provider prefix included)."""
        return PROVIDERS[self.provider].prefix + self.path

    def error_context(self) -> ErrorContext:
        return ErrorContext(
            provider=self.provider,
            api_key_env=PROVIDERS[self.provider].key_env,
            secret_name=self.provider,
        )


GEMINI_PATH = "/models/"
GEMINI_SAMPLE = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"

TARGETS: dict[str, Target] = {
    # Bundled agents, re-pointed through the provider overrides.
    "claude": Target("Claude Chat — Sonnet", "Claude", "/v1/messages"),
    "openai": Target("OpenAI Chat", "OpenAI (Chat Completions)", "/chat/completions"),
    "responses": Target("OpenAI Chat — Responses", "OpenAI (Responses API)", "/responses"),
    "gemini": Target("Google Chat", "Google AI", GEMINI_PATH, GEMINI_SAMPLE),
    "ollama": Target("Ollama Chat — Simple", "Ollama (Native)", "/api/chat"),
    "ollama-thinking": Target("Ollama Chat — Thinking", "Ollama (Native)", "/api/chat"),
    "ollama-fim": Target("Ollama Completion — FIM", "Ollama (Native)", "/api/generate"),
    "mistral": Target("Mistral Chat", "Mistral AI", "/v1/chat/completions"),
    "codestral-fim": Target("Codestral Completion — FIM", "Codestral", "/v1/fim/completions"),
    "llamacpp": Target("llama.cpp Chat", "llama.cpp", "/v1/chat/completions"),
    "llamacpp-infill": Target("llama.cpp Completion — FIM", "llama.cpp", "/infill"),
    # User agents (extends a wire base) with tools off: a recorded tool call is reported as a
    # toolCall event and the request finishes with stop reason tool_use after that one reply,
    # whatever tool kit the CLI offers. Tool round trips are tested in-process per protocol.
    "claude-notools": Target("E2E Claude (no tools)", "Claude", "/v1/messages"),
    "openai-notools": Target(
        "E2E OpenAI (no tools)", "OpenAI (Chat Completions)", "/chat/completions"
    ),
    "responses-notools": Target("E2E Responses (no tools)", "OpenAI (Responses API)", "/responses"),
    "gemini-notools": Target("E2E Gemini (no tools)", "Google AI", GEMINI_PATH, GEMINI_SAMPLE),
    "ollama-notools": Target("E2E Ollama (no tools)", "Ollama (Native)", "/api/chat"),
    "mistral-notools": Target("E2E Mistral (no tools)", "Mistral AI", "/v1/chat/completions"),
    "llamacpp-notools": Target("E2E llama.cpp (no tools)", "llama.cpp", "/v1/chat/completions"),
}


@dataclass(frozen=True)
class StreamCase:
    """A recorded 200 response and what a client must make of it."""

    fixture: str
    target: str
    end: str
    """``finished:<stopReason>`` or ``failed:<category>``."""
    text: str | None = None
    """The whole answer text (None: only ``text_start`` is checked)."""
    text_start: str = ""
    usage: tuple[int, int, int, int] | None = None
    """(input, output, cached, reasoning) of the ``usage`` event; None when failed."""
    tools: tuple[tuple[str, dict[str, Any]], ...] = ()
    thinking: int = 0
    """Number of thinking events."""
    signature_start: str = ""
    said: str = ""
    """A phrase the failure message must contain."""
    unusable: int = 0
    """Tool calls that cannot run (arguments cut off): each gets a failed ``toolResult``."""


S = StreamCase
KIT_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read_file", {"path": "notes.txt"}),
    ("read_file", {"path": "../outside.txt"}),
    ("terminal", {"command": "echo tool-ran"}),
)
"""The calls of the tool kit's hand-written streams (``*_kit_*SYNTHETIC*``)."""
STREAMS: tuple[StreamCase, ...] = (
    # anthropic ----------------------------------------------------------------------------
    S(
        "anthropic/error_event_overloaded.sse",
        "claude",
        "failed:provider",
        text="",
        said="Overloaded",
    ),
    S(
        "anthropic/error_midstream_api_error_excerpt.sse",
        "claude",
        "failed:provider",
        text="d with a replacement character (",
        said="Internal server error",
    ),
    # The cut-off tool input is unusable: not run, shown as a call with empty arguments and a
    # failed result, and the reply still finishes.
    S(
        "anthropic/stream_max_tokens_truncated_tool_input.sse",
        "claude-notools",
        "finished:max_tokens",
        text_start="I'll create a comprehensive tax guide",
        usage=(450, 124, 0, 0),
        tools=(("make_file", {}),),
        unusable=1,
    ),
    S(
        "anthropic/stream_parallel_tool_use_empty_input.sse",
        "claude-notools",
        "finished:tool_use",
        text="",
        usage=(542, 62, 0, 0),
        tools=(("pelican_name_generator", {}), ("pelican_name_generator", {})),
    ),
    S(
        "anthropic/stream_text_hello.sse",
        "claude",
        "finished:end_turn",
        text="Hello",
        usage=(10, 4, 0, 0),
    ),
    S(
        "anthropic/stream_text_then_tool_use_sdk.sse",
        "claude-notools",
        "finished:tool_use",
        text="I'll check the current weather in Paris for you.",
        usage=(377, 65, 0, 0),
        tools=(("get_weather", {"location": "Paris"}),),
    ),
    S(
        "anthropic/stream_thinking_signature_text.sse",
        "claude",
        "finished:end_turn",
        text='1. **Pouch** - references their iconic bill pouch\n2. **Pelé** - playful take on "pelican"',
        usage=(46, 133, 0, 0),
        thinking=6,
        signature_start="EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+Aol4ZY3EY4wLDrf8XcApz2Pi",
    ),
    S(
        "anthropic/stream_thinking_then_tool_use.sse",
        "claude-notools",
        "finished:tool_use",
        text="",
        usage=(598, 92, 0, 53),
        tools=(("fixed_version", {}),),
        thinking=3,
        signature_start="EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF",
    ),
    S(
        "anthropic/stream_web_search_citations.sse",
        "claude",
        "finished:end_turn",
        text_start="Based on the search results, here's the current weather in San",
        usage=(10423, 341, 0, 0),
    ),
    # gemini -------------------------------------------------------------------------------
    S(
        "gemini/array_function_call_gemini3.json",
        "gemini-notools",
        "finished:tool_use",
        text="",
        usage=(60, 16, 0, 32),
        tools=(("multiply", {"y": 3, "x": 5}),),
    ),
    S(
        "gemini/array_text_with_thoughts.json",
        "gemini",
        "finished:end_turn",
        text="Scoop",
        usage=(11, 2, 0, 291),
        thinking=2,
        signature_start="Eq0JCqoJARFNMg+W/PqA",
    ),
    S(
        "gemini/sse_function_call_single_chunk.sse",
        "gemini-notools",
        "finished:tool_use",
        text="",
        usage=(52, 5, 0, 0),
        tools=(("get_capital", {"country": "France"}),),
    ),
    S(
        "gemini/sse_text.sse",
        "gemini",
        "finished:end_turn",
        text="The capital of France is Paris.\n",
        usage=(13, 8, 0, 0),
    ),
    S(
        "gemini/sse_text_after_function_response.sse",
        "gemini",
        "finished:end_turn",
        text="The capital of Mexico is Mexico City.",
        usage=(257, 8, 0, 0),
    ),
    S(
        "gemini/sse_thought_parts_then_text.sse",
        "gemini",
        "finished:end_turn",
        text_start="This is a great question! Safely crossing the street",
        usage=(34, 469, 0, 787),
        thinking=5,
        signature_start="CiIB0e2Kb6Syj1a961Ef",
    ),
    # llamacpp -----------------------------------------------------------------------------
    S(
        "llamacpp/chat_completions_final_chunk.sse",
        "llamacpp",
        "finished:max_tokens",
        text="",
        usage=(43, 1, 0, 0),
    ),
    # An excerpt: two reasoning events and no finish_reason / [DONE], so it was cut off.
    S(
        "llamacpp/chat_completions_reasoning_excerpt.sse",
        "llamacpp",
        "failed:provider",
        text="",
        thinking=2,
        said="cut off",
    ),
    # The native stream excerpt lacks its final "stop": true event: cut off (served on /infill,
    # which streams the same objects as /completion).
    S(
        "llamacpp/completion_stream_excerpt.sse",
        "llamacpp-infill",
        "failed:provider",
        text=" the planet Mars",
        said="cut off",
    ),
    # mistral ------------------------------------------------------------------------------
    S(
        "mistral/chat_stream_text.sse",
        "mistral",
        "finished:end_turn",
        text="Hello, world! This is a test response.",
        usage=(13, 8, 0, 0),
    ),
    S(
        "mistral/chat_stream_tool_call.sse",
        "mistral-notools",
        "finished:tool_use",
        text="",
        usage=(124, 22, 0, 0),
        tools=(("weather", {"location": "San Francisco"}),),
    ),
    S(
        "mistral/chat_stream_tool_call_2024.sse",
        "mistral-notools",
        "finished:tool_use",
        text="",
        usage=(118, 31, 0, 0),
        tools=(("WeatherPlugin-GetWeather", {"location": "Paris", "unit": "celsius"}),),
    ),
    S(
        "mistral/fim_completion_nostream_example.json",
        "codestral-fim",
        "finished:end_turn",
        text_start="add_numbers(a: int, b: int) -> int:\n",
        usage=(8, 91, 0, 0),
    ),
    # ollama -------------------------------------------------------------------------------
    S(
        "ollama/chat_stream_docs_reconstructed.ndjson",
        "ollama",
        "finished:end_turn",
        text="The",
        usage=(26, 282, 0, 0),
    ),
    S(
        "ollama/chat_stream_excerpt_sk.ndjson",
        "ollama",
        "finished:end_turn",
        text=" these times of day.",
        usage=(10, 239, 0, 0),
    ),
    S(
        "ollama/chat_stream_tools_docs_reconstructed.ndjson",
        "ollama-notools",
        "finished:tool_use",
        text="",
        usage=(169, 15, 0, 0),
        tools=(("get_weather", {"city": "Tokyo"}),),
    ),
    # Neither of the next two reports token counts, so no usage event may claim zero tokens.
    S(
        "ollama/chat_thinking_SYNTHETIC_sk.ndjson",
        "ollama-thinking",
        "finished:end_turn",
        text="Final answer",
        thinking=1,
    ),
    S(
        "ollama/generate_midstream_error_docs.ndjson",
        "ollama-fim",
        "failed:provider",
        text=" Yes.Ican",
        said="an error was encountered while running the model",
    ),
    S(
        "ollama/generate_stream_docs.ndjson",
        "ollama-fim",
        "finished:end_turn",
        text="That's a fantastic question!",
    ),
    S(
        "ollama/generate_stream_docs_reconstructed.ndjson",
        "ollama-fim",
        "finished:end_turn",
        text="The",
        usage=(26, 259, 0, 0),
    ),
    S(
        "ollama/generate_stream_excerpt_sk.ndjson",
        "ollama-fim",
        "finished:end_turn",
        text=" daylight hours.",
        usage=(10, 304, 0, 0),
    ),
    # The docs example is JSON5 ("context": [...]), not JSON: a provider error, never a crash.
    S("ollama/generate_suffix_nostream_docs.json5", "ollama-fim", "failed:provider", text=""),
    # openai_chat --------------------------------------------------------------------------
    S(
        "openai_chat/compat_groq_event_error_midstream.sse",
        "openai",
        "failed:tool",
        text="",
        thinking=93,
        said="tool_use_failed",
    ),
    S(
        "openai_chat/error_midstream_server_error_excerpt.sse",
        "openai",
        "failed:provider",
        text="",
        said="not valid JSON",
    ),
    S(
        "openai_chat/stream_logprobs.sse",
        "openai",
        "finished:end_turn",
        text="Foo!",
        usage=(9, 2, 0, 0),
    ),
    S(
        "openai_chat/stream_refusal.sse",
        "openai",
        "finished:refusal",
        text="I'm sorry, I can't assist with that request.",
        usage=(79, 11, 0, 0),
    ),
    S(
        "openai_chat/stream_structured_output_content.sse",
        "openai",
        "finished:end_turn",
        text='{"city":"San Francisco","temperature":61,"units":"f"}',
        usage=(79, 14, 0, 0),
    ),
    S(
        "openai_chat/stream_text_with_usage.sse",
        "openai",
        "finished:end_turn",
        text="I'm unable to provide real-time weather updates. To get the current weather in San "
        "Francisco, I recommend checking a reliable weather website or a weather app.",
        usage=(14, 30, 0, 0),
    ),
    S(
        "openai_chat/stream_tool_call_single.sse",
        "openai-notools",
        "finished:tool_use",
        text="",
        usage=(76, 24, 0, 0),
        tools=(("GetWeatherArgs", {"city": "Edinburgh", "country": "UK", "units": "c"}),),
    ),
    # openai_responses ---------------------------------------------------------------------
    S(
        "openai_responses/error_event_then_response_failed.sse",
        "responses",
        "failed:provider",
        text="",
        said="insufficient_quota",
    ),
    S(
        "openai_responses/stream_function_call.sse",
        "responses-notools",
        "finished:tool_use",
        text="",
        usage=(255, 16, 0, 0),
        tools=(("get_capital", {"country": "France"}),),
    ),
    S(
        "openai_responses/stream_function_call_modern.sse",
        "responses-notools",
        "finished:tool_use",
        text="",
        usage=(58, 23, 0, 0),
        tools=(("multiply", {"a": 1231, "b": 2331}),),
    ),
    S(
        "openai_responses/stream_function_call_usage.sse",
        "responses-notools",
        "finished:tool_use",
        text="",
        usage=(53, 469, 0, 448),
        tools=(("final_result", {"result": 6666}),),
        thinking=1,
    ),
    S(
        "openai_responses/stream_text.sse",
        "responses",
        "finished:end_turn",
        text="pong",
        usage=(11, 5, 0, 0),
    ),
    S(
        "openai_responses/stream_text_after_function_call.sse",
        "responses",
        "finished:end_turn",
        text="The capital of France is Paris.",
        usage=(278, 9, 0, 0),
    ),
    # Hand-written (SYNTHETIC): the tool kit's e2e calls read_file inside and outside the
    # workspace and terminal, three calls in one reply, in each protocol's recorded shape.
    *(
        S(fixture, target, "finished:tool_use", text="", usage=usage, tools=KIT_CALLS)
        for fixture, target, usage in (
            (
                "anthropic/stream_tool_use_kit_calls_SYNTHETIC.sse",
                "claude-notools",
                (812, 96, 0, 0),
            ),
            ("openai_chat/stream_tool_calls_kit_SYNTHETIC.sse", "openai-notools", (640, 72, 0, 0)),
            (
                "openai_responses/stream_function_calls_kit_SYNTHETIC.sse",
                "responses-notools",
                (700, 80, 0, 0),
            ),
            ("gemini/sse_function_calls_kit_SYNTHETIC.sse", "gemini-notools", (420, 36, 0, 0)),
            (
                "ollama/chat_stream_tool_calls_kit_SYNTHETIC.ndjson",
                "ollama-notools",
                (388, 41, 0, 0),
            ),
            (
                "mistral/chat_stream_tool_calls_kit_SYNTHETIC.sse",
                "mistral-notools",
                (350, 60, 0, 0),
            ),
            (
                "llamacpp/chat_completions_tool_calls_kit_SYNTHETIC.sse",
                "llamacpp-notools",
                (640, 72, 0, 0),
            ),
        )
    ),
)


@dataclass(frozen=True)
class HttpErrorCase:
    """A recorded non-2xx body, the status it came with and the typed failure it must give."""

    fixture: str
    target: str
    status: int
    category: str
    said: str
    headers: dict[str, str] = field(default_factory=dict)
    attempts: int = 1
    """Requests the client makes: retryable statuses are retried before the first byte."""
    hint: str = ""
    """What the message must tell the user to do."""


H = HttpErrorCase
RETRY_NOW = {"Retry-After": "0"}
HTTP_ERRORS: tuple[HttpErrorCase, ...] = (
    H(
        "anthropic/error_http_400_invalid_request.json",
        "claude",
        400,
        "validation",
        "effort level 'xhigh'",
        hint="[body]",
    ),
    H(
        "anthropic/error_http_401_authentication.json",
        "claude",
        401,
        "auth",
        "invalid x-api-key",
        hint="ANTHROPIC_API_KEY",
    ),
    # Recorded with x-should-retry: true; Retry-After 0 keeps the test fast.
    H(
        "anthropic/error_http_529_overloaded.json",
        "claude",
        529,
        "provider",
        "Overloaded",
        {"x-should-retry": "true", **RETRY_NOW},
        attempts=3,
        hint="Try again",
    ),
    H(
        "anthropic/error_http_529_overloaded_with_request_id.json",
        "claude",
        529,
        "provider",
        "Overloaded",
        {"x-should-retry": "false"},
        hint="Try again",
    ),
    H(
        "gemini/error_http_404_model_not_found.json",
        "gemini",
        404,
        "config",
        "gemini-3.6-flahs",
        hint="qodeassist-lsp models",
    ),
    # RetryInfo asks for 34.4 s, more than the client waits: no retry, and the user is told.
    H(
        "gemini/error_http_429_resource_exhausted.json",
        "gemini",
        429,
        "provider",
        "exceeded your current quota",
        hint="34 s",
    ),
    H(
        "llamacpp/error_http_500_tools_with_stream.json",
        "llamacpp",
        500,
        "provider",
        "Cannot use tools with stream",
    ),
    H(
        "llamacpp/error_http_503_loading_model.json",
        "llamacpp",
        503,
        "provider",
        "Loading model",
        RETRY_NOW,
        attempts=3,
    ),
    H(
        "ollama/error_http_400_suffix_not_supported.json",
        "ollama-fim",
        400,
        "validation",
        "does not support insert",
    ),
    H(
        "ollama/error_http_400_thinking_not_supported.json",
        "ollama-thinking",
        400,
        "validation",
        "does not support thinking",
    ),
    H(
        "ollama/error_http_404_model_not_found.json",
        "ollama-fim",
        404,
        "config",
        "not found",
        hint="qodeassist-lsp models",
    ),
    H(
        "ollama/error_http_429_rate_limit.json",
        "ollama",
        429,
        "provider",
        "rate limit exceeded",
        RETRY_NOW,
        attempts=3,
    ),
    H(
        "ollama/error_http_503_overloaded.json",
        "ollama",
        503,
        "provider",
        "model is overloaded",
        RETRY_NOW,
        attempts=3,
    ),
    H(
        "openai_chat/error_http_401_invalid_api_key.json",
        "openai",
        401,
        "auth",
        "Incorrect API key",
        hint="OPENAI_API_KEY",
    ),
    H(
        "openai_chat/error_http_404_model_not_found.json",
        "openai",
        404,
        "config",
        "gpt-5.2-proo",
        hint="qodeassist-lsp models",
    ),
    H(
        "openai_responses/error_http_400_invalid_param.json",
        "responses",
        400,
        "validation",
        "temperature",
        hint="[body]",
    ),
    H(
        "openai_responses/error_http_400_model_not_found.json",
        "responses",
        400,
        "config",
        "gpt-5.2-proo",
        hint="qodeassist-lsp models",
    ),
)


@dataclass(frozen=True)
class ModelListCase:
    """A recorded model list, the provider that serves it and the ids ``models`` prints."""

    fixture: str
    provider: str
    path: str
    """GET path under the provider URL."""
    ids: tuple[str, ...] | None
    """Printed ids (None: the command must fail)."""
    next_page: tuple[dict[str, str], Any] | None = None
    """(query the next-page request must carry, the JSON page to answer it with)."""


MODEL_LISTS: tuple[ModelListCase, ...] = (
    ModelListCase(
        "anthropic/models_list.json",
        "Claude",
        "/v1/models",
        ("claude-sonnet-4-20250514", "claude-haiku-4-5"),
        ({"after_id": "last_id"}, {"data": [{"id": "claude-haiku-4-5"}], "has_more": False}),
    ),
    ModelListCase(
        "gemini/models_list.json",
        "Google AI",
        "/models",
        None,  # filled in by the test from the fixture (models supporting generateContent)
        ({"pageToken": "Ch9tb2RlbHMvdmVvLTMuMS1nZW5lcmF0ZS1wcmV2aWV3"}, {"models": []}),
    ),
    ModelListCase("mistral/models_list_example.json", "Mistral AI", "/v1/models", ("<model_id>",)),
    ModelListCase(
        "ollama/tags_docs.json",
        "Ollama (Native)",
        "/api/tags",
        ("deepseek-r1:latest", "llama3.2:latest"),
    ),
    # The published OpenAPI example has a trailing comma: not JSON, so the command fails (exit 3).
    ModelListCase(
        "openai_chat/models_list_openapi_example.json", "OpenAI (Chat Completions)", "/models", None
    ),
)


SETUP_REPLIES = frozenset(
    f"ollama/{name}"
    for name in (
        "version_docs.json",
        "tags_setup_SYNTHETIC.json",
        "show_llama3.2_SYNTHETIC.json",
        "show_nomic-embed-text_SYNTHETIC.json",
        "show_qwen2.5-coder_1.5b-base_SYNTHETIC.json",
        "show_qwen2.5-coder_7b_SYNTHETIC.json",
    )
)
"""Ollama's discovery answers that ``tests/e2e/test_cli_setup.py`` replays to ``setup``."""


def covered_fixtures() -> set[str]:
    """Every fixture file some case above (or setup's end-to-end test) replays."""
    return (
        {c.fixture for c in STREAMS}
        | {c.fixture for c in HTTP_ERRORS}
        | {c.fixture for c in MODEL_LISTS}
        | SETUP_REPLIES
    )


def all_fixtures() -> set[str]:
    """Every recorded file under ``tests/fixtures/wire``."""
    return {
        str(p.relative_to(FIXTURES))
        for p in FIXTURES.rglob("*")
        if p.is_file() and p.name != "SOURCES.md"
    }


def expected_events(case: StreamCase) -> list[dict[str, Any]]:
    """The session events (as ``--events jsonl`` prints them, minus ``requestId``) that the
    finished L0 parser says this fixture must produce for one request without tool runs."""
    target = TARGETS[case.target]
    url = "http://127.0.0.1" + (target.sample_path or target.route)
    parser = parser_for(
        target.protocol, url, context=target.error_context(), new_id=lambda: GENERATED
    )
    out: list[dict[str, Any]] = []
    usage: list[int] | None = None
    for event in [*parser.feed(fixture_bytes(case.fixture)), *parser.close()]:
        if isinstance(event, wire.TextDelta):
            out.append({"kind": "text", "text": event.text})
        elif isinstance(event, wire.ThinkingDelta):
            out.append(
                {
                    "kind": "thinking",
                    "text": event.thinking,
                    "signature": event.signature,
                    "redacted": event.redacted,
                }
            )
        elif isinstance(event, wire.ToolCallEnd):
            out.append(
                {
                    "kind": "toolCall",
                    "id": event.id,
                    "name": event.name,
                    "arguments": event.arguments,
                }
            )
        elif isinstance(event, wire.Usage):
            new = (
                event.input_tokens,
                event.output_tokens,
                event.cached_tokens,
                event.reasoning_tokens,
            )
            usage = [max(a, b) for a, b in zip(usage or [0, 0, 0, 0], new, strict=True)]
        elif isinstance(event, wire.MessageStop):
            if usage is not None:  # a provider that reported no usage has no usage event
                out.append(_usage(usage))
            out.append({"kind": "finished", "stopReason": event.stop_reason, "agent": target.agent})
        elif isinstance(event, wire.StreamError) and event.call_id and not event.final:
            # An unusable call (arguments cut off): shown as a call and its failed result.
            call = {"kind": "toolCall", "id": event.call_id, "name": event.call_name}
            out.append({**call, "arguments": {}})
            content = f"Error: {event.error.message} The call was not run."
            result = {"toolCallId": event.call_id, "toolUseId": event.call_id}
            out.append(
                {
                    "kind": "toolResult",
                    **result,
                    "name": event.call_name,
                    "ok": False,
                    "summary": summarize(content),
                    "content": content,
                    "isError": True,
                }
            )
        elif isinstance(event, wire.StreamError) and event.final:
            error: dict[str, Any] = {
                "category": str(event.error.category),
                "message": event.error.message,
            }
            if event.error.provider_detail:
                error["providerDetail"] = event.error.provider_detail
            if event.error.retry_after is not None:
                error["retryAfter"] = event.error.retry_after
            out.append({"kind": "failed", "error": error})
    return out


def _usage(values: list[int]) -> dict[str, Any]:
    return {
        "kind": "usage",
        "inputTokens": values[0],
        "outputTokens": values[1],
        "cachedTokens": values[2],
        "reasoningTokens": values[3],
    }


def comparable(
    events: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``events`` without ``requestId`` and ``chatId`` (and a tool call's ``toolCallId`` and
    ``permission``); a tool call whose expected id is `GENERATED` (the client had to make one up)
    gets that placeholder when its actual id is non-empty."""
    out = [{k: v for k, v in e.items() if k not in ("requestId", "chatId")} for e in events]
    for event in out:
        if event.get("kind") == "toolCall":
            # SPEC's toolCallId repeats the id; a tool that was not offered has no permission.
            assert event.pop("toolCallId") == event.get("id")
            assert event.pop("permission") == ""
    wanted = [e for e in expected if e.get("kind") == "toolCall"]
    calls = [e for e in out if e.get("kind") == "toolCall"]
    for want, call in zip(wanted, calls, strict=False):
        if want["id"] == GENERATED and call.get("id"):
            call["id"] = GENERATED
    return out
