"""Changing a bundled provider instance: a same-name file that extends it by its own name."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.provider_override import (
    OverrideError,
    parse_assignments,
    write_override,
)


def _load(root: Path) -> Configuration:
    return load_configuration(ConfigPaths(root / "config", root / "data", bundled_root()))


def test_a_same_name_file_that_extends_itself_changes_only_its_keys(tmp_path: Path) -> None:
    providers = tmp_path / "config" / "providers"
    providers.mkdir(parents=True)
    (providers / "ollama_native.toml").write_text(
        'name = "Ollama (Native)"\nextends = "Ollama (Native)"\nurl = "http://127.0.0.1:11500"\n',
        encoding="utf-8",
    )
    config = _load(tmp_path)

    assert not config.errors, [p.format() for p in config.errors]
    ollama = config.providers["Ollama (Native)"]
    assert ollama.url == "http://127.0.0.1:11500"
    assert ollama.client_api == "Ollama (Native)" and ollama.api_key_env == "OLLAMA_API_KEY"
    assert ollama.layer is Layer.USER and ollama.source == providers / "ollama_native.toml"


def test_write_override_creates_the_file_and_undoes_a_change_that_does_not_load(
    tmp_path: Path,
) -> None:
    config = _load(tmp_path)
    instance = config.providers["llama.cpp"]
    result = write_override(instance, config.paths, parse_assignments(["url=http://[::1]:9"]))

    assert result.path == tmp_path / "config" / "providers" / "llama_cpp.toml"
    assert result.keys == ("url",)
    assert _load(tmp_path).providers["llama.cpp"].url == "http://[::1]:9"
    text = result.path.read_text(encoding="utf-8")
    with pytest.raises(OverrideError, match="does not load"):
        write_override(instance, config.paths, {"url": "no-scheme"})
    assert result.path.read_text(encoding="utf-8") == text


def test_unknown_keys_and_malformed_items_are_refused() -> None:
    with pytest.raises(OverrideError, match="did you mean 'url'"):
        parse_assignments(["urll=http://x"])
    with pytest.raises(OverrideError, match="not KEY=VALUE"):
        parse_assignments(["url"])
    assert parse_assignments(["max_concurrent=2", "demo=true"]) == {
        "max_concurrent": 2,
        "demo": True,
    }
