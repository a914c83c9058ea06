"""``agents render`` of a user agent extending each bundled wire base gives the API's exact body.

The expected bodies follow each provider's API reference (and the shapes in
``shared/reference/wire-notes.md``): one tool round trip plus a system prompt for chat APIs,
prefix and suffix for FIM and prefix-continuation APIs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.cli.conftest import rendered_body

CTX = {
    "system_prompt": "Be brief.",
    "prefix": "def add(a, b):\n    return ",
    "suffix": "\n\nprint(add(1, 2))\n",
    "history": [
        {"role": "user", "content_blocks": [{"type": "text", "text": "Read a.py"}]},
        {
            "role": "assistant",
            "content_blocks": [
                {"type": "text", "text": "Reading."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "read_file",
                    "input": {"path": "a.py"},
                },
            ],
        },
        {
            "role": "user",
            "content_blocks": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "name": "read_file",
                    "content": "print(1)",
                    "is_error": False,
                }
            ],
        },
        {"role": "assistant", "content_blocks": [{"type": "text", "text": "It prints 1."}]},
        {"role": "user", "content_blocks": [{"type": "text", "text": "Thanks"}]},
    ],
}

OPENAI_MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Read a.py"},
    {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path":"a.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"},
    {"role": "assistant", "content": "It prints 1."},
    {"role": "user", "content": "Thanks"},
]

CASES = {
    "Claude Base Chat": (
        "https://api.anthropic.com/v1/messages",
        {
            "model": "my-model",
            "stream": True,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read a.py"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Reading."},
                        {
                            "type": "tool_use",
                            "id": "call_1",
                            "name": "read_file",
                            "input": {"path": "a.py"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "content": "print(1)"}
                    ],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "It prints 1."}]},
                {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
            ],
        },
    ),
    "OpenAI Base Chat": (
        "https://api.openai.com/v1/chat/completions",
        {
            "model": "my-model",
            "stream": True,
            "messages": OPENAI_MESSAGES,
            "stream_options": {"include_usage": True},
        },
    ),
    "Mistral Base Chat": (
        "https://api.mistral.ai/v1/chat/completions",
        {"model": "my-model", "stream": True, "messages": OPENAI_MESSAGES},
    ),
    "OpenAI Base Responses": (
        "https://api.openai.com/v1/responses",
        {
            "model": "my-model",
            "stream": True,
            "instructions": "Be brief.",
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Read a.py"}],
                },
                {"type": "message", "role": "assistant", "content": "Reading."},
                {
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "read_file",
                    "arguments": '{"path":"a.py"}',
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "print(1)"},
                {"type": "message", "role": "assistant", "content": "It prints 1."},
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Thanks"}],
                },
            ],
        },
    ),
    "Google Base Chat": (
        "https://generativelanguage.googleapis.com/v1beta/models/my-model:streamGenerateContent?alt=sse",
        {
            "system_instruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Read a.py"}]},
                {
                    "role": "model",
                    "parts": [
                        {"text": "Reading."},
                        {"functionCall": {"name": "read_file", "args": {"path": "a.py"}}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "read_file",
                                "response": {"output": "print(1)"},
                            }
                        }
                    ],
                },
                {"role": "model", "parts": [{"text": "It prints 1."}]},
                {"role": "user", "parts": [{"text": "Thanks"}]},
            ],
        },
    ),
    "Ollama Base Chat": (
        "http://localhost:11434/api/chat",
        {
            "model": "my-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Read a.py"},
                {
                    "role": "assistant",
                    "content": "Reading.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "function": {"name": "read_file", "arguments": {"path": "a.py"}},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_name": "read_file",
                    "tool_call_id": "call_1",
                    "content": "print(1)",
                },
                {"role": "assistant", "content": "It prints 1."},
                {"role": "user", "content": "Thanks"},
            ],
        },
    ),
    "Ollama Base FIM": (
        "http://localhost:11434/api/generate",
        {
            "model": "my-model",
            "stream": True,
            "prompt": "def add(a, b):\n    return ",
            "suffix": "\n\nprint(add(1, 2))\n",
            "system": "Be brief.",
        },
    ),
    "Codestral Base FIM": (
        "https://codestral.mistral.ai/v1/fim/completions",
        {
            "model": "my-model",
            "stream": True,
            "prompt": "def add(a, b):\n    return ",
            "suffix": "\n\nprint(add(1, 2))\n",
        },
    ),
    "llama.cpp Base Infill": (
        "http://localhost:8080/infill",
        {
            "model": "my-model",
            "stream": True,
            "input_prefix": "def add(a, b):\n    return ",
            "input_suffix": "\n\nprint(add(1, 2))\n",
            "cache_prompt": True,
        },
    ),
    "OpenAI Base Completions": (
        "http://localhost:8080/v1/completions",
        {
            "model": "my-model",
            "stream": True,
            "prompt": "def add(a, b):\n    return ",
            "stream_options": {"include_usage": True},
        },
    ),
}


@pytest.mark.parametrize("base", sorted(CASES))
def test_user_agent_extending_a_wire_base(run_cli, config_dir: Path, base: str) -> None:
    (config_dir / "agents" / "mine.toml").write_text(
        f'name = "Mine"\nextends = "{base}"\nmodel = "my-model"\n', encoding="utf-8"
    )
    ctx_file = config_dir / "ctx.json"
    ctx_file.write_text(json.dumps(CTX), encoding="utf-8")
    url, body = CASES[base]
    request = rendered_body(run_cli, "Mine", ctx_file)
    assert request["url"] == url
    assert request["body"] == body


def test_model_override_reaches_body_and_url(run_cli, config_dir: Path) -> None:
    (config_dir / "agents" / "mine.toml").write_text(
        'name = "Mine"\nextends = "Google Base Chat"\nmodel = "gemini-a"\n', encoding="utf-8"
    )
    (config_dir / "agent_models.json").write_text('{"Mine": {"model": "gemini-b"}}')
    ctx_file = config_dir / "ctx.json"
    ctx_file.write_text("{}")
    request = rendered_body(run_cli, "Mine", ctx_file)
    assert "/models/gemini-b:streamGenerateContent" in str(request["url"])
