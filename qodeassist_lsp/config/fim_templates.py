"""Fill-in-the-middle prompt templates per model family, detected from the model name.

A FIM-trained base model expects the text around the cursor wrapped in its own special tokens
(``<|fim_prefix|>…<|fim_suffix|>…<|fim_middle|>`` for Qwen2.5-Coder, ``<PRE> … <SUF>… <MID>``
for CodeLlama …). Servers that build that prompt themselves (llama.cpp ``/infill``, Ollama's
``suffix``, Mistral's ``/v1/fim/completions``) need none of this; raw endpoints (Ollama with
``raw = true``, ``/v1/completions``) do. Body templates reach the families through the
``fim_prompt(ctx)`` and ``fim_stop(ctx)`` helpers; ``family="…"`` overrides the detection (the
agent key set is fixed, so the override lives in the ``[body]`` template, not in a new key).

Instruction-tuned ("instruct", "chat", "it") variants were trained on conversations and answer
a FIM prompt with prose or repeat the code: ``instruct_model_problem`` explains that, and both
the helpers and the agent loader refuse such a model on a FIM endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qodeassist_lsp.wire.errors import QodeAssistError


@dataclass(frozen=True)
class FimFamily:
    """One model family's FIM prompt layout and the tokens that end its answer."""

    key: str
    """The value ``family="…"`` takes."""
    label: str
    """The family's public name, as ``agents render`` prints it."""
    layout: str
    """The prompt with ``{prefix}`` and ``{suffix}`` placeholders."""
    stop: tuple[str, ...]
    """Tokens that end the middle (end of text, file separators, the FIM markers)."""
    patterns: tuple[str, ...]
    """Regular expressions one of which the case-folded model name must match."""
    note: str = ""
    file_sep: str = ""
    """The token the family was trained to put before each file of a repository, if any."""

    def prompt(self, prefix: str, suffix: str, files: Sequence[Mapping[str, str]] = ()) -> str:
        """Return the FIM prompt for the text around the cursor, after the extra ``files``.

        Each extra file (``file_path``, ``content``, optional ``header``) comes first, in the
        order given: after the family's file separator and path, or, for a family without one,
        after its ``header`` comment line (``// <path>`` when there is none).
        """
        extra = "".join(self._file(item) for item in files)
        # str.replace, not str.format: code is full of braces.
        return extra + self.layout.replace("{suffix}", suffix, 1).replace("{prefix}", prefix, 1)

    def _file(self, item: Mapping[str, str]) -> str:
        path, content = item.get("file_path", ""), item.get("content", "")
        if content and not content.endswith("\n"):
            content += "\n"
        if self.file_sep:
            return f"{self.file_sep}{path}\n{content}"
        return (item.get("header") or f"// {path}\n") + content

    @property
    def shape(self) -> str:
        """The layout with ``…`` for the texts, e.g. ``<fim_prefix>…<fim_suffix>…<fim_middle>``."""
        return self.layout.replace("{prefix}", "…").replace("{suffix}", "…")


_QWEN_MARKERS = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
_STARCODER_MARKERS = ("<fim_prefix>", "<fim_suffix>", "<fim_middle>")

# Order matters: the first family whose pattern matches wins (codegemma before any gemma).
FAMILIES: tuple[FimFamily, ...] = (
    FimFamily(
        "codegemma",
        "CodeGemma",
        "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
        ("<|file_separator|>", "<eos>", *_QWEN_MARKERS),
        (r"codegemma",),
        file_sep="<|file_separator|>",
    ),
    FimFamily(
        "qwen",
        "Qwen2.5-Coder",
        "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
        ("<|endoftext|>", "<|file_sep|>", "<|fim_pad|>", "<|repo_name|>", *_QWEN_MARKERS),
        (r"qwen.*coder",),
        file_sep="<|file_sep|>",
    ),
    FimFamily(
        "deepseek",
        "DeepSeek-Coder",
        "<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>",
        ("<｜end▁of▁sentence｜>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "<|EOT|>"),
        (r"deepseek.*coder",),
    ),
    FimFamily(
        "starcoder",
        "StarCoder2",
        "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
        ("<|endoftext|>", "<file_sep>", "<fim_pad>", *_STARCODER_MARKERS),
        (r"starcoder",),
        file_sep="<file_sep>",
    ),
    FimFamily(
        "granite",
        "Granite Code",
        "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
        ("<|endoftext|>", "<fim_pad>", *_STARCODER_MARKERS),
        (r"granite.*code",),
    ),
    FimFamily(
        "codellama",
        "CodeLlama",
        "<PRE> {prefix} <SUF>{suffix} <MID>",
        ("<EOT>", "</s>"),
        (r"code[-_ ]?llama",),
    ),
    FimFamily(
        "codestral",
        "Codestral",
        "[SUFFIX]{suffix}[PREFIX]{prefix}",
        ("</s>", "[SUFFIX]", "[PREFIX]"),
        (r"codestral",),
        note="Mistral's /v1/fim/completions takes prompt + suffix natively; this raw layout "
        "is for a self-hosted Codestral on a raw completion endpoint",
    ),
)

_BY_KEY = {family.key: family for family in FAMILIES}

# "instruct", "chat" or "it" as a whole word of the model name (qwen2.5-coder:7b-instruct,
# deepseek-coder-6.7b-chat, gemma-2b-it); "-code" tags and "base" are left alone.
_INSTRUCT = re.compile(r"(?:^|[-_:./ ])(instruct|chat|it)(?=$|[-_:./ ])")


class FimTemplateError(QodeAssistError, ValueError):
    """No FIM layout fits the model, or the model is an instruct/chat model."""


def detect_family(model: str) -> FimFamily | None:
    """Return the FIM family the model name belongs to, or None when none matches."""
    name = model.casefold()
    for family in FAMILIES:
        if any(re.search(pattern, name) for pattern in family.patterns):
            return family
    return None


def family_by_key(key: str) -> FimFamily:
    """Return the family called ``key`` (``qwen``, ``deepseek`` …); raise with the choices."""
    family = _BY_KEY.get(key.strip().casefold())
    if family is None:
        raise FimTemplateError(f"unknown FIM family {key!r}; use one of: {', '.join(_BY_KEY)}")
    return family


def instruct_model_problem(model: str) -> str:
    """Return why ``model`` does not belong on a FIM endpoint, or ``""`` when it may."""
    match = _INSTRUCT.search(model.casefold())
    if match is None:
        return ""
    return (
        f"model {model!r} is an instruction-tuned ({match.group(1)}) model, but this agent "
        "sends a fill-in-the-middle prompt. FIM needs the base (pre-trained) model of a "
        "FIM-trained family — e.g. qwen2.5-coder:7b-base, deepseek-coder:6.7b-base, "
        "starcoder2:3b, codellama:7b-code, codegemma:2b, granite-code:3b-base; an instruct/chat "
        "model answers FIM tokens with prose or repeated code. Use the base model here, or put "
        "the instruct model on a chat-style completion agent (the <code_context> prompt)"
    )


def resolve_family(model: str, family: str = "") -> FimFamily:
    """Return the family for ``model`` (``family`` overrides); raise a clear error otherwise."""
    problem = instruct_model_problem(model)
    if problem:
        raise FimTemplateError(problem)
    if family:
        return family_by_key(family)
    detected = detect_family(model)
    if detected is None:
        raise FimTemplateError(
            f"no FIM template is known for model {model!r}; name the family in the body "
            f'template, e.g. fim_prompt(ctx, family="qwen") (families: {", ".join(_BY_KEY)})'
        )
    return detected


def fim_prompt(ctx: Mapping[str, Any], family: str = "") -> str:
    """Body helper: ``ctx.files_metadata``, ``ctx.prefix``, ``ctx.suffix`` in the FIM layout."""
    chosen = resolve_family(str(ctx.get("model") or ""), family)
    files = [item for item in ctx.get("files_metadata") or () if isinstance(item, Mapping)]
    return chosen.prompt(str(ctx.get("prefix") or ""), str(ctx.get("suffix") or ""), files)


def fim_stop(ctx: Mapping[str, Any], family: str = "") -> list[str]:
    """Body helper: the stop tokens of ``ctx.model``'s FIM family."""
    return list(resolve_family(str(ctx.get("model") or ""), family).stop)


FIM_HELPERS = {"fim_prompt": fim_prompt, "fim_stop": fim_stop}

# Endpoints whose server builds the FIM prompt from prefix + suffix itself.
NATIVE_FIM_ENDPOINTS = frozenset({"/infill", "/v1/fim/completions", "/fim/completions"})


def is_fim_agent(endpoint: str, body: Mapping[str, Any], tags: list[str]) -> bool:
    """Whether an agent sends a FIM request: a FIM endpoint or template, or the ``fim`` tag."""
    if endpoint in NATIVE_FIM_ENDPOINTS or "fim" in tags:
        return True
    if endpoint == "/api/generate" and "suffix" in body:  # Ollama's own FIM
        return True
    return any("fim_prompt(" in value for value in _strings(body))


_FAMILY_ARGUMENT = re.compile(r"""fim_(?:prompt|stop)\([^)]*family\s*=\s*["'](\w+)["']""")


def explicit_family(body: Mapping[str, Any]) -> str:
    """Return the ``family="…"`` a body template passes to the FIM helpers, or ``""``."""
    for value in _strings(body):
        match = _FAMILY_ARGUMENT.search(value)
        if match:
            return match.group(1)
    return ""


def _strings(node: Any) -> list[str]:
    if isinstance(node, Mapping):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return [node] if isinstance(node, str) else []


def _server_builds_prompt(endpoint: str, body: Mapping[str, Any]) -> bool:
    return endpoint in NATIVE_FIM_ENDPOINTS or (endpoint == "/api/generate" and "suffix" in body)


def describe(model: str, endpoint: str, body: Mapping[str, Any]) -> str:
    """One line for ``agents render``: the FIM family and layout used for ``model``, or why none."""
    family = explicit_family(body)
    if not any("fim_prompt(" in value for value in _strings(body)):
        who = (
            "the server builds the FIM prompt"
            if _server_builds_prompt(endpoint, body)
            else "the agent's body writes its own FIM prompt"
        )
        detected = detect_family(model)
        named = f"model family {detected.label}" if detected else "no known family in the name"
        return f"FIM: {who} ({named}; fim_prompt(ctx) is not used)"
    try:
        chosen = resolve_family(model, family)
    except FimTemplateError as exc:
        return f"FIM: {exc}"
    how = f'family="{family}"' if family else f"detected from the model name {model!r}"
    line = f"FIM template: {chosen.label} {chosen.shape} ({how})"
    return f"{line}; {chosen.note}" if chosen.note else line
