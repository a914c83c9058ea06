"""``SkillService``: rescans on change, keeps the last good library when a rescan fails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qodeassist_lsp.config.settings import SkillsSettings
from qodeassist_lsp.skills.service import SkillService, SkillSources


def sources(tmp_path: Path, **settings: object) -> SkillSources:
    skills = SkillsSettings.model_validate(
        {"project_dirs": ["skills"], "global_dirs": [], **settings}
    )
    return SkillSources(skills, tmp_path / "config", tmp_path)


async def test_a_failed_rescan_keeps_the_last_library(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    skill = tmp_path / "skills/hello/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n")
    state: dict[str, BaseException | None] = {"fail": None}

    def current() -> SkillSources:
        if state["fail"] is not None:
            raise state["fail"]
        return sources(tmp_path)

    service = SkillService(current)
    await service.refresh_or_keep()
    assert service.current is not None and list(service.current.skills) == ["hello"]
    state["fail"] = OSError("disk gone")
    await service.refresh_or_keep()
    assert "skill rescan failed" in caplog.text
    assert list(service.current.skills) == ["hello"]
    state["fail"] = asyncio.CancelledError()
    with pytest.raises(asyncio.CancelledError):
        await service.refresh_or_keep()


async def test_disabled_skills_have_no_library(tmp_path: Path) -> None:
    service = SkillService(lambda: sources(tmp_path, enabled=False))
    await service.refresh_or_keep()
    assert service.current is None
