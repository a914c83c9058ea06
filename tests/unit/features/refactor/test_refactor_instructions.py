"""The instruction library: layering by id, defaults, broken files become problems."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.features.refactor.instructions import default_instruction, load_instructions


def paths(tmp_path: Path) -> ConfigPaths:
    return ConfigPaths(tmp_path / "config", tmp_path / "data", tmp_path / "bundled", tmp_path / "p")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_bundled_library_loads_clean() -> None:
    real = ConfigPaths(Path("/nonexistent/c"), Path("/nonexistent/d"), bundled_root())
    instructions, problems = load_instructions(real)
    assert problems == []
    assert "improve" in {i.id for i in instructions}
    default = default_instruction(instructions)
    assert default is not None and default.id == "improve"


def test_layering_project_over_user_over_bundled(tmp_path: Path) -> None:
    p = paths(tmp_path)
    write(p.bundled / "instructions" / "a.toml", 'name = "A"\nbody = "bundled"\ndefault = true\n')
    write(p.bundled / "instructions" / "b.toml", 'name = "B"\nbody = "bundled b"\n')
    write(p.config_root / "instructions" / "a.toml", 'name = "A2"\nbody = "user"\n')
    write(
        tmp_path / "p" / ".qodeassist" / "instructions" / "b.toml",
        'name = "B"\nbody = """\nproject b\n"""\nagent = "Other"\n',
    )
    instructions, problems = load_instructions(p)
    assert problems == []
    by_id = {i.id: i for i in instructions}
    assert (by_id["a"].body, by_id["a"].layer, by_id["a"].default) == ("user", "user", False)
    assert (by_id["b"].body, by_id["b"].layer, by_id["b"].agent) == (
        "project b",
        "project",
        "Other",
    )
    assert default_instruction(instructions) is None
    assert [i.name for i in instructions] == ["A2", "B"]


def test_broken_files_become_problems(tmp_path: Path) -> None:
    p = paths(tmp_path)
    folder = p.config_root / "instructions"
    write(folder / "syntax.toml", 'name = "x"\nbody = \n')
    write(folder / "noname.toml", 'body = "b"\n')
    write(folder / "emptybody.toml", 'name = "n"\n\nbody = ""\n')
    write(folder / "typo.toml", 'name = "T"\nbody = "b"\ndefualt = true\nagent = 3\n')
    write(folder / "ok.toml", 'name = "Ok"\nbody = "fine"\n')
    write(folder / "notes.txt", "ignored")
    instructions, problems = load_instructions(p)
    assert [i.id for i in instructions] == ["ok", "typo"]
    typo = next(i for i in instructions if i.id == "typo")
    assert typo.agent is None and not typo.default
    text = [x.format() for x in problems]
    assert any("syntax.toml:2" in t and "invalid TOML" in t for t in text)
    assert any("noname.toml:1" in t and "missing required key 'name'" in t for t in text)
    assert any("emptybody.toml:3" in t and "non-empty" in t for t in text)
    assert any("typo.toml:3" in t and "unknown key 'defualt'" in t and "default" in t for t in text)
    assert any("typo.toml:4" in t and "'agent'" in t for t in text)


def test_two_defaults_in_one_layer_warn(tmp_path: Path) -> None:
    p = paths(tmp_path)
    for stem in ("x", "y"):
        write(
            p.config_root / "instructions" / f"{stem}.toml",
            f'name="{stem}"\nbody="b"\ndefault=true\n',
        )
    instructions, problems = load_instructions(p)
    chosen = default_instruction(instructions)
    assert chosen is not None and chosen.id == "x"
    assert len(problems) == 1 and "'default' of 'y' ignored" in problems[0].message


def test_higher_layer_default_wins(tmp_path: Path) -> None:
    p = paths(tmp_path)
    write(p.bundled / "instructions" / "a.toml", 'name="a"\nbody="b"\ndefault=true\n')
    write(p.config_root / "instructions" / "z.toml", 'name="z"\nbody="b"\ndefault=true\n')
    instructions, problems = load_instructions(p)
    assert problems == []
    chosen = default_instruction(instructions)
    assert chosen is not None and chosen.id == "z"
