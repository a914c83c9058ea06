"""Loading one SKILL.md: front matter, validation problems located as file:line, always-on."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.skills.frontmatter import FrontMatterError, parse
from qodeassist_lsp.skills.skill import BODY_MAX_CHARS, load_skill


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    return path


GOOD = """---
name: code-review
description: >
  Review a change for bugs
  and style.
license: MIT
allowed-tools: read_file search_project
metadata:
  author: someone
  version: 1.0
---
# Code review

Look at every changed line.
"""


def test_a_valid_skill_loads_with_every_field(tmp_path: Path) -> None:
    skill, problems = load_skill(write_skill(tmp_path, "code-review", GOOD), "project")
    assert problems == []
    assert skill is not None
    assert skill.name == "code-review"
    assert skill.description == "Review a change for bugs and style."
    assert skill.body == "# Code review\n\nLook at every changed line."
    assert skill.license == "MIT"
    assert skill.allowed_tools == ("read_file", "search_project")
    assert skill.metadata == {"author": "someone", "version": "1.0"}
    assert skill.source == "project" and not skill.always_on


def test_metadata_always_on_true_makes_an_always_on_skill(tmp_path: Path) -> None:
    text = '---\nname: house-style\ndescription: d\nmetadata:\n  always-on: "true"\n---\nBody\n'
    skill, problems = load_skill(write_skill(tmp_path, "house-style", text), "config")
    assert problems == [] and skill is not None and skill.always_on
    unquoted = text.replace('"true"', "true")
    skill, _ = load_skill(write_skill(tmp_path, "house-style", unquoted), "config")
    assert skill is not None and skill.always_on


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("# no front matter\n", 1, "must start with YAML front matter"),
        ("---\nname: x\n", 1, "not closed"),
        ("---\nname: bad\ndescription: [unclosed\n---\n", 3, "not valid YAML"),
        ("---\n- a\n- b\n---\n", 1, "must be a mapping"),
        ("---\ndescription: d\n---\n", 1, "needs `name:`"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", 2, "not a skill name"),
        ("---\nname: a--b\ndescription: d\n---\n", 2, "not a skill name"),
        ("---\nname: other\ndescription: d\n---\n", 2, "must equal the skill's folder name"),
        ("---\nname: bad\nlicense: MIT\ndescription: ''\n---\n", 4, "non-empty `description:`"),
        ("---\nname: bad\ndescription: " + "x" * 1025 + "\n---\n", 3, "at most 1024"),
    ],
)
def test_invalid_front_matter_is_an_error_at_its_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    folder = write_skill(tmp_path, "bad", text)
    skill, problems = load_skill(folder, "project")
    assert skill is None
    errors = [p for p in problems if p.severity == "error"]
    assert len(errors) == 1, problems
    assert errors[0].file == str(folder / "SKILL.md") and errors[0].line == line
    assert fragment in errors[0].message
    assert errors[0].format().startswith(f"{folder / 'SKILL.md'}:{line}: error: ")


def test_unknown_keys_are_warnings_with_a_suggestion_claude_code_keys_are_accepted(
    tmp_path: Path,
) -> None:
    text = "---\nname: ok\ndescription: d\nlicence: MIT\nargument-hint: '[file]'\n---\nB\n"
    skill, problems = load_skill(write_skill(tmp_path, "ok", text), "user")
    assert skill is not None
    assert [(p.severity, p.line, p.key) for p in problems] == [("warning", 4, "licence")]
    assert "did you mean 'license'" in problems[0].message


def test_crlf_and_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    text = "\ufeff---\r\nname: win\r\ndescription: made on Windows\r\n---\r\nBody\r\n"
    skill, problems = load_skill(write_skill(tmp_path, "win", text), "user")
    assert problems == [] and skill is not None and skill.body == "Body"


def test_a_huge_body_is_cut_with_a_note(tmp_path: Path) -> None:
    text = "---\nname: big\ndescription: d\n---\n" + "y" * (BODY_MAX_CHARS + 10)
    skill, problems = load_skill(write_skill(tmp_path, "big", text), "user")
    assert skill is not None and skill.body.endswith("[skill body truncated]")
    assert [p.severity for p in problems] == ["warning"]


def test_yaml_tags_are_refused_not_executed() -> None:
    with pytest.raises(FrontMatterError):
        parse("---\nname: !!python/object/apply:os.system ['true']\n---\n")


def test_resources_list_the_other_files(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "code-review", GOOD)
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("g")
    (folder / ".hidden").write_text("h")
    skill, _ = load_skill(folder, "project")
    assert skill is not None and skill.resources() == ["references/guide.md"]
