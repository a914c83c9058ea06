"""FIM templates: detection from model names, each family's layout, the instruct refusal."""

from pathlib import Path

import pytest

from qodeassist_lsp.config.fim_templates import (
    FAMILIES,
    FimTemplateError,
    describe,
    detect_family,
    explicit_family,
    fim_prompt,
    fim_stop,
    instruct_model_problem,
    is_fim_agent,
)
from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.config.templating import BodyCompiler, BodyTemplate, TemplateError


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("qwen2.5-coder:7b-base", "qwen"),
        ("Qwen/Qwen2.5-Coder-1.5B", "qwen"),
        ("qwen2.5-coder-7b", "qwen"),
        ("deepseek-coder-v2", "deepseek"),
        ("deepseek-coder:1.3b-base", "deepseek"),
        ("starcoder2:3b", "starcoder"),
        ("bigcode/starcoder2-15b", "starcoder"),
        ("codellama:7b-code", "codellama"),
        ("theqtcompany/codellama-7b-qml", "codellama"),
        ("codestral-latest", "codestral"),
        ("codegemma:2b", "codegemma"),
        ("granite-code:3b", "granite"),
        ("ibm-granite/granite-3b-code-base-2k", "granite"),
    ],
)
def test_family_is_detected_from_the_model_name(model: str, family: str) -> None:
    detected = detect_family(model)
    assert detected is not None and detected.key == family


@pytest.mark.parametrize("model", ["gemma3-270m", "llama3.2:3b", "qwen2.5:7b", "mistral-small"])
def test_models_of_no_fim_family_are_not_detected(model: str) -> None:
    assert detect_family(model) is None


CTX = {"prefix": "def f(x):\n    return {", "suffix": "}\n"}


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            "qwen2.5-coder:7b-base",
            "<|fim_prefix|>def f(x):\n    return {<|fim_suffix|>}\n<|fim_middle|>",
        ),
        (
            "deepseek-coder:6.7b-base",
            "<｜fim▁begin｜>def f(x):\n    return {<｜fim▁hole｜>}\n<｜fim▁end｜>",
        ),
        ("starcoder2:3b", "<fim_prefix>def f(x):\n    return {<fim_suffix>}\n<fim_middle>"),
        ("codellama:7b-code", "<PRE> def f(x):\n    return { <SUF>}\n <MID>"),
        ("codestral-22b", "[SUFFIX]}\n[PREFIX]def f(x):\n    return {"),
        ("codegemma:2b", "<|fim_prefix|>def f(x):\n    return {<|fim_suffix|>}\n<|fim_middle|>"),
        ("granite-code:3b-base", "<fim_prefix>def f(x):\n    return {<fim_suffix>}\n<fim_middle>"),
    ],
)
def test_each_family_wraps_prefix_and_suffix_in_its_tokens(model: str, expected: str) -> None:
    assert fim_prompt({**CTX, "model": model}) == expected


FILES = [
    {"file_path": "src/a.py", "content": "A = 1\n", "header": "# src/a.py\n"},
    {"file_path": "src/b.py", "content": "B = 2"},
]


def test_extra_files_come_first_after_the_family_file_separator() -> None:
    ctx = {**CTX, "model": "qwen2.5-coder:7b-base", "files_metadata": FILES}
    assert fim_prompt(ctx) == (
        "<|file_sep|>src/a.py\nA = 1\n<|file_sep|>src/b.py\nB = 2\n"
        "<|fim_prefix|>def f(x):\n    return {<|fim_suffix|>}\n<|fim_middle|>"
    )
    starcoder = fim_prompt({**ctx, "model": "starcoder2:3b"})
    assert starcoder.startswith(
        "<file_sep>src/a.py\nA = 1\n<file_sep>src/b.py\nB = 2\n<fim_prefix>"
    )
    assert fim_prompt({**ctx, "model": "codegemma:2b"}).startswith("<|file_separator|>src/a.py\n")


def test_extra_files_get_a_comment_header_without_a_file_separator() -> None:
    ctx = {**CTX, "model": "codellama:7b-code", "files_metadata": FILES}
    assert (
        fim_prompt(ctx)
        == "# src/a.py\nA = 1\n// src/b.py\nB = 2\n<PRE> def f(x):\n    return { <SUF>}\n <MID>"
    )


def test_placeholders_inside_the_code_are_not_substituted() -> None:
    ctx = {"prefix": "x = '{suffix}'", "suffix": "y = '{prefix}'", "model": "starcoder2:3b"}
    assert fim_prompt(ctx) == "<fim_prefix>x = '{suffix}'<fim_suffix>y = '{prefix}'<fim_middle>"


def test_every_family_stops_at_its_end_tokens() -> None:
    for family in FAMILIES:
        assert family.stop, family.key
    assert "<|endoftext|>" in fim_stop({"model": "qwen2.5-coder:1.5b-base"})
    assert "<EOT>" in fim_stop({"model": "codellama:7b-code"})
    assert "<|file_separator|>" in fim_stop({"model": "codegemma:2b"})


def test_explicit_family_overrides_detection_and_unknown_names_are_explained() -> None:
    assert fim_prompt({**CTX, "model": "my-finetune"}, family="starcoder").startswith(
        "<fim_prefix>"
    )
    with pytest.raises(FimTemplateError, match=r'family="qwen"'):
        fim_prompt({**CTX, "model": "my-finetune"})
    with pytest.raises(FimTemplateError, match="unknown FIM family 'gpt'; use one of: codegemma"):
        fim_prompt({**CTX, "model": "my-finetune"}, family="gpt")


@pytest.mark.parametrize(
    "model",
    ["qwen2.5-coder:7b-instruct", "deepseek-coder-6.7b-chat", "codegemma:7b-it", "x-Instruct"],
)
def test_instruct_and_chat_models_are_refused_with_base_versus_instruct(model: str) -> None:
    problem = instruct_model_problem(model)
    assert "instruction-tuned" in problem and "base" in problem and "chat-style" in problem
    with pytest.raises(FimTemplateError, match="instruction-tuned"):
        fim_prompt({**CTX, "model": model})


@pytest.mark.parametrize(
    "model", ["qwen2.5-coder:7b-base", "codellama:7b-code", "starcoder2:3b", "granite-code:3b"]
)
def test_base_models_are_accepted(model: str) -> None:
    assert instruct_model_problem(model) == ""


def test_fim_agents_are_recognised_by_endpoint_template_or_tag() -> None:
    assert is_fim_agent("/infill", {}, [])
    assert is_fim_agent("/v1/fim/completions", {}, [])
    assert is_fim_agent("/api/generate", {"suffix": "x"}, [])
    assert is_fim_agent("/v1/completions", {"prompt": "{{ fim_prompt(ctx) | tojson }}"}, [])
    assert is_fim_agent("/v1/completions", {}, ["completion", "fim"])
    assert not is_fim_agent("/v1/completions", {"prompt": "{{ ctx.prefix | tojson }}"}, [])
    assert not is_fim_agent("/api/generate", {"prompt": "x"}, ["completion"])


def test_explicit_family_is_read_from_the_body_template() -> None:
    body = {"options": {"stop": "{{ fim_stop(ctx, family='deepseek') | tojson }}"}}
    assert explicit_family(body) == "deepseek"
    assert explicit_family({"prompt": "{{ fim_prompt(ctx) | tojson }}"}) == ""


def test_describe_names_the_family_and_its_layout() -> None:
    body = {"prompt": "{{ fim_prompt(ctx) | tojson }}"}
    assert describe("starcoder2:3b", "/api/generate", body) == (
        "FIM template: StarCoder2 <fim_prefix>…<fim_suffix>…<fim_middle> "
        "(detected from the model name 'starcoder2:3b')"
    )
    assert "prompt + suffix natively" in describe("codestral-latest", "/v1/completions", body)
    native = describe("qwen2.5-coder:7b-base", "/infill", {"input_prefix": "x"})
    assert native.startswith("FIM: the server builds the FIM prompt (model family Qwen2.5-Coder")


def test_body_templates_call_the_helpers_and_errors_name_the_key(tmp_path: Path) -> None:
    compiler = BodyCompiler([tmp_path])
    body = BodyTemplate(
        {
            "prompt": "{{ fim_prompt(ctx) | tojson }}",
            "stop": "{{ fim_stop(ctx) | tojson }}",
        },
        compiler,
    )
    ctx = complete_context({"prefix": 'a = "\\', "suffix": "\n"}, model="starcoder2:3b")
    rendered = body.render(ctx)
    assert rendered["prompt"] == '<fim_prefix>a = "\\<fim_suffix>\n<fim_middle>'
    assert rendered["stop"][0] == "<|endoftext|>"
    with pytest.raises(TemplateError, match=r"^\[body\]\.prompt: model 'qwen2.5-coder:7b-instr"):
        body.render(complete_context({"prefix": "a"}, model="qwen2.5-coder:7b-instruct"))
