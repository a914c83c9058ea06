"""``qodeassist-lsp doctor``'s codebase part: the stored database of the project, or off."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.cli.doctor_cmd import _codebase
from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.context.codebase.index import database_path_for
from qodeassist_lsp.lsp.sections import SECTIONS


def _config(tmp_path: Path, settings: str = "") -> Configuration:
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config/settings.toml").write_text(settings)
    (tmp_path / "project").mkdir(exist_ok=True)
    paths = ConfigPaths(
        config_root=tmp_path / "config",
        data_root=tmp_path / "data",
        bundled=bundled_root(),
        project=tmp_path / "project",
    )
    return load_configuration(paths, (), None, SECTIONS)


def test_doctor_shows_the_stored_database_or_that_none_is_built(tmp_path: Path) -> None:
    config = _config(tmp_path)
    part = _codebase(config)
    assert part is not None and part["state"].startswith("not built yet")
    database = database_path_for(tmp_path / "data", tmp_path / "project")
    database.parent.mkdir(parents=True)
    database.write_bytes(b"x" * 2048)
    part = _codebase(config)
    assert part is not None
    assert part["state"] == "stored"
    assert part["folders"][0]["size"] == 2048
    assert part["folders"][0]["database"] == str(database)


def test_doctor_says_the_index_is_off(tmp_path: Path) -> None:
    config = _config(tmp_path, "[codebase]\nenabled = false\n")
    assert _codebase(config) == {"state": "off"}
