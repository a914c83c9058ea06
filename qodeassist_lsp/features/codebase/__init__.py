"""The codebase feature: the project index, its chat tools and its operations (issue 45).

``SPEC`` is the feature's row of the feature table (``workbench/features.py``). Built, it
indexes each workspace folder in the background once the door is up (`service`), keeps the
index fresh from the door's file changes, offers ``search_codebase`` and ``find_definition`` to
every chat (`tools`), serves ``codebase/search``, ``definition``, ``status`` and ``reindex``
(`operations`) and provides its `CodebaseService` to the workbench, which hands the other
features what they need of it (``@codebase`` in chat, the completion context) without them
importing this package. See docs/codebase.md.

Light on purpose: the feature table imports this module before the language server answers
``initialize``, so the settings model (pydantic) is imported by ``build`` and registered by
the host's ``lsp/sections.py`` (which loads in the configuration's worker thread), not named in
``SPEC``.
"""

from __future__ import annotations

from typing import Final

from qodeassist_lsp.core.operations import Feature, FeatureServices, FeatureSpec

__all__ = ["SPEC", "build"]


def build(services: FeatureServices) -> Feature:
    """Return the running feature over ``services`` (no work starts before ``start``)."""
    from qodeassist_lsp.features.codebase.operations import operations
    from qodeassist_lsp.features.codebase.service import CodebaseService, CodebaseSources
    from qodeassist_lsp.features.codebase.settings import CODEBASE_SETTINGS
    from qodeassist_lsp.features.codebase.tools import contributor

    service = CodebaseService(
        CodebaseSources(
            settings=lambda: services.view.settings.section(CODEBASE_SETTINGS),
            folders=services.folders,
            data_root=services.data_root,
            ignored=services.ignored_by,
            progress=services.progress,
        )
    )
    return Feature(
        operations=operations(lambda: service),
        start=service.start,
        aclose=service.aclose,
        status=service.status,
        tools=contributor(lambda: service),
        files_changed=service.files_changed,
        reloaded=service.sync,
        provides=service,
    )


SPEC: Final = FeatureSpec(
    name="codebase",
    build=build,
    summary="The project index: search_codebase, find_definition, @codebase, codebase/* ops.",
)
"""The codebase feature's row of the feature table."""
