"""The load_skill tool: body and resource list, resources confined to the skill's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, QUICK_REFACTOR
from qodeassist_lsp.core.tools import ToolContext, ToolRegistry
from qodeassist_lsp.skills.library import SkillLibrary
from qodeassist_lsp.skills.load_skill_tool import LoadSkillTool, contributor
from qodeassist_lsp.skills.skill import load_skill


@pytest.fixture
def library(tmp_path: Path) -> SkillLibrary:
    folder = tmp_path / "skills/review"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: review\ndescription: d\n---\nCheck it.\n")
    (folder / "references/guide.md").write_text("The guide.")
    (tmp_path / "secret.txt").write_text("top secret")
    (folder / "link.md").symlink_to(tmp_path / "secret.txt")
    skill, problems = load_skill(folder, "project")
    assert skill is not None and not problems
    return SkillLibrary({"review": skill})


async def run(library: SkillLibrary, **arguments: object) -> tuple[str, bool]:
    output = await LoadSkillTool(lambda: library).run(dict(arguments), ToolContext())
    return output.content, output.is_error


async def test_it_returns_the_body_and_lists_the_resources(library: SkillLibrary) -> None:
    text, error = await run(library, name="review")
    assert not error
    assert text.startswith("Skill: review\n\nCheck it.")
    assert "- references/guide.md" in text and "- link.md" in text


async def test_it_reads_a_resource_by_relative_path(library: SkillLibrary) -> None:
    assert await run(library, name="review", resource="references/guide.md") == (
        "The guide.",
        False,
    )


@pytest.mark.parametrize("resource", ["../../secret.txt", "link.md", "/etc/hostname"])
async def test_a_resource_outside_the_skill_folder_is_refused(
    library: SkillLibrary, resource: str
) -> None:
    text, error = await run(library, name="review", resource=resource)
    assert error and "outside the folder of skill 'review'" in text
    assert "top secret" not in text


async def test_unknown_names_and_missing_files_are_tool_errors(library: SkillLibrary) -> None:
    text, error = await run(library, name="nope")
    assert error and "no skill named 'nope'; available: review" in text
    text, error = await run(library, name="review", resource="missing.md")
    assert error and "has no file 'missing.md'" in text and "references/guide.md" in text
    text, error = await run(library)
    assert error and "`name`" in text


async def test_the_contributor_offers_it_to_chat_only_while_enabled(
    library: SkillLibrary,
) -> None:
    enabled = [True]
    contribute = contributor(lambda: library, lambda: enabled[0])
    chat, refactor = ToolRegistry(), ToolRegistry()
    contribute(chat, CHAT_ASSISTANT)
    contribute(refactor, QUICK_REFACTOR)
    assert chat.permission_of("load_skill") == "read" and not refactor
    enabled[0] = False
    off = ToolRegistry()
    contribute(off, CHAT_ASSISTANT)
    assert not off
    none = ToolRegistry()
    contributor(lambda: SkillLibrary(), lambda: True)(none, CHAT_ASSISTANT)
    assert not none
    result = await chat.execute("load_skill", {"name": "review"})
    assert result.content.startswith("Skill: review")
