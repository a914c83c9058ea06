"""Finding model servers on this machine: which ports answer, what kind of server, which models.

Each target is a loopback ``host:port``. All targets are probed at once, every request with a
short timeout, so a machine with nothing running answers in well under a second (a closed port
refuses at once). A port that answers is identified from its API: Ollama by ``/api/version`` and
``/api/tags``, LM Studio by ``/api/v0/models``, llama.cpp (and llamafile) by ``/props``, and any
other OpenAI-compatible server by ``/v1/models`` (vLLM, SGLang and KoboldCpp by its
``owned_by``). What a server says about a model is recorded as it is: Ollama's ``/api/show``
capabilities and template (``insert`` or ``.Suffix``: it builds FIM prompts itself), llama.cpp's
``/infill`` (answered with 501 when the loaded GGUF has no FIM tokens) and chat template, LM
Studio's model type. Nothing here decides what to configure; ``plan`` does.

Whether a model is instruction-tuned is read from what the server says, not from a chat
template alone (base models ship one too): Ollama's template (one that takes no messages,
system prompt or response is a raw prompt: a base model) and, for llama.cpp and vLLM, the model
name and GGUF file name (``instruction_tuned``).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import httpx

from qodeassist_lsp.wire.errors import QodeAssistError
from qodeassist_lsp.wire.urls import is_loopback_host

ServerKind = Literal["ollama", "llama.cpp", "lmstudio", "openai"]
Status = Literal["found", "closed", "unknown"]

PROBE_ENV = "QODEASSIST_SETUP_PROBE"
"""Comma-separated ``HOST:PORT`` (or ``PORT``) list that replaces the default targets."""
PROBE_TIMEOUT_S = 2.0
MAX_SHOWN_MODELS = 32
"""Ollama: at most this many ``/api/show`` requests per server."""

DEFAULT_PORTS: tuple[tuple[int, str], ...] = (
    (11434, "Ollama"),
    (1234, "LM Studio"),
    (8080, "llama.cpp server, llamafile, LocalAI"),
    (8012, "llama.cpp server as llama.vim / llama.vscode start it"),
    (8000, "vLLM"),
    (30000, "SGLang"),
    (1337, "Jan"),
    (5000, "text-generation-webui"),
    (5001, "KoboldCpp"),
)
"""The ports probed by default, with the servers that usually listen there."""

# A name that says instruction-tuned (``-Instruct``, Gemma's ``-it``, ``-chat``) or pre-trained.
_TUNED = re.compile(r"(?:^|[-_:./ ])(instruct|it|chat|sft|dpo)(?=$|[-_:./ ])")
_PRETRAINED = re.compile(r"(?:^|[-_:./ ])(base|pt|pretrained)(?=$|[-_:./ ])")
# Families whose instruction-tuned releases always say so, so that the unmarked name is the
# pre-trained model (gemma-3-270m, Llama-3.2-1B, Qwen2.5-7B, SmolLM2-135M). Qwen3, Phi-4 and
# others publish their tuned model under the plain name: for them the name says nothing.
_UNMARKED_IS_BASE = re.compile(r"gemma|llama|qwen-?2(?![0-9])|smollm(?![3-9])|mistral-7b")
_OWNERS = {"vllm": "vLLM", "sglang": "SGLang", "koboldcpp": "KoboldCpp", "llamacpp": "llama.cpp"}
MODEL_SERVERS = frozenset(_OWNERS.values())
"""The servers known, by their ``owned_by``, to run the models they list (not a proxy)."""


class ProbeTargetError(QodeAssistError, ValueError):
    """A probe target is not a loopback ``HOST:PORT``."""


@dataclass(frozen=True)
class Target:
    """One ``host:port`` on this machine to probe."""

    host: str
    port: int

    @property
    def base_url(self) -> str:
        """``http://host:port`` (IPv6 hosts bracketed)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class FoundModel:
    """A model a server offers, with what the server itself says about it."""

    name: str
    fim: bool | None = None
    """Server builds FIM prompts (Ollama ``insert``, llama.cpp ``/infill``); None: unsure."""
    chat: bool | None = None
    """Instruction-tuned, with a chat template (False: a base model); None: unsaid."""
    embedding: bool = False
    tools: bool = False
    size: int | None = None
    """Bytes on disk, when the server says."""
    evidence: str = ""
    """What the server said, for the plan's explanation."""

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return asdict(self)


@dataclass(frozen=True)
class FoundServer:
    """A model server that answered, and its models."""

    kind: ServerKind
    label: str
    """``Ollama``, ``llama.cpp``, ``LM Studio``, ``vLLM`` … as the user knows it."""
    target: Target
    version: str = ""
    models: tuple[FoundModel, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {
            "kind": self.kind,
            "label": self.label,
            "url": self.target.base_url,
            "version": self.version,
            "models": [model.to_json() for model in self.models],
        }


@dataclass(frozen=True)
class ProbeOutcome:
    """What one target answered."""

    target: Target
    status: Status
    detail: str = ""
    server: FoundServer | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {
            "target": str(self.target),
            "status": self.status,
            "detail": self.detail,
            "server": self.server.to_json() if self.server else None,
        }


@dataclass
class _Answers:
    """The JSON bodies of the identifying GETs (None: no 2xx JSON answer)."""

    models: Any = None
    version: Any = None
    tags: Any = None
    props: Any = None
    lmstudio: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def instruction_tuned(*names: str) -> tuple[bool | None, str]:
    """Tell from model and file names whether the model is instruction-tuned, and why.

    True when a name says so (``instruct``, ``it``, ``chat``); False when one says ``base`` /
    ``pt``, or names a family whose tuned releases are always marked; None when they do not tell.
    """
    folded = [name.casefold() for name in names if name]
    for name in folded:
        if match := _TUNED.search(name):
            return True, f"{name!r} says {match.group(1)!r}: instruction-tuned"
    for name in folded:
        if match := _PRETRAINED.search(name):
            return False, f"{name!r} says {match.group(1)!r}: a base model"
    for name in folded:
        if match := _UNMARKED_IS_BASE.search(name):
            return False, (
                f"{name!r}: a {match.group(0)} model without -it/-instruct in its name is the "
                "base model"
            )
    return None, ""


def parse_target(text: str) -> Target:
    """Read ``PORT``, ``HOST:PORT`` or ``[V6]:PORT``; only hosts of this machine are accepted."""
    value = text.strip()
    host, _, port_text = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ProbeTargetError(f"{text!r} is not a port or HOST:PORT (e.g. 11434, 127.0.0.1:8080)")
    if not is_loopback_host(host):
        raise ProbeTargetError(
            f"{text!r}: setup only probes this machine (localhost, 127.0.0.1, ::1); for a model "
            "server elsewhere write a provider instance (see docs/configuration.md)"
        )
    return Target(host, int(port_text))


def default_targets(env: Mapping[str, str] | None = None) -> list[Target]:
    """Return ``$QODEASSIST_SETUP_PROBE``'s targets when set, else the default ports."""
    value = (os.environ if env is None else env).get(PROBE_ENV, "").strip()
    if value:
        return [parse_target(item) for item in value.split(",") if item.strip()]
    return [Target("127.0.0.1", port) for port, _ in DEFAULT_PORTS]


async def discover(
    targets: Sequence[Target],
    limit_s: float = PROBE_TIMEOUT_S,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[ProbeOutcome]:
    """Probe every target at once; one outcome per target, in the order given."""
    # trust_env off: a proxy from the environment must never see (or break) loopback probes.
    async with httpx.AsyncClient(
        timeout=limit_s, transport=transport, trust_env=False, follow_redirects=False
    ) as client:
        return list(await asyncio.gather(*(_probe(client, target) for target in targets)))


async def _get(client: httpx.AsyncClient, url: str, body: dict[str, Any] | None = None) -> Any:
    """GET ``url`` (POST ``body`` when given); its JSON body, or None for any failure."""
    try:
        if body is None:
            response = await client.get(url)
        else:
            response = await client.post(url, json=body)
    except httpx.HTTPError:
        return None
    if not response.is_success:
        return None
    try:
        return response.json()
    except ValueError:
        return None


async def _probe(client: httpx.AsyncClient, target: Target) -> ProbeOutcome:
    base = target.base_url
    try:
        first = await client.get(f"{base}/v1/models")
    except (httpx.ConnectError, httpx.ConnectTimeout):
        return ProbeOutcome(target, "closed", "nothing listens")
    except httpx.HTTPError as exc:
        return ProbeOutcome(target, "unknown", f"no HTTP answer ({type(exc).__name__})")
    answers = _Answers()
    if first.is_success:
        try:
            answers.models = first.json()
        except ValueError:
            answers.models = None
    answers.version, answers.tags, answers.props, answers.lmstudio = await asyncio.gather(
        _get(client, f"{base}/api/version"),
        _get(client, f"{base}/api/tags"),
        _get(client, f"{base}/props"),
        _get(client, f"{base}/api/v0/models"),
    )
    server = await _identify(client, target, answers)
    if server is None:
        return ProbeOutcome(
            target,
            "unknown",
            f"answers HTTP (GET /v1/models: {first.status_code}) but is no "
            "model server setup knows",
        )
    return ProbeOutcome(target, "found", f"{server.label}, {len(server.models)} model(s)", server)


def _dicts(value: Any, key: str) -> list[dict[str, Any]]:
    items = value.get(key) if isinstance(value, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


async def _identify(
    client: httpx.AsyncClient, target: Target, answers: _Answers
) -> FoundServer | None:
    version, tags = answers.version, answers.tags
    if (
        isinstance(version, dict)
        and "version" in version
        and isinstance(tags, dict)
        and isinstance(tags.get("models"), list)
    ):
        models = await _ollama_models(client, target, _dicts(tags, "models"))
        return FoundServer("ollama", "Ollama", target, str(version["version"]), tuple(models))
    lmstudio = _dicts(answers.lmstudio, "data")
    if lmstudio or (isinstance(answers.lmstudio, dict) and answers.lmstudio.get("object")):
        return FoundServer("lmstudio", "LM Studio", target, "", tuple(_lmstudio_models(lmstudio)))
    listed = _dicts(answers.models, "data")
    if isinstance(answers.props, dict) and "default_generation_settings" in answers.props:
        models = await _llamacpp_models(client, target, answers.props, listed)
        version = str(answers.props.get("build_info") or "")
        return FoundServer("llama.cpp", "llama.cpp", target, version, tuple(models))
    if isinstance(answers.models, dict) and isinstance(answers.models.get("data"), list):
        owners = {str(item.get("owned_by") or "").casefold() for item in listed}
        label = next((_OWNERS[o] for o in sorted(owners) if o in _OWNERS), "OpenAI-compatible")
        kind: ServerKind = "llama.cpp" if label == "llama.cpp" else "openai"
        models = [_listed_model(str(item["id"]), label) for item in listed if item.get("id")]
        return FoundServer(kind, label, target, "", tuple(models))
    return None


def _listed_model(name: str, label: str) -> FoundModel:
    tuned, why = instruction_tuned(name)
    evidence = f"listed by /v1/models ({label})" + (f"; {why}" if why else "")
    return FoundModel(name, chat=False if tuned is False else None, evidence=evidence)


def _ollama_chat(template: str) -> tuple[bool | None, str]:
    """Whether an Ollama template takes a conversation; a bare ``.Prompt`` one is a base model."""
    if not template:
        return None, ""
    if any(key in template for key in (".Messages", ".System", ".Response")):
        return True, ""
    return False, "; template takes no messages (a base model)"


async def _ollama_models(
    client: httpx.AsyncClient, target: Target, tags: list[dict[str, Any]]
) -> list[FoundModel]:
    models = []
    # One at a time: a local Ollama answers /api/show in milliseconds, and in order is simpler
    # on the server than a burst.
    for index, tag in enumerate(tags):
        name = str(tag.get("name") or tag.get("model") or "")
        if not name:
            continue
        size = tag.get("size") if isinstance(tag.get("size"), int) else None
        show = (
            await _get(client, f"{target.base_url}/api/show", {"model": name})
            if index < MAX_SHOWN_MODELS
            else None
        )
        if not isinstance(show, dict):
            models.append(FoundModel(name, size=size, evidence="/api/show did not answer"))
            continue
        capabilities = [str(c) for c in show.get("capabilities") or () if isinstance(c, str)]
        template = str(show.get("template") or "")
        fim = "insert" in capabilities or ".Suffix" in template
        said = ", ".join(capabilities) or "none listed"
        chat, why = _ollama_chat(template)
        models.append(
            FoundModel(
                name,
                fim=fim,
                chat=chat,
                embedding="embedding" in capabilities and "completion" not in capabilities,
                tools="tools" in capabilities,
                size=size,
                evidence=f"Ollama capabilities: {said}"
                + ("; template takes .Suffix" if ".Suffix" in template else "")
                + why,
            )
        )
    return models


def _lmstudio_models(items: list[dict[str, Any]]) -> list[FoundModel]:
    models = []
    for item in items:
        name = str(item.get("id") or "")
        if not name:
            continue
        kind = str(item.get("type") or "")
        state = str(item.get("state") or "")
        models.append(
            FoundModel(
                name,
                embedding=kind == "embeddings",
                tools="tool_use" in (item.get("capabilities") or ()),
                evidence=f"LM Studio type {kind or '?'}, {state or 'state unknown'}",
            )
        )
    return models


async def _llamacpp_models(
    client: httpx.AsyncClient,
    target: Target,
    props: dict[str, Any],
    listed: list[dict[str, Any]],
) -> list[FoundModel]:
    names = [str(item["id"]) for item in listed if item.get("id")]
    if not names:
        alias = props.get("model_alias") or os.path.basename(str(props.get("model_path") or ""))
        names = [str(alias)] if alias else []
    template = bool(props.get("chat_template"))
    path = os.path.basename(str(props.get("model_path") or ""))
    # llama-server checks the FIM tokens before it generates anything: 501 means the loaded GGUF
    # has none; n_predict 0 keeps a FIM model's answer to a few prompt tokens. In router mode
    # (several models) the request would need a model, so it is not asked.
    fim = await _infill_supported(client, target) if len(names) == 1 else None
    infill = {True: "/infill works", False: "/infill: 501, no FIM tokens"}
    checked = infill[fim] if fim is not None else "/infill not checked"
    models = []
    for name in names:
        # A GGUF carries a chat template whether or not the model was tuned to follow turns:
        # the names decide, the template only when they do not tell.
        tuned, why = instruction_tuned(name, path)
        chat = template and tuned is not False
        said = f"chat template: {'yes' if template else 'none'}" + (f" ({why})" if why else "")
        models.append(FoundModel(name, fim=fim, chat=chat, evidence=f"{said}; {checked}"))
    return models


async def _infill_supported(client: httpx.AsyncClient, target: Target) -> bool | None:
    body = {"input_prefix": "", "input_suffix": "", "n_predict": 0, "stream": False}
    try:
        response = await client.post(f"{target.base_url}/infill", json=body)
    except httpx.HTTPError:
        return None
    if response.status_code == 501:
        return False
    return True if response.is_success else None
