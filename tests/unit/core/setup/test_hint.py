"""The doctor's hint: a found server that no pipeline uses points to ``setup``."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.core.setup.hint import setup_hint, used_models
from qodeassist_lsp.core.setup.probe import FoundModel, FoundServer, ProbeOutcome, Target


def _config(root: Path, pipelines: str) -> Configuration:
    (root / "config").mkdir()
    (root / "config" / "pipelines.toml").write_text(pipelines, encoding="utf-8")
    return load_configuration(ConfigPaths(root / "config", root / "data", bundled_root()))


def _found(port: int, models: int = 1, first: str = "m0") -> ProbeOutcome:
    target = Target("127.0.0.1", port)
    names = [first, *(f"m{i}" for i in range(1, models))][:models]
    server = FoundServer("ollama", "Ollama", target, models=tuple(FoundModel(n) for n in names))
    return ProbeOutcome(target, "found", "Ollama", server)


def test_an_unused_server_is_named_with_the_command_to_run(tmp_path: Path) -> None:
    # The bundled defaults list "Ollama Chat — Simple" (qwen3.5:4b), which this server lacks.
    config = _config(tmp_path, "[pipelines]\n")
    assert used_models(config)[11434] >= {"qwen3.5:4b"}
    hint = setup_hint(config, [_found(11434, models=3)])
    assert hint is not None
    assert "Ollama on 127.0.0.1:11434 (3 model(s))" in hint
    assert "qodeassist-lsp setup" in hint


def test_no_hint_when_a_pipeline_uses_the_server_or_it_has_no_models(tmp_path: Path) -> None:
    config = _config(tmp_path, '[pipelines]\nchat_assistant = ["Ollama Chat — Simple"]\n')
    assert setup_hint(config, [_found(11434, first="qwen3.5:4b")]) is None
    assert setup_hint(config, [_found(1234, models=0)]) is None
    assert setup_hint(config, [ProbeOutcome(Target("127.0.0.1", 8080), "closed")]) is None
