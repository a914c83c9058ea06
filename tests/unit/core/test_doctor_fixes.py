"""The doctor's fixes name the user's own files, never the read-only bundled ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.doctor_fixes import instance_file, model_fix, reach_fix


@pytest.fixture(scope="module")
def configuration(tmp_path_factory: pytest.TempPathFactory) -> Configuration:
    """The bundled agents, loaded for real."""
    root: Path = tmp_path_factory.mktemp("doctor")
    return load_configuration(ConfigPaths(root / "config", root / "data", bundled_root()))


def test_fixes_point_at_user_files_never_at_bundled_ones(
    configuration: Configuration, tmp_path: Path
) -> None:
    """The bundled files are inside the installed package: a fix names the user's override."""
    factory = AgentFactory(configuration)
    root = configuration.paths.config_root
    bundled = str(bundled_root())
    llama = factory.create("llama.cpp Chat")
    fix = reach_fix(llama, root)
    assert "`qodeassist-lsp providers override llama.cpp url=URL`" in fix
    assert bundled not in fix
    where = instance_file(llama.provider, root)
    assert str(root / "providers" / "llama_cpp.toml") in where
    assert 'extends = "llama.cpp"' in where
    claude = factory.create("Claude Chat — Sonnet")
    assert str(root / "agent_models.json") in model_fix(claude, root)
    ollama = factory.create("Ollama Chat — Simple")
    assert str(root / "agent_models.json") in model_fix(ollama, root)
    assert bundled not in instance_file(claude.provider, root)
    mine = claude.provider.model_copy(
        update={"source": tmp_path / "mine.toml", "layer": Layer.USER}
    )
    assert instance_file(mine, root) == str(tmp_path / "mine.toml")


def test_the_launch_fix_works_when_followed(tmp_path: Path) -> None:
    """The file the fix names, written as it says, changes only the keys it sets."""
    paths = ConfigPaths(tmp_path / "config", tmp_path / "data", bundled_root())
    bundled = load_configuration(paths).providers["Embedded"]
    where = instance_file(bundled, paths.config_root)
    path = Path(where.split(" (with ")[0])
    assert 'name = "Embedded" and extends = "Embedded"' in where
    path.parent.mkdir(parents=True)
    path.write_text(
        'name = "Embedded"\nextends = "Embedded"\n[launch]\nready_timeout_s = 300\n',
        encoding="utf-8",
    )

    config = load_configuration(paths)
    assert not config.errors, [p.format() for p in config.errors]
    fixed = config.providers["Embedded"]
    assert fixed.launch is not None and fixed.launch.ready_timeout_s == 300
    assert bundled.launch is not None and fixed.launch.command == bundled.launch.command
    assert (fixed.url, fixed.demo) == (bundled.url, bundled.demo)
