"""``SkillService``: the current `SkillLibrary`, rescanned when its folders or settings change.

The roots come from the settings current at each refresh (``[skills]`` may change with a
configuration reload), and a rescan happens only when the roots or the ``stat`` fingerprint of
their skill folders changed, so polling it every few seconds costs a handful of ``stat`` calls.
The scan runs in a worker thread: it reads files.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.settings import Settings, SkillsSettings
from qodeassist_lsp.skills.discovery import Signature, SkillRoot, discover, signature, skill_roots
from qodeassist_lsp.skills.library import SkillLibrary

log = logging.getLogger("qodeassist.skills")


@dataclass(frozen=True)
class SkillSources:
    """What discovery depends on: the ``[skills]`` settings, the config root and the project."""

    settings: SkillsSettings
    config_root: Path
    project: Path | None

    @classmethod
    def of(cls, config: Configuration) -> SkillSources:
        """Return the sources ``config`` names."""
        return cls(config.settings.skills, config.paths.config_root, config.paths.project)


def skill_tool_enabled(settings: Settings) -> bool:
    """Whether ``load_skill`` is offered: skills and the tool's switch are both on."""
    return settings.skills.enabled and settings.tools.enabled.load_skill


class SkillService:
    """Holds the library of the current sources and rescans it on change."""

    def __init__(self, sources: Callable[[], SkillSources]) -> None:
        """Scan the folders ``sources()`` names (read at every refresh)."""
        self._sources = sources
        self._library = SkillLibrary()
        self._roots: list[SkillRoot] = []
        self._signature: Signature | None = None
        self._enabled = True
        self._lock = asyncio.Lock()
        self.listeners: list[Callable[[SkillLibrary], None]] = []
        """Called after every rescan with the new library."""

    @property
    def library(self) -> SkillLibrary:
        """The library of the last scan (empty while skills are disabled)."""
        return self._library

    @property
    def current(self) -> SkillLibrary | None:
        """The library of the last scan; None while skills are disabled."""
        return self._library if self._enabled else None

    @property
    def enabled(self) -> bool:
        """Whether ``[skills] enabled`` was on at the last refresh."""
        return self._enabled

    @property
    def roots(self) -> list[SkillRoot]:
        """The roots of the last refresh, highest priority first."""
        return list(self._roots)

    async def refresh(self) -> bool:
        """Rescan if the sources or the skill folders changed; return whether it rescanned."""
        async with self._lock:
            sources = self._sources()
            enabled = sources.settings.enabled
            roots = skill_roots(sources.settings, sources.config_root, sources.project)
            stamp = await asyncio.to_thread(signature, roots) if enabled else ()
            if (enabled, roots, stamp) == (self._enabled, self._roots, self._signature):
                return False
            library = await asyncio.to_thread(discover, roots) if enabled else SkillLibrary()
            self._enabled, self._roots, self._signature = enabled, roots, stamp
            self._library = library
        log.info(
            "skills: %d loaded, %d shadowed, %d problem(s)",
            len(library.skills),
            len(library.shadowed),
            len(library.problems),
        )
        for listener in self.listeners:
            listener(library)
        return True

    async def refresh_or_keep(self) -> None:
        """``refresh``; a failed rescan is logged and the last good library still serves."""
        try:
            await self.refresh()
        except Exception:
            log.exception("skill rescan failed")
