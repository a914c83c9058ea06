"""Helpers for the wire tests: locating the recorded streams and replaying them in splits."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from qodeassist_lsp.wire.events import WireEvent
from qodeassist_lsp.wire.parser import IdFactory, StreamParser
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.registry import parser_for

# tests/unit/wire/conftest.py -> tests/ -> fixtures/wire (the recorded streams, vendored).
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wire"

ParserMaker = Callable[[IdFactory], StreamParser]
SEEDS = (1, 7, 42)


def fixture_bytes(name: str) -> bytes:
    """The recorded bytes of ``name`` (``"anthropic/stream_text_hello.sse"``)."""
    path = FIXTURES / name
    if not path.is_file():
        pytest.fail(f"missing fixture {path} (tests/fixtures/wire holds the recorded streams)")
    return path.read_bytes()


def counting_ids() -> IdFactory:
    """A deterministic tool-call id factory: qa0000000, qa0000001, …"""
    counter = itertools.count()
    return lambda: f"qa{next(counter):07d}"


def split_variants(data: bytes) -> Iterator[tuple[str, list[bytes]]]:
    """The same bytes whole, byte by byte, in 7-byte pieces and in seeded random pieces."""
    yield "whole", [data]
    yield "bytes", [data[i : i + 1] for i in range(len(data))]
    yield "seven", [data[i : i + 7] for i in range(0, len(data), 7)]
    for seed in SEEDS:
        rng = random.Random(seed)
        pieces, i = [], 0
        while i < len(data):
            size = rng.randint(1, 96)
            pieces.append(data[i : i + size])
            i += size
        yield f"random{seed}", pieces


def run(make: ParserMaker, pieces: list[bytes]) -> list[WireEvent]:
    """Feed ``pieces`` to a fresh parser and close it."""
    parser = make(counting_ids())
    events: list[WireEvent] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    events.extend(parser.close())
    return events


def maker(protocol: WireProtocol, url: str) -> ParserMaker:
    """A parser maker for ``protocol`` and ``url`` (the way the client picks parsers)."""
    return lambda new_id: parser_for(protocol, url, new_id=new_id)


def replay_all(make: ParserMaker, data: bytes) -> list[WireEvent]:
    """Replay ``data`` in every split; all splits must give the same events, which are returned."""
    expected = run(make, [data])
    for label, pieces in split_variants(data):
        assert run(make, pieces) == expected, f"split {label!r} changed the events"
    return expected


URLS: dict[str, tuple[WireProtocol, str]] = {
    "anthropic": (WireProtocol.ANTHROPIC, "https://api.anthropic.com/v1/messages"),
    "openai_chat": (WireProtocol.OPENAI_CHAT, "https://api.openai.com/v1/chat/completions"),
    "openai_responses": (WireProtocol.OPENAI_RESPONSES, "https://api.openai.com/v1/responses"),
    "gemini": (
        WireProtocol.GOOGLE,
        "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent",
    ),
    "mistral": (WireProtocol.MISTRAL, "https://api.mistral.ai/v1/chat/completions"),
    "ollama_chat": (WireProtocol.OLLAMA, "http://localhost:11434/api/chat"),
    "ollama_generate": (WireProtocol.OLLAMA, "http://localhost:11434/api/generate"),
    "llamacpp_native": (WireProtocol.LLAMACPP, "http://localhost:8080/completion"),
    "llamacpp_chat": (WireProtocol.LLAMACPP, "http://localhost:8080/v1/chat/completions"),
}


def maker_for(key: str) -> ParserMaker:
    """The parser maker registered under ``key`` in `URLS`."""
    return maker(*URLS[key])


# Every recorded stream (not the HTTP error bodies or model lists) and the parser it needs.
STREAM_CASES: dict[str, str] = {
    "anthropic/error_event_overloaded.sse": "anthropic",
    "anthropic/error_midstream_api_error_excerpt.sse": "anthropic",
    "anthropic/stream_max_tokens_truncated_tool_input.sse": "anthropic",
    "anthropic/stream_parallel_tool_use_empty_input.sse": "anthropic",
    "anthropic/stream_text_hello.sse": "anthropic",
    "anthropic/stream_text_then_tool_use_sdk.sse": "anthropic",
    "anthropic/stream_thinking_signature_text.sse": "anthropic",
    "anthropic/stream_thinking_then_tool_use.sse": "anthropic",
    "anthropic/stream_tool_use_kit_calls_SYNTHETIC.sse": "anthropic",
    "anthropic/stream_web_search_citations.sse": "anthropic",
    "gemini/array_function_call_gemini3.json": "gemini",
    "gemini/array_text_with_thoughts.json": "gemini",
    "gemini/sse_function_call_single_chunk.sse": "gemini",
    "gemini/sse_function_calls_kit_SYNTHETIC.sse": "gemini",
    "gemini/sse_text.sse": "gemini",
    "gemini/sse_text_after_function_response.sse": "gemini",
    "gemini/sse_thought_parts_then_text.sse": "gemini",
    "llamacpp/chat_completions_final_chunk.sse": "llamacpp_chat",
    "llamacpp/chat_completions_reasoning_excerpt.sse": "llamacpp_chat",
    "llamacpp/chat_completions_tool_calls_kit_SYNTHETIC.sse": "llamacpp_chat",
    "llamacpp/completion_stream_excerpt.sse": "llamacpp_native",
    "mistral/chat_stream_text.sse": "mistral",
    "mistral/chat_stream_tool_call.sse": "mistral",
    "mistral/chat_stream_tool_call_2024.sse": "mistral",
    "mistral/chat_stream_tool_calls_kit_SYNTHETIC.sse": "mistral",
    "mistral/fim_completion_nostream_example.json": "mistral",
    "ollama/chat_stream_docs_reconstructed.ndjson": "ollama_chat",
    "ollama/chat_stream_excerpt_sk.ndjson": "ollama_chat",
    "ollama/chat_stream_tools_docs_reconstructed.ndjson": "ollama_chat",
    "ollama/chat_stream_tool_calls_kit_SYNTHETIC.ndjson": "ollama_chat",
    "ollama/chat_thinking_SYNTHETIC_sk.ndjson": "ollama_chat",
    "ollama/generate_midstream_error_docs.ndjson": "ollama_generate",
    "ollama/generate_stream_docs.ndjson": "ollama_generate",
    "ollama/generate_stream_docs_reconstructed.ndjson": "ollama_generate",
    "ollama/generate_stream_excerpt_sk.ndjson": "ollama_generate",
    "openai_chat/compat_groq_event_error_midstream.sse": "openai_chat",
    "openai_chat/error_midstream_server_error_excerpt.sse": "openai_chat",
    "openai_chat/stream_logprobs.sse": "openai_chat",
    "openai_chat/stream_refusal.sse": "openai_chat",
    "openai_chat/stream_structured_output_content.sse": "openai_chat",
    "openai_chat/stream_text_with_usage.sse": "openai_chat",
    "openai_chat/stream_tool_call_single.sse": "openai_chat",
    "openai_chat/stream_tool_calls_kit_SYNTHETIC.sse": "openai_chat",
    "openai_responses/error_event_then_response_failed.sse": "openai_responses",
    "openai_responses/stream_function_call.sse": "openai_responses",
    "openai_responses/stream_function_call_modern.sse": "openai_responses",
    "openai_responses/stream_function_call_usage.sse": "openai_responses",
    "openai_responses/stream_function_calls_kit_SYNTHETIC.sse": "openai_responses",
    "openai_responses/stream_text.sse": "openai_responses",
    "openai_responses/stream_text_after_function_call.sse": "openai_responses",
}


class WireKit:
    """The helpers above, handed to tests as the ``kit`` fixture (conftest is not importable)."""

    fixtures_dir = FIXTURES
    stream_cases = STREAM_CASES
    urls = URLS

    bytes = staticmethod(fixture_bytes)
    ids = staticmethod(counting_ids)
    splits = staticmethod(split_variants)
    run = staticmethod(run)
    maker = staticmethod(maker)
    maker_for = staticmethod(maker_for)

    def replay(self, make: ParserMaker | str, data: bytes) -> list[WireEvent]:
        """Replay ``data`` in every split through ``make`` (or the parser named by it)."""
        return replay_all(maker_for(make) if isinstance(make, str) else make, data)

    def replay_fixture(self, name: str) -> list[WireEvent]:
        """Replay fixture ``name`` through the parser `STREAM_CASES` assigns it."""
        return self.replay(STREAM_CASES[name], fixture_bytes(name))


@pytest.fixture
def kit() -> WireKit:
    """Fixture locations and replay helpers for wire tests."""
    return WireKit()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise any test taking ``stream_case`` over every recorded stream."""
    if "stream_case" in metafunc.fixturenames:
        metafunc.parametrize("stream_case", sorted(STREAM_CASES), ids=lambda n: n)
