"""The ``[codebase]`` section of ``settings.toml``: the project index and its chat uses.

Declared beside the feature that reads it; the host registers it (``lsp/sections.py``).
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from qodeassist_lsp.config.settings_types import Section, SettingsSection

__all__ = ["CODEBASE_SETTINGS", "CodebaseSettings"]


class CodebaseSettings(Section):
    """``[codebase]``: the index of each workspace folder, ``search_codebase`` and ``@codebase``."""

    enabled: bool = Field(
        default=True,
        description="Index the workspace folders in the background and offer `search_codebase`, "
        "`find_definition` and `@codebase` (`false`: no index, no tools; applies at once).",
    )
    max_file_kb: int = Field(
        default=512, ge=1, le=65536, description="Files larger than this many KiB are not indexed."
    )
    max_files: int = Field(
        default=20000,
        ge=1,
        le=1000000,
        description="At most this many files of one workspace folder are indexed.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Extra gitignore-style patterns of files never indexed, on top of "
        '`.gitignore` and `.qodeassistignore` (e.g. `["vendor/", "*.sql"]`).',
    )
    search_limit: int = Field(
        default=8,
        ge=1,
        le=50,
        description="Snippets a `search_codebase` call or a `codebase/search` request returns "
        "at most (the call may ask for fewer).",
    )
    mention_snippets: int = Field(
        default=5, ge=1, le=30, description="Snippets `@codebase` attaches to a message at most."
    )
    mention_budget_tokens: int = Field(
        default=3000,
        ge=100,
        le=100000,
        description="Estimated tokens (4 characters each) the snippets of `@codebase` may take.",
    )
    update_delay_ms: int = Field(
        default=300,
        ge=0,
        le=10000,
        description="An edited open file is re-indexed once it has been still this long.",
    )


CODEBASE_SETTINGS: Final = SettingsSection("codebase", CodebaseSettings)
"""The ``[codebase]`` section, read as ``settings.section(CODEBASE_SETTINGS)``."""
