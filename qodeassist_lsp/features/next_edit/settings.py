"""The ``[next_edit]`` section of ``settings.toml``: next-edit suggestions.

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

__all__ = ["NEXT_EDIT_SETTINGS", "NextEditSettings"]


class NextEditSettings(Section):
    """``[next_edit]``: next-edit suggestions (``textDocument/copilotInlineEdit``)."""

    enabled: bool = Field(
        default=True,
        description="Answer next-edit requests at all (`false`: every request gets no edits).",
    )
    time_budget_ms: int = Field(
        default=6000,
        ge=100,
        le=120000,
        description="A next-edit request is answered within this many milliseconds; a model "
        "that is later gives no suggestion (its request is cancelled).",
    )
    edit_pause_ms: int = Field(
        default=0,
        ge=0,
        le=10000,
        description="After an edit, compute the next edit once the document has been still "
        "for this many milliseconds, so that the editor's request finds it ready (editors ask "
        "on their own pause too). 0 = only when the editor asks.",
    )
    lines_above: int = Field(
        default=10, ge=0, le=200, description="Lines above the cursor's line the model rewrites."
    )
    lines_below: int = Field(
        default=10, ge=0, le=200, description="Lines below the cursor's line the model rewrites."
    )
    max_snippets: int = Field(
        default=3,
        ge=0,
        le=20,
        description="Snippets of recently viewed or edited other files in the prompt.",
    )
    connect_timeout_s: ConnectTimeout = 5.0
    first_byte_timeout_s: FirstByteTimeout = 60.0
    request_timeout_s: RequestTimeout = 30.0


NEXT_EDIT_SETTINGS: Final = SettingsSection("next_edit", NextEditSettings)
"""The ``[next_edit]`` section, read as ``settings.section(NEXT_EDIT_SETTINGS)``."""
