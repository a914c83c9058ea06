"""The catalog within its budget, always-on bodies, and /name at the start of a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.skills.library import SkillLibrary, UnknownSkill, literal
from qodeassist_lsp.skills.skill import Skill


def make(name: str, description: str = "does things", *, always_on: bool = False) -> Skill:
    return Skill(name, description, Path("/s") / name, "project", f"Body of {name}", always_on)


def library(*skills: Skill) -> SkillLibrary:
    return SkillLibrary({s.name: s for s in skills})


def test_the_catalog_lists_names_and_descriptions_but_not_always_on_skills() -> None:
    lib = library(make("review", "Review code"), make("style", always_on=True))
    text = lib.catalog(2000)
    assert text.startswith("# Available Skills\n")
    assert "- review: Review code" in text and "style" not in text
    assert "load_skill" in text
    assert "/<name>" in lib.catalog(2000, tool=False) and "load_skill" not in lib.catalog(
        2000, tool=False
    )
    assert library(make("style", always_on=True)).catalog(2000) == ""


def test_the_catalog_stays_within_its_budget_and_says_what_it_left_out() -> None:
    lib = library(*(make(f"skill-{i:02}", "x" * 80) for i in range(40)))
    text = lib.catalog(300)
    assert len(text) <= 300 * 4
    listed = [line for line in text.splitlines() if line.startswith("- ")]
    assert 5 < len(listed) < 40
    assert text.endswith(
        f"({40 - len(listed)} more skills not listed: the catalog budget is spent.)"
    )
    assert "more skills" not in lib.catalog(100_000)


def test_always_on_bodies_are_injected_whole() -> None:
    lib = library(make("review"), make("style", always_on=True), make("tone", always_on=True))
    assert lib.always_on() == (
        "# Always-on Skill: style\n\nBody of style\n\n# Always-on Skill: tone\n\nBody of tone"
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("/review do X", "review"),
        ("/review", "review"),
        ("/review\nwith a newline", "review"),
        ("please /review this", None),
        ("/usr/bin/env is broken", None),
        ("//review is a literal", None),
        ("no slash", None),
    ],
)
def test_slash_name_at_the_start_invokes_a_skill(message: str, expected: str | None) -> None:
    found = library(make("review")).invocation(message)
    assert (found.skill.name if found else None) == expected
    if found:
        assert found.text == "# Invoked Skill: review\n\nBody of review"


def test_an_unknown_slash_name_is_a_clear_error() -> None:
    with pytest.raises(UnknownSkill) as caught:
        library(make("review"), make("deploy")).invocation("/reviw the diff")
    message = str(caught.value)
    assert "'reviw'" in message and "did you mean 'review'" in message
    assert "/review, /deploy" in message and "'//'" in message


def test_a_double_slash_sends_one_literal_slash() -> None:
    assert literal("//etc is odd") == "/etc is odd" and literal("/x") == "/x"
