"""The doctor's pure parts: the probe body, FIM detection, model matching, the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.doctor import (
    AgentReport,
    DoctorReport,
    model_listed,
    probe_body,
    sends_fim,
)
from qodeassist_lsp.wire.protocols import WireProtocol


@pytest.fixture(scope="module")
def configuration(tmp_path_factory: pytest.TempPathFactory) -> Configuration:
    """The bundled agents, loaded for real."""
    root: Path = tmp_path_factory.mktemp("doctor")
    return load_configuration(ConfigPaths(root / "config", root / "data", bundled_root()))


def test_probe_body_lowers_only_the_limits_a_body_has() -> None:
    body = {"max_tokens": 1024, "options": {"num_predict": 256, "temperature": 0}}
    assert probe_body(body, WireProtocol.OLLAMA) == {
        "max_tokens": 16,
        "options": {"num_predict": 16, "temperature": 0},
    }
    assert probe_body({"messages": []}, WireProtocol.OPENAI_CHAT) == {"messages": []}
    claude = probe_body({"thinking": {"type": "enabled"}}, WireProtocol.ANTHROPIC)
    assert claude == {"max_tokens": 16}
    assert body["max_tokens"] == 1024  # the agent's own body is not touched


def test_fim_agents_are_told_by_their_suffix_field_endpoint_or_template(
    configuration: Configuration,
) -> None:
    factory = AgentFactory(configuration)
    assert sends_fim(factory.create("Ollama Completion — FIM"))
    assert sends_fim(factory.create("Codestral Completion — FIM"))
    assert sends_fim(factory.create("llama.cpp Completion — FIM Template"))  # fim_prompt()
    assert not sends_fim(factory.create("Embedded Completion"))  # continues the prefix
    assert not sends_fim(factory.create("Claude Completion"))
    assert not sends_fim(factory.create("Ollama Completion — Chat-style"))


def test_model_listed_counts_ollamas_implicit_latest_tag() -> None:
    assert model_listed("qwen", ["qwen:latest"])
    assert model_listed("qwen:7b", ["qwen:7b"])
    assert not model_listed("qwen:7b", ["qwen:latest"])


def test_a_pipeline_fails_only_when_none_of_its_agents_works() -> None:
    good = AgentReport("good", ["chat_assistant"])
    good.checks["probe"] = "ok"
    bad = AgentReport("bad", ["chat_assistant", "quick_refactor"])
    bad.fail("auth", "rejected", "run `qodeassist-lsp secrets set X`")
    report = DoctorReport(
        [good, bad],
        {"chat_assistant": ["bad", "good"], "quick_refactor": ["bad"], "code_completion": []},
    )
    assert report.pipeline_working("chat_assistant")
    assert not report.ok
    report.pipelines["quick_refactor"] = []
    assert report.ok
    assert report.to_json()["agents"][1]["problems"] == [
        {"check": "auth", "message": "rejected", "fix": "run `qodeassist-lsp secrets set X`"}
    ]
