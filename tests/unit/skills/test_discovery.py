"""Discovery: root order, first-wins shadowing, dropped project entries, change fingerprint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qodeassist_lsp.config.settings import SkillsSettings
from qodeassist_lsp.skills.discovery import discover, signature, skill_roots
from qodeassist_lsp.skills.service import SkillService, SkillSources


def skill(root: Path, name: str, description: str = "d", body: str = "Body") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8"
    )
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("home/.claude/skills", "config/skills", "project/.qodeassist/skills"):
        (tmp_path / name).mkdir(parents=True)
    return tmp_path


def roots_of(home: Path, settings: SkillsSettings | None = None) -> list:
    return skill_roots(settings or SkillsSettings(), home / "config", home / "project")


def test_roots_in_priority_order(home: Path) -> None:
    roots = roots_of(home)
    real = os.path.realpath
    assert [(str(r.path), r.source) for r in roots] == [
        (real(home / "project/.qodeassist/skills"), "project"),
        (real(home / "project/.claude/skills"), "project"),
        (real(home / "config/skills"), "config"),
        (real(home / "home/.claude/skills"), "user"),
    ]


def test_project_entries_leading_outside_the_project_are_dropped(home: Path) -> None:
    settings = SkillsSettings(project_dirs=["../config/skills", "skills"])
    (home / "project/skills").symlink_to(home / "home")
    assert [r.source for r in roots_of(home, settings)] == ["config", "user"]


def test_first_root_wins_and_the_others_are_reported_shadowed(home: Path) -> None:
    project = skill(home / "project/.qodeassist/skills", "review", "project review")
    skill(home / "config/skills", "review", "config review")
    skill(home / "home/.claude/skills", "review", "user review")
    skill(home / "home/.claude/skills", "deploy", "user deploy")
    library = discover(roots_of(home))
    assert list(library.skills) == ["review", "deploy"]
    assert library.skills["review"].description == "project review"
    assert [s.skill.source for s in library.shadowed] == ["config", "user"]
    entry = library.summaries()[0]
    assert entry["name"] == "review" and entry["source"] == "project"
    assert entry["path"] == str(project / "SKILL.md")
    assert [s["source"] for s in entry["shadows"]] == ["config", "user"]
    assert library.summaries()[1]["shadows"] == []


def test_a_broken_skill_does_not_shadow_a_good_one_and_is_reported(home: Path) -> None:
    broken = home / "project/.qodeassist/skills/review"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no front matter")
    skill(home / "config/skills", "review", "good")
    (home / "config/skills/not-a-skill").mkdir()  # no SKILL.md: not a skill, no problem
    library = discover(roots_of(home))
    assert library.skills["review"].source == "config"
    assert [(p.file, p.line) for p in library.problems] == [(str(broken / "SKILL.md"), 1)]


def test_the_signature_changes_when_a_skill_is_added_or_edited(home: Path) -> None:
    roots = roots_of(home)
    before = signature(roots)
    folder = skill(home / "config/skills", "new-one")
    added = signature(roots)
    assert added != before
    (folder / "SKILL.md").write_text("---\nname: new-one\ndescription: longer text\n---\n")
    assert signature(roots) != added


async def test_the_service_rescans_only_on_change_and_honours_enabled(home: Path) -> None:
    settings = SkillsSettings()
    service = SkillService(lambda: SkillSources(settings, home / "config", home / "project"))
    seen: list[int] = []
    service.listeners.append(lambda library: seen.append(len(library.skills)))
    assert await service.refresh()
    assert not await service.refresh()
    skill(home / "config/skills", "later")
    assert await service.refresh()
    assert list(service.library.skills) == ["later"] and seen == [0, 1]
    settings = SkillsSettings(enabled=False)
    assert await service.refresh()
    assert not service.enabled and service.library.skills == {}
