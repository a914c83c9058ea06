"""The skills of an HTTP host with no editor beside it: one `SkillService`, rescanned per send.

Beside an editor the language server's skill feature owns the library; alone, the host makes
its own over the same sources (``[skills]``, the config root, the project) and offers
``load_skill`` to chat sessions, as the LSP feature does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qodeassist_lsp.skills.load_skill_tool import contributor
from qodeassist_lsp.skills.service import SkillService, SkillSources, skill_tool_enabled

if TYPE_CHECKING:
    from qodeassist_lsp.core.runtime_view import RuntimeView
    from qodeassist_lsp.core.tools import ToolContributorRegistry
    from qodeassist_lsp.skills.library import SkillLibrary


class HostSkills:
    """The skill library of a host without an editor."""

    def __init__(self, view: RuntimeView, contributors: ToolContributorRegistry) -> None:
        """Scan the folders ``view``'s configuration names; offer ``load_skill``."""
        self._view = view
        self._service = SkillService(self._sources)
        contributors.add(contributor(self.current, self._tool_enabled))

    def _sources(self) -> SkillSources:
        return SkillSources.of(self._view.configuration)

    def _tool_enabled(self) -> bool:
        return skill_tool_enabled(self._view.configuration.settings)

    def current(self) -> SkillLibrary | None:
        """Return the library of the last scan (None while disabled)."""
        return self._service.current

    async def library(self) -> SkillLibrary | None:
        """Return the library, rescanned if the skill folders changed."""
        await self._service.refresh_or_keep()
        return self.current()
