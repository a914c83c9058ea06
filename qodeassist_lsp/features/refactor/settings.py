"""The ``[refactor]`` section of ``settings.toml``: quick refactor requests.

Declared beside the feature that reads it; the host registers it (``lsp/sections.py``).
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from qodeassist_lsp.config.settings_types import (
    ConnectTimeout,
    FirstByteTimeout,
    RequestTimeout,
    Section,
    SettingsSection,
)


class RefactorSettings(Section):
    """``[refactor]``: quick refactor requests."""

    lines_before: int = Field(
        default=50, ge=0, le=100000, description="Lines of context before the selection."
    )
    lines_after: int = Field(
        default=30, ge=0, le=100000, description="Lines of context after the selection."
    )
    read_full_file: bool = Field(
        default=False, description="Send the whole file as context (ignores the line limits)."
    )
    use_open_files: bool = Field(
        default=False, description="Add the content of the other open documents to the context."
    )
    default_instruction: str = Field(
        default="Refactor the code to improve its quality and maintainability.",
        min_length=1,
        description="Instruction used when a refactor is requested without one.",
    )
    connect_timeout_s: ConnectTimeout = 10.0
    first_byte_timeout_s: FirstByteTimeout = 120.0
    request_timeout_s: RequestTimeout = 120.0


REFACTOR_SETTINGS: Final = SettingsSection("refactor", RefactorSettings)
"""The ``[refactor]`` section, read as ``settings.section(REFACTOR_SETTINGS)``."""
