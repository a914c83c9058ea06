"""The ``client_api`` values a provider instance may name: thirteen HTTP APIs, three processes.

Each HTTP one maps to one wire protocol (how bytes are spoken) plus the defaults of the original:
the endpoint used when an agent gives none and the model-listing endpoint. A process one
(``process`` set) names a local program started from the instance's ``command`` and spoken to
over its pipes; its agents' ``[body]`` is rendered in the OpenAI chat shape, and the process
provider takes the prompt from its ``messages``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.urls import is_loopback_host


@dataclass(frozen=True, kw_only=True)
class ClientApi:
    """One ``client_api`` value and the wire facts that come with it (fields by keyword only)."""

    name: str
    protocol: WireProtocol
    default_endpoint: str
    models_endpoint: str
    openai_family: bool = False
    """Model listing uses ``/models`` when the URL ends in ``/v1``, else ``/v1/models``."""
    key_optional: bool = False
    """Usually a local server, keyless unless its owner switched authentication on.

    Only a hint: whether an instance may go without a key is `key_is_optional` (its URL too).
    """
    process: str = ""
    """``acp``, ``claude-stream-json`` or ``gemini-stream-json``: a program on pipes; else ""."""


ACP = "acp"
"""An Agent Client Protocol agent (``opencode acp``, ``qwen --acp``, ...) on stdio."""
CLAUDE_STREAM_JSON = "claude-stream-json"
"""A ``claude -p --output-format stream-json``-shaped program: one JSON event per line."""

GEMINI_STREAM_JSON = "gemini-stream-json"
"""Gemini CLI's headless ``--output-format stream-json``: one JSON event per line."""

_OPENAI = WireProtocol.OPENAI_CHAT
_RESPONSES = WireProtocol.OPENAI_RESPONSES

CLIENT_APIS: dict[str, ClientApi] = {
    api.name: api
    for api in (
        ClientApi(
            name="Claude",
            protocol=WireProtocol.ANTHROPIC,
            default_endpoint="/v1/messages",
            models_endpoint="/v1/models?limit=1000",
        ),
        ClientApi(
            name="Google AI",
            protocol=WireProtocol.GOOGLE,
            default_endpoint="/models/${MODEL}:streamGenerateContent?alt=sse",
            models_endpoint="/models",
        ),
        ClientApi(
            name="llama.cpp",
            protocol=WireProtocol.LLAMACPP,
            default_endpoint="/v1/chat/completions",
            models_endpoint="/v1/models",
            key_optional=True,
        ),
        ClientApi(
            name="Mistral AI",
            protocol=WireProtocol.MISTRAL,
            default_endpoint="/v1/chat/completions",
            models_endpoint="/v1/models",
        ),
        ClientApi(
            name="Codestral",
            protocol=WireProtocol.MISTRAL,
            default_endpoint="/v1/chat/completions",
            models_endpoint="/v1/models",
        ),
        ClientApi(
            name="Ollama (Native)",
            protocol=WireProtocol.OLLAMA,
            default_endpoint="/api/chat",
            models_endpoint="/api/tags",
            key_optional=True,
        ),
        ClientApi(
            name="Ollama (OpenAI-compatible)",
            protocol=_OPENAI,
            default_endpoint="/chat/completions",
            models_endpoint="/models",
            openai_family=True,
            key_optional=True,
        ),
        ClientApi(
            name="OpenAI (Chat Completions)",
            protocol=_OPENAI,
            default_endpoint="/chat/completions",
            models_endpoint="/models",
            openai_family=True,
        ),
        ClientApi(
            name="OpenAI (Responses API)",
            protocol=_RESPONSES,
            default_endpoint="/responses",
            models_endpoint="/models",
            openai_family=True,
        ),
        # Usually a local server (vLLM, a llama.cpp fork): a key only when its owner set one.
        ClientApi(
            name="OpenAI Compatible",
            protocol=_OPENAI,
            default_endpoint="/chat/completions",
            models_endpoint="/models",
            openai_family=True,
            key_optional=True,
        ),
        ClientApi(
            name="OpenRouter",
            protocol=_OPENAI,
            default_endpoint="/chat/completions",
            models_endpoint="/models",
            openai_family=True,
        ),
        ClientApi(
            name="LM Studio (Chat Completions)",
            protocol=_OPENAI,
            default_endpoint="/chat/completions",
            models_endpoint="/models",
            openai_family=True,
            key_optional=True,
        ),
        ClientApi(
            name="LM Studio (Responses API)",
            protocol=_RESPONSES,
            default_endpoint="/responses",
            models_endpoint="/models",
            openai_family=True,
            key_optional=True,
        ),
        ClientApi(
            name="ACP Agent",
            protocol=_OPENAI,
            default_endpoint="",
            models_endpoint="",
            key_optional=True,
            process=ACP,
        ),
        ClientApi(
            name="Claude Code",
            protocol=_OPENAI,
            default_endpoint="",
            models_endpoint="",
            key_optional=True,
            process=CLAUDE_STREAM_JSON,
        ),
        ClientApi(
            name="Gemini CLI",
            protocol=_OPENAI,
            default_endpoint="",
            models_endpoint="",
            key_optional=True,
            process=GEMINI_STREAM_JSON,
        ),
    )
}


MODEL_SERVER_APIS = frozenset(
    {
        "llama.cpp",
        "Ollama (Native)",
        "Ollama (OpenAI-compatible)",
        "LM Studio (Chat Completions)",
        "LM Studio (Responses API)",
    }
)
"""The APIs of model servers that run models themselves: on a loopback URL, the model is here.

Any other HTTP API on a loopback URL may be a proxy in front of a billed service (LiteLLM, a
company gateway, an SSH tunnel), so it counts as remote unless its instance says ``local``.
"""


def key_is_optional(api: ClientApi, url: str) -> bool:
    """Whether an instance of ``api`` at ``url`` may send no key: a local server on this machine.

    The one rule for the missing-key check before sending, ``secrets status`` and ``doctor``: a
    ``key_optional`` API on a loopback URL (a process API is a local program). The same API on
    any other host (DeepSeek and Qwen are "OpenAI Compatible" on https) needs its key.
    """
    if not api.key_optional:
        return False
    return bool(api.process) or is_loopback_host(urlsplit(url).hostname or "")


def models_endpoint(api: ClientApi, instance_url: str) -> str:
    """Return the model-listing endpoint for ``api`` at ``instance_url`` (the /v1 rule)."""
    if not api.openai_family:
        return api.models_endpoint
    return "/models" if instance_url.rstrip("/").endswith("/v1") else "/v1/models"
