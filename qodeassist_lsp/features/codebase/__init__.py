"""The codebase feature: the project index, its chat tools and its operations (issue 45).

``SPEC`` is the feature's row of the feature table (``workbench/features.py``). Built, it
indexes each workspace folder in the background once the door is up (`service`), keeps the
index fresh from the door's file changes, offers ``search_codebase`` and ``find_definition`` to
every chat (`tools`), serves ``codebase/search``, ``definition``, ``status`` and ``reindex``
(`operations`) and provides its `CodebaseService` to the workbench, which hands the other
features what they need of it (``@codebase`` in chat, the completion context) without them
importing this package. See docs/codebase.md.

Light on purpose: the feature table imports this module before the language server answers
``initialize`` (and builds the feature after it, since ``SPEC`` names its operations), so the
settings model is registered by the host's
``lsp/sections.py`` (loaded in the configuration's worker thread), not named in ``SPEC``, and
``build`` makes a `feature.CodebaseFeature`, whose service is made on first use; only the
operations' request and result models (pydantic) are imported then.
"""

from __future__ import annotations

from typing import Final

from qodeassist_lsp.core.operations import Feature, FeatureServices, FeatureSpec

__all__ = ["SPEC", "build"]


def build(services: FeatureServices) -> Feature:
    """Return the running feature over ``services`` (light: the service is made on first use)."""
    from qodeassist_lsp.features.codebase.feature import CodebaseFeature
    from qodeassist_lsp.features.codebase.operations import operations

    feature = CodebaseFeature(services)
    return Feature(
        operations=operations(lambda: feature.service),
        start=feature.start,
        aclose=feature.aclose,
        status=feature.status,
        tools=feature.tools,
        files_changed=feature.files_changed,
        reloaded=feature.reloaded,
        provides=feature,
    )


SPEC: Final = FeatureSpec(
    name="codebase",
    build=build,
    summary="The project index: search_codebase, find_definition, @codebase, codebase/* ops.",
    operations=("search", "definition", "status", "reindex"),
)
"""The codebase feature's row of the feature table."""
