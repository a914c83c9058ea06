"""What setup proposes for found servers, against the real bundled agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.core.setup.apply import apply_plan
from qodeassist_lsp.core.setup.plan import (
    RECIPES,
    build_plan,
    chat_capable,
    completion_parent,
    is_base_model,
)
from qodeassist_lsp.core.setup.probe import FoundModel, FoundServer, Target

GB = 1_000_000_000


def _config(root: Path, pipelines: str | None = None) -> Configuration:
    config_root = root / "config"
    config_root.mkdir(exist_ok=True)
    if pipelines is not None:
        (config_root / "pipelines.toml").write_text(pipelines, encoding="utf-8")
    return load_configuration(ConfigPaths(config_root, root / "data", bundled_root()))


def _ollama(port: int = 11434) -> FoundServer:
    models = (
        FoundModel("qwen2.5-coder:1.5b-base", fim=True, size=1 * GB),
        FoundModel("qwen2.5-coder:7b", fim=True, tools=True, size=5 * GB),
        FoundModel("llama3.2:latest", fim=False, tools=True, size=2 * GB),
        FoundModel("nomic-embed-text:latest", fim=False, embedding=True, size=GB // 4),
    )
    return FoundServer("ollama", "Ollama", Target("127.0.0.1", port), "0.5.1", models)


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("qwen2.5-coder:1.5b-base", True),
        ("codellama:7b-code", True),
        ("starcoder2:3b", True),
        ("starcoder2:15b-instruct", False),
        ("qwen2.5-coder:7b", False),
        ("qwen2.5-coder:7b-instruct", False),
        ("llama3.2:latest", False),
        ("Qwen/Qwen2.5-Coder-1.5B", True),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", False),
        ("meta-llama/Llama-3.1-8B", False),
    ],
)
def test_base_models_are_told_by_their_name(name: str, base: bool) -> None:
    assert is_base_model(name) is base


def test_instruct_models_never_go_to_fim_and_base_models_never_to_chat() -> None:
    recipe = RECIPES["ollama"]
    assert completion_parent(FoundModel("qwen2.5-coder:7b-instruct", fim=True), recipe) == ""
    assert completion_parent(FoundModel("qwen2.5-coder:1.5b-base", fim=True), recipe) == (
        "Ollama Completion — FIM"
    )
    # No insert capability: qodeassist-lsp builds the prompt from the family's tokens.
    assert completion_parent(FoundModel("qwen2.5-coder:1.5b-base", fim=False), recipe) == (
        "Ollama Completion — FIM Template"
    )
    assert completion_parent(FoundModel("llama3.2", fim=False), recipe) == ""
    assert not chat_capable(FoundModel("qwen2.5-coder:1.5b-base"))
    assert not chat_capable(FoundModel("nomic-embed-text"))
    assert not chat_capable(FoundModel("gemma3-270m", chat=False))
    assert chat_capable(FoundModel("llama3.2"))


def test_ollama_on_its_port_uses_the_bundled_instance_and_fills_every_pipeline(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    plan = build_plan([_ollama()], config)

    assert plan.providers == []  # "Ollama (Native)" already points at localhost:11434
    by_role = {(a.role, a.model): a for a in plan.agents}
    completion = by_role["completion", "qwen2.5-coder:1.5b-base"]  # the smallest FIM model
    assert completion.extends == "Ollama Completion — FIM"
    assert completion.name == "Ollama Completion — qwen2.5-coder:1.5b-base"
    assert completion.provider_instance == ""
    assert [a.model for a in plan.agents if a.role == "chat"] == [
        "qwen2.5-coder:7b",
        "llama3.2:latest",
    ]
    assert by_role["chat", "llama3.2:latest"].enable_tools is True
    assert by_role["refactor", "qwen2.5-coder:7b"].extends == "Ollama Quick Refactor — Simple"
    slots = {s.slot: s for s in plan.slots}
    assert slots["code_completion"].after == [completion.name, "Embedded Completion"]
    assert slots["chat_assistant"].after[:2] == [
        "Ollama Chat — qwen2.5-coder:7b",
        "Ollama Chat — llama3.2:latest",
    ]
    assert slots["quick_refactor"].after == "Ollama Quick Refactor — qwen2.5-coder:7b"
    assert slots["chat_compression"].after == "Ollama Compression — qwen2.5-coder:7b"


def test_another_port_gets_one_instance_that_extends_the_bundled_one(tmp_path: Path) -> None:
    plan = build_plan([_ollama(11500)], _config(tmp_path))

    assert [(p.name, p.extends, p.url) for p in plan.providers] == [
        ("Ollama (Native) :11500", "Ollama (Native)", "http://127.0.0.1:11500")
    ]
    assert {a.provider_instance for a in plan.agents} == {"Ollama (Native) :11500"}
    assert all(":11500" in a.name for a in plan.agents)


def test_a_vllm_server_gets_an_openai_compatible_instance_with_v1(tmp_path: Path) -> None:
    server = FoundServer(
        "openai",
        "vLLM",
        Target("127.0.0.1", 8000),
        models=(FoundModel("Qwen/Qwen2.5-Coder-7B-Instruct"),),
    )
    plan = build_plan([server], _config(tmp_path))

    assert [(p.name, p.extends, p.url) for p in plan.providers] == [
        ("vLLM :8000", "OpenAI Compatible", "http://127.0.0.1:8000/v1")
    ]
    # vLLM runs its models here; an unnamed OpenAI-compatible server on loopback may be a proxy.
    assert [p.local for p in plan.providers] == [True]
    chat = next(a for a in plan.agents if a.role == "chat")
    assert chat.enable_tools is False and chat.provider_instance == "vLLM :8000"
    assert not any(a.role == "completion" for a in plan.agents)
    assert any("no FIM-capable" in note for note in plan.notes)


def test_an_unnamed_openai_compatible_server_is_not_declared_local(tmp_path: Path) -> None:
    server = FoundServer(
        "openai",
        "OpenAI-compatible",
        Target("127.0.0.1", 4000),
        models=(FoundModel("gpt-4o-mini"),),
    )
    plan = build_plan([server], _config(tmp_path))
    assert [p.local for p in plan.providers] == [False]


def test_slots_the_user_chose_are_kept_with_a_note(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        '[pipelines]\nquick_refactor = "Claude Quick Refactor"\n'
        'code_completion = ["Codestral Completion — FIM"]\n',
    )
    plan = build_plan([_ollama()], config)

    slots = {s.slot for s in plan.slots}
    assert "quick_refactor" not in slots and "code_completion" not in slots
    assert any("quick_refactor keeps 'Claude Quick Refactor'" in n for n in plan.notes)
    assert any("code_completion keeps 'Codestral Completion — FIM'" in n for n in plan.notes)


def test_applying_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    config = _config(tmp_path)
    first = apply_plan(build_plan([_ollama(11500)], config), config.paths)
    assert not first.problems, [p.format() for p in first.problems]

    again = build_plan([_ollama(11500)], _config(tmp_path))
    assert not again.writes
    assert {a.state for a in again.agents} == {"same"}
    assert again.providers == [] and again.slots == []


def test_lm_studio_completion_goes_through_its_chat_completions_instance(tmp_path: Path) -> None:
    server = FoundServer(
        "lmstudio",
        "LM Studio",
        Target("127.0.0.1", 1234),
        models=(FoundModel("qwen/qwen2.5-coder-1.5b"), FoundModel("qwen2.5-7b-instruct")),
    )
    plan = build_plan([server], _config(tmp_path))

    assert plan.providers == []  # both bundled LM Studio instances point at localhost:1234
    agents = {a.role: a for a in plan.agents}
    assert agents["completion"].extends == "llama.cpp Completion — FIM Template"
    assert agents["completion"].provider_instance == "LM Studio (Chat Completions)"
    assert agents["chat"].extends == "LM Studio Chat"
    assert (agents["chat"].model, agents["chat"].provider_instance) == ("qwen2.5-7b-instruct", "")
    assert apply_plan(plan, plan_paths(tmp_path)).problems == []


def plan_paths(root: Path) -> ConfigPaths:
    return ConfigPaths(root / "config", root / "data", bundled_root())


def test_a_file_of_the_same_slug_is_never_taken_over(tmp_path: Path) -> None:
    config = _config(tmp_path)
    agents = tmp_path / "config" / "agents"
    agents.mkdir()
    mine = agents / "setup_ollama_chat_llama3_2_latest.toml"
    mine.write_text("# someone else's file\n", encoding="utf-8")
    plan = build_plan([_ollama()], config)

    chat = next(a for a in plan.agents if a.model == "llama3.2:latest" and a.role == "chat")
    assert chat.file == agents / "setup_ollama_chat_llama3_2_latest_2.toml"
    assert len({a.file for a in plan.agents}) == len(plan.agents)


def test_a_server_without_models_is_a_note(tmp_path: Path) -> None:
    server = FoundServer("ollama", "Ollama", Target("127.0.0.1", 11434), "0.5.1", ())
    plan = build_plan([server], _config(tmp_path))
    assert not plan.agents and not plan.writes
    assert any("offers no models" in note for note in plan.notes)


def test_a_project_that_sets_the_slot_itself_is_named(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".qodeassist").mkdir(parents=True)
    (project / ".qodeassist" / "pipelines.toml").write_text(
        '[pipelines]\nquick_refactor = "Claude Quick Refactor"\n', encoding="utf-8"
    )
    (tmp_path / "config").mkdir()
    config = load_configuration(
        ConfigPaths(tmp_path / "config", tmp_path / "data", bundled_root(), project)
    )
    plan = build_plan([_ollama()], config)
    assert any("sets quick_refactor too, and wins in that project" in n for n in plan.notes)
    assert not any("chat_assistant too" in n for n in plan.notes)


def _embedded(port: int, name: str, chat: bool) -> FoundServer:
    model = FoundModel(name, fim=False, chat=chat)
    return FoundServer("llama.cpp", "llama.cpp", Target("127.0.0.1", port), "b1", (model,))


def test_the_embedded_base_model_gets_completion_only_on_a_demo_instance(tmp_path: Path) -> None:
    # `embedded serve --port 8080`: the bundled llama.cpp instance reaches it, but is no demo.
    plan = build_plan([_embedded(8080, "gemma3-270m", chat=False)], _config(tmp_path))

    assert [(p.name, p.extends, p.demo) for p in plan.providers] == [
        ("Embedded :8080", "llama.cpp", True)
    ]
    [agent] = plan.agents
    assert (agent.role, agent.extends, agent.provider_instance) == (
        "completion",
        "Embedded Completion",
        "Embedded :8080",
    )
    assert {s.slot for s in plan.slots} == {"code_completion"}
    assert apply_plan(plan, plan_paths(tmp_path)).problems == []
    config = _config(tmp_path)
    assert config.providers["Embedded :8080"].demo
    assert not build_plan([_embedded(8080, "gemma3-270m", chat=False)], config).writes


def test_the_embedded_instruct_model_keeps_its_bundled_agents_and_demo_flag(
    tmp_path: Path,
) -> None:
    plan = build_plan([_embedded(8081, "smollm2-135m-instruct", chat=True)], _config(tmp_path))

    assert [(p.name, p.demo) for p in plan.providers] == [("Embedded Instruct :8081", True)]
    assert {(a.role, a.extends) for a in plan.agents} == {
        ("chat", "Embedded Chat"),
        ("refactor", "Embedded Quick Refactor"),
        ("compression", "Embedded Compression"),
    }
    assert {a.provider_instance for a in plan.agents} == {"Embedded Instruct :8081"}


def test_the_bundled_embedded_server_itself_needs_nothing(tmp_path: Path) -> None:
    plan = build_plan([_embedded(39282, "smollm2-135m-instruct", chat=True)], _config(tmp_path))
    assert not plan.agents and not plan.providers and not plan.writes
    assert any("bundled 'Embedded Instruct' server" in note for note in plan.notes)


def test_a_real_model_never_goes_through_a_demo_instance(tmp_path: Path) -> None:
    # A real model served where the Embedded instance points: a plain instance, no demo flag.
    plan = build_plan([_embedded(39281, "Qwen3-8B", chat=True)], _config(tmp_path))
    assert [(p.name, p.demo) for p in plan.providers] == [("llama.cpp :39281", False)]
