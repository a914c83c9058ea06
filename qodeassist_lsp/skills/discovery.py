"""Where skills are looked for, and the scan that turns those folders into a `SkillLibrary`.

Roots in priority order (the first skill of a name wins; later ones are *shadowed*, reported in
``qodeassist/skills/list`` and the log): the project's ``[skills] project_dirs`` (default
``.qodeassist/skills`` then ``.claude/skills``; entries that lead outside the project are
dropped), ``<config>/skills``, then ``[skills] global_dirs`` (default ``~/.claude/skills``).
Only the immediate sub-folders of a root holding a ``SKILL.md`` are skills. ``signature`` is
the cheap ``stat`` fingerprint the server polls to reload on change.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.config.confinement import real_path
from qodeassist_lsp.config.problems import ConfigProblem
from qodeassist_lsp.config.settings import SkillsSettings
from qodeassist_lsp.skills.library import Shadowed, SkillLibrary
from qodeassist_lsp.skills.skill import SKILL_FILE, Skill, load_skill

log = logging.getLogger("qodeassist.skills")

Signature = tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class SkillRoot:
    """A folder whose sub-folders are skills, and the label it shows as ``source``."""

    path: Path
    source: str


def skill_roots(
    settings: SkillsSettings, config_root: Path, project: Path | None
) -> list[SkillRoot]:
    """Return the discovery roots for ``settings``, highest priority first, without repeats."""
    roots: list[SkillRoot] = []
    if project is not None:
        real_project = real_path(project)
        for entry in settings.project_dirs:
            folder = real_path(entry, project)
            if folder != real_project and not folder.is_relative_to(real_project):
                log.warning("[skills] project_dirs entry %r leads outside the project", entry)
                continue
            roots.append(SkillRoot(folder, "project"))
    roots.append(SkillRoot(real_path(config_root / "skills"), "config"))
    for entry in settings.global_dirs:
        roots.append(SkillRoot(real_path(os.path.expanduser(entry.strip())), "user"))
    unique: list[SkillRoot] = []
    for root in roots:
        if all(root.path != seen.path for seen in unique):
            unique.append(root)
    return unique


def _skill_folders(root: SkillRoot) -> list[Path]:
    try:
        children = sorted(root.path.iterdir())
    except OSError:
        return []
    return [child for child in children if child.is_dir() and (child / SKILL_FILE).is_file()]


def discover(roots: Sequence[SkillRoot]) -> SkillLibrary:
    """Load every skill under ``roots``; the first of a name wins, the rest are shadowed."""
    skills: dict[str, Skill] = {}
    shadowed: list[Shadowed] = []
    problems: list[ConfigProblem] = []
    for root in roots:
        for folder in _skill_folders(root):
            skill, found = load_skill(folder, root.source)
            problems.extend(found)
            if skill is None:
                continue
            winner = skills.get(skill.name)
            if winner is None:
                skills[skill.name] = skill
                continue
            shadowed.append(Shadowed(skill, winner))
            log.info(
                "skill %r in %s is shadowed by the one in %s",
                skill.name,
                skill.folder,
                winner.folder,
            )
    for problem in problems:
        log.warning("skill problem: %s", problem.format())
    return SkillLibrary(skills, shadowed, problems)


def signature(roots: Iterable[SkillRoot]) -> Signature:
    """Return (path, mtime, size) of every root, skill folder and ``SKILL.md``, for polling."""
    entries: list[tuple[str, int, int]] = []
    for root in roots:
        paths = [root.path]
        with contextlib.suppress(OSError):
            for child in sorted(root.path.iterdir()):
                paths += [child, child / SKILL_FILE]
        for path in paths:
            with contextlib.suppress(OSError):
                stat = path.stat()
                entries.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(entries)
