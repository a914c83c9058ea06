"""`CodebaseFeature`: the feature's hooks, light to build, its service made on first use.

The feature table builds every feature before the language server answers ``initialize``, so
what ``build`` makes must cost nothing: the `service.CodebaseService` (settings models, the ignore
patterns, the engine) is imported and created when the door starts the feature or first asks
for something, and the chat tools' module when the first chat is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from qodeassist_lsp.core.operations import FeatureServices, FileChange

MENTION_BUILD_WAIT_S: Final = 10.0
"""How long ``@codebase`` waits for a build under way before it takes what is indexed."""

if TYPE_CHECKING:
    from qodeassist_lsp.config.pipelines import PipelineSpec
    from qodeassist_lsp.context.codebase.model import CodebaseIndex, Snippet
    from qodeassist_lsp.core.tools import ToolContributor, ToolRegistry
    from qodeassist_lsp.features.codebase.service import CodebaseService


class CodebaseFeature:
    """What the feature table and the workbench call; the service behind it is made lazily."""

    def __init__(self, services: FeatureServices) -> None:
        """Serve the folders of ``services`` (nothing is imported or read yet)."""
        self._services = services
        self._service: CodebaseService | None = None
        self._tools: ToolContributor | None = None

    @property
    def service(self) -> CodebaseService:
        """The service, made on first use."""
        if self._service is None:
            from qodeassist_lsp.features.codebase.service import CodebaseService, CodebaseSources
            from qodeassist_lsp.features.codebase.settings import CODEBASE_SETTINGS

            services = self._services
            self._service = CodebaseService(
                CodebaseSources(
                    settings=lambda: services.view.settings.section(CODEBASE_SETTINGS),
                    folders=services.folders,
                    data_root=services.data_root,
                    ignored=services.ignored_by,
                    progress=services.progress,
                )
            )
        return self._service

    # -- the hooks of the feature table --------------------------------------------------------
    async def start(self) -> None:
        """Build the index of every workspace folder in the background."""
        await self.service.start()

    async def aclose(self) -> None:
        """Stop the builds and close the indexes (if any was made)."""
        if self._service is not None:
            await self._service.aclose()

    def status(self) -> dict[str, Any]:
        """Return the ``codebase`` part of ``qodeassist/status``."""
        return self.service.status()

    def files_changed(self, changes: Sequence[FileChange]) -> None:
        """Re-index what changed (before the first build nothing is indexed to update)."""
        if self._service is not None:
            self._service.files_changed(changes)

    def reloaded(self) -> None:
        """Follow the settings (the off switch, the caps)."""
        if self._service is not None:
            self._service.sync()

    def tools(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        """Offer ``search_codebase`` and ``find_definition`` (a ``ToolContributor``)."""
        if self._tools is None:
            from qodeassist_lsp.features.codebase.tools import contributor

            self._tools = contributor(lambda: self.service)
        self._tools(registry, pipeline)

    # -- what the other features get through the workbench -------------------------------------
    def index_for(self, path: Path) -> CodebaseIndex | None:
        """Return the index of the folder holding ``path`` (None before it is started or off)."""
        return self._service.index_for(path) if self._service is not None else None

    def enabled(self) -> bool:
        """Whether ``[codebase] enabled`` holds now."""
        return self.service.settings.enabled

    async def for_mention(self, query: str) -> list[tuple[Path, Snippet]]:
        """Return what ``@codebase`` attaches for ``query``: (file, snippet), within the budget.

        Like the tools, it waits a while for a build under way (`MENTION_BUILD_WAIT_S`).
        """
        service = self.service
        await service.ready(MENTION_BUILD_WAIT_S)
        return [(hit.path, hit.snippet) for hit in service.for_mention(query)]
