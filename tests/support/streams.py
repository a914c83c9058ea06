"""Small OpenAI-shaped streams and the provider override tests use to reach the replay server.

The Embedded agents speak OpenAI's ``/v1/completions`` (prefix continuation) and
``/v1/chat/completions``; a user provider file named "Embedded" replaces the bundled instance
(and its ``[launch]`` table), so bundled agents talk to a ``ReplayServer`` instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.replay_server import Reply


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def completions_sse(*parts: str) -> bytes:
    """An OpenAI ``/v1/completions`` stream that yields ``parts`` then stops (with usage)."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "text": p, "finish_reason": None}]} for p in parts
    ]
    chunks.append(
        {
            "choices": [{"index": 0, "text": "", "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": len(parts)},
        }
    )
    return _sse(chunks)


def chat_sse(*parts: str) -> bytes:
    """An OpenAI ``/v1/chat/completions`` stream that yields ``parts`` then stops."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": p}}]} for p in parts
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return _sse(chunks)


def sse_reply(body: bytes, **kwargs: Any) -> Reply:
    """A scripted ``text/event-stream`` reply carrying ``body``."""
    return Reply(body=body, content_type="text/event-stream", **kwargs)


def embedded_instance(url: str, name: str = "Embedded") -> str:
    """A provider file that points the bundled ``name`` instance at ``url`` (no ``[launch]``)."""
    return f'name = "{name}"\nclient_api = "llama.cpp"\nurl = "{url}"\n'


def write_embedded_instances(providers: Path, url: str) -> None:
    """Point both bundled embedded instances (completion and instruct) at ``url``."""
    providers.mkdir(parents=True, exist_ok=True)
    (providers / "embedded.toml").write_text(embedded_instance(url))
    (providers / "embedded_instruct.toml").write_text(embedded_instance(url, "Embedded Instruct"))


def completion_reply(*parts: str, **kwargs: Any) -> Reply:
    """A scripted ``/v1/completions`` reply yielding ``parts``."""
    return sse_reply(completions_sse(*parts), **kwargs)


def chat_reply(*parts: str, **kwargs: Any) -> Reply:
    """A scripted ``/v1/chat/completions`` reply yielding ``parts``."""
    return sse_reply(chat_sse(*parts), **kwargs)


def tool_call_reply(name: str, arguments: dict[str, Any], **kwargs: Any) -> Reply:
    """A scripted ``/v1/chat/completions`` reply in which the model calls the tool ``name``."""
    call = {"index": 0, "id": f"call_{name}", "type": "function"}
    function = {"name": name, "arguments": json.dumps(arguments)}
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{**call, "function": function}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return sse_reply(_sse(chunks), **kwargs)
